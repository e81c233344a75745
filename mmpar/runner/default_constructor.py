"""mmcv's ``mmcv.runner.default_constructor`` path: the runner constructor lives in ``builder``."""

from mmpar.runner.builder import RUNNER_BUILDERS as RUNNER_BUILDERS

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.runner.builder import RUNNERS as RUNNERS

from .builder import DefaultRunnerConstructor

__all__ = ["DefaultRunnerConstructor"]
