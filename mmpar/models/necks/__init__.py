"""Necks."""

from .gap import GlobalAveragePooling

__all__ = ["GlobalAveragePooling"]
