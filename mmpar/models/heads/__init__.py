"""Heads."""

from .linear_head import LinearClsHead

__all__ = ["LinearClsHead"]
