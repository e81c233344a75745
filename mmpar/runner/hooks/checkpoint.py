"""(being written) hook family: checkpoint."""
