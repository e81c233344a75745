"""(being written) hook family: evaluation."""
