"""mmpar's version string (kept in its own module so packaging reads it without importing torch)."""

__version__ = "0.1.0"
