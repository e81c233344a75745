"""The engine's test loops: one object behind the mmcv, mmcls and mmpar names."""

import mmpar.apis
import mmpar.apis.test
import mmpar.engine
import mmpar.engine.test
from mmpar.engine import collect_results_cpu, collect_results_gpu


def test_apis_names_are_the_engine_loops():
    for name in [
        "single_device_test",
        "multi_device_test",
        "multi_process_test",
        "single_gpu_test",
        "multi_gpu_test",
    ]:
        loop = getattr(mmpar.engine.test, name)
        assert getattr(mmpar.engine, name) is loop
        assert getattr(mmpar.apis, name) is loop
        assert getattr(mmpar.apis.test, name) is loop
    assert mmpar.engine.single_gpu_test is mmpar.engine.single_device_test
    assert mmpar.engine.multi_gpu_test is mmpar.engine.multi_device_test


def test_mmcv_collect_results_without_a_process_group():
    # One process holds every result: dataset order, the sampler's padding dropped.
    assert collect_results_cpu(["a", "b", "c", "a"], 3, tmpdir="/unused") == ["a", "b", "c"]
    assert collect_results_gpu([1, 2, 3], 2) == [1, 2]
