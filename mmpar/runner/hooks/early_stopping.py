"""(being written) hook family: early_stopping."""
