"""(being written) hook family: ema."""
