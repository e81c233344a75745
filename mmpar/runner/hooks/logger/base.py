"""(being written) logger: base."""
