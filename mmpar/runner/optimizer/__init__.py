"""Optimizer registries, builder and the default (param-wise) constructor."""

from .builder import (
    OPTIMIZER_BUILDERS,
    OPTIMIZERS,
    build_optimizer,
    build_optimizer_constructor,
)
from .default_constructor import DefaultOptimizerConstructor

__all__ = [
    "OPTIMIZERS",
    "OPTIMIZER_BUILDERS",
    "DefaultOptimizerConstructor",
    "build_optimizer",
    "build_optimizer_constructor",
]
