"""(being written) logger: text."""
