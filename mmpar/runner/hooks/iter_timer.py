"""(being written) hook family: iter_timer."""
