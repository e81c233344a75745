"""Test loops beside the runner (mmcv 1.x's ``mmcv.engine``): run a model over a test set.

Same layer as :mod:`mmpar.runner`: the evaluation hooks call these loops, and nothing here
imports datasets, models or apis. ``mmpar.apis`` re-exports the loops at their mmcls path.
"""

from .test import (
    collect_results_cpu,
    collect_results_gpu,
    multi_device_test,
    multi_gpu_test,
    multi_process_test,
    single_device_test,
    single_gpu_test,
)

__all__ = [
    "collect_results_cpu",
    "collect_results_gpu",
    "multi_device_test",
    "multi_gpu_test",
    "multi_process_test",
    "single_device_test",
    "single_gpu_test",
]
