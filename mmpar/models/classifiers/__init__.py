"""Classifiers."""

from .image import ImageClassifier, parse_losses

__all__ = ["ImageClassifier", "parse_losses"]
