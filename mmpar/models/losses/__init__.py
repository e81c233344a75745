"""Losses and training metrics."""

from .accuracy import accuracy
from .cross_entropy import CrossEntropyLoss

__all__ = ["CrossEntropyLoss", "accuracy"]
