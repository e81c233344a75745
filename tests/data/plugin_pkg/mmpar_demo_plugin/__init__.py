"""A demo mmpar plugin package (used by tests/test_utils/test_plugins.py and docs/plugins.md)."""
