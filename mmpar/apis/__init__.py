"""High-level APIs: train a model from a config, test it, predict images (mmcls 0.x names)."""

from mmpar.engine import __all__ as _engine_all

from .inference import inference_model, init_model
from .test import *  # noqa: F403 (the engine's test loops at their mmcls path)
from .train import build_train_runner, train_model, wrap_model

# The test loops are listed once, in mmpar.engine; mmcls' apis leave out the result collectors.
__all__ = [
    *(name for name in _engine_all if not name.startswith("collect_results")),
    "build_train_runner",
    "inference_model",
    "init_model",
    "train_model",
    "wrap_model",
]
