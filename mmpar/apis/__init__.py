"""High-level APIs: train a model from a config, test it, predict images (mmcls 0.x names)."""

from .inference import inference_model, init_model
from .test import (
    multi_device_test,
    multi_gpu_test,
    multi_process_test,
    single_device_test,
    single_gpu_test,
)
from .train import train_model, wrap_model

__all__ = [
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
