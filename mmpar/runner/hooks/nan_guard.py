"""(being written) hook family: nan_guard."""
