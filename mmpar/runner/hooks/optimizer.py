"""(being written) hook family: optimizer."""
