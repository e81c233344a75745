from torch import nn

from mmpar.parallel import (
    MODULE_WRAPPERS,
    MMDataParallel,
    MMDistributedDataParallel,
    is_module_wrapper,
)
from mmpar.utils.registry import Registry


def test_module_wrappers_registry():
    for name in (
        "DataParallel",
        "DistributedDataParallel",
        "MMDataParallel",
        "MMDistributedDataParallel",
    ):
        assert name in MODULE_WRAPPERS.module_dict
    assert MODULE_WRAPPERS.get("MMDistributedDataParallel") is MMDistributedDataParallel
    model = nn.Linear(1, 1)
    assert not is_module_wrapper(model)
    assert is_module_wrapper(MMDataParallel(model, device_ids=[-1]))
    assert is_module_wrapper(nn.DataParallel(model))


def test_is_module_wrapper_checks_child_registries():
    child = Registry("module wrapper", parent=MODULE_WRAPPERS, scope="downstream_test")
    try:

        @child.register_module()
        class MyWrapper(nn.Module):
            def __init__(self, module):
                super().__init__()
                self.module = module

        assert is_module_wrapper(MyWrapper(nn.Linear(1, 1)))
    finally:
        MODULE_WRAPPERS.children.pop("downstream_test")
    assert not is_module_wrapper(MyWrapper(nn.Linear(1, 1)))


def test_is_module_wrapper_has_one_definition_at_mmcv_paths():
    import mmpar.parallel.registry as registry
    from mmpar.parallel import is_module_wrapper as from_package
    from mmpar.parallel.utils import is_module_wrapper as from_utils

    assert from_package is from_utils
    assert from_utils.__module__ == "mmpar.parallel.utils"
    assert not hasattr(registry, "is_module_wrapper")  # mmcv's registry module has none
