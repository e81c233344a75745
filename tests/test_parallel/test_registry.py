import torch
from torch import nn

from mmpar.parallel import (
    MODULE_WRAPPERS,
    MMDataParallel,
    MMDistributedDataParallel,
    is_module_wrapper,
)
from mmpar.parallel.utils import model_layout, unwrap_model
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


class _Holder(nn.Module):
    """A model with wrappers inside it: a DataParallel head, a torch.compile'd neck."""

    def __init__(self):
        super().__init__()
        self.head = nn.DataParallel(nn.Linear(2, 2))
        self.neck = torch.compile(nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)))
        self.body = nn.Linear(2, 2)


def test_model_layout_unwraps_every_kind_of_wrapper_once():
    holder = _Holder()
    layout = model_layout(torch.compile(MMDataParallel(holder, device_ids=[-1])))
    assert layout.bare is holder and not layout.sharded
    assert unwrap_model(nn.DataParallel(torch.compile(holder))) is holder
    # the paths of the inner wrappers' modules, without their module./_orig_mod. segments
    assert layout.clean_paths == {
        "head.module": "head",
        "neck._orig_mod": "neck",
        "neck._orig_mod.0": "neck.0",
        "neck._orig_mod.1": "neck.1",
    }
    assert model_layout(nn.Linear(1, 1)).clean_paths == {}


def test_model_layout_honours_a_wrapper_registered_after_import():
    class LateWrapper(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    inner = nn.Linear(1, 1)
    assert model_layout(LateWrapper(inner)).bare is not inner
    MODULE_WRAPPERS.register_module(module=LateWrapper)
    try:
        assert model_layout(LateWrapper(inner)).bare is inner
        assert unwrap_model(LateWrapper(inner)) is inner
    finally:
        MODULE_WRAPPERS.module_dict.pop("LateWrapper")
