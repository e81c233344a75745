"""High-level APIs: train a model from a config, test it, predict images (mmcls 0.x names)."""

from .inference import inference_model, init_model
from .test import (
    multi_device_test,
    multi_gpu_test,
    multi_process_test,
    single_device_test,
    single_gpu_test,
)
from .train import build_train_runner, train_model, wrap_model

__all__ = [
    "build_train_runner",
    "inference_model",
    "init_model",
    "multi_device_test",
    "multi_gpu_test",
    "multi_process_test",
    "single_device_test",
    "single_gpu_test",
    "train_model",
    "wrap_model",
]
