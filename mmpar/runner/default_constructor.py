"""mmcv's ``mmcv.runner.default_constructor`` path: the runner constructor lives in ``builder``."""

from .builder import DefaultRunnerConstructor

__all__ = ["DefaultRunnerConstructor"]
