"""The test loops at their mmcls path (``mmpar.apis.test``); they live in :mod:`mmpar.engine`.

``single_device_test``, ``multi_device_test``, ``multi_process_test``, their mmcv names
``single_gpu_test`` / ``multi_gpu_test`` and mmcv's ``collect_results_cpu`` /
``collect_results_gpu``: every name of ``mmpar.engine.__all__``.
"""

from mmpar.engine import *  # noqa: F403 - a re-export shim of the engine package's names
