"""Exact resume.

The runner state a checkpoint carries, the run identity that picks what
auto-resume continues, and the train loader's position.
"""
