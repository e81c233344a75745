"""mmpar.device: get_device, scatter to the current device, MPS, and the unsupported backends."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from torch import nn

import mmpar.device._unsupported as unsupported
from mmpar.device import BackendNotSupportedError, get_device, mps, scatter, scatter_kwargs
from mmpar.device import utils as device_utils
from mmpar.device.ipu import (
    IPUBaseRunner,
    IPUDataLoader,
    IPUEpochBasedRunner,
    IPUFp16OptimizerHook,
    IPUIterBasedRunner,
    cfg2options,
    ipu_model_wrapper,
)
from mmpar.device.ipu.hook_wrapper import wrap_lr_updater_hook, wrap_optimizer_hook
from mmpar.device.mlu import MLUDataParallel, MLUDistributedDataParallel
from mmpar.device.mlu import scatter_gather as mlu_scatter
from mmpar.device.npu import NPUDataParallel, NPUDistributedDataParallel
from mmpar.parallel import DataContainer, MMDataParallel, MMDistributedDataParallel, collate
from mmpar.parallel.utils import is_module_wrapper
from mmpar.utils import device_type

FLAGS = ("IS_NPU_AVAILABLE", "IS_CUDA_AVAILABLE", "IS_MLU_AVAILABLE", "IS_MPS_AVAILABLE")


@pytest.mark.parametrize(
    ("available", "expected"),
    [
        ((), "cpu"),
        (("IS_MPS_AVAILABLE",), "mps"),
        (("IS_MLU_AVAILABLE", "IS_MPS_AVAILABLE"), "mlu"),
        (("IS_CUDA_AVAILABLE", "IS_MLU_AVAILABLE"), "cuda"),
        # torch_npu answers the CUDA checks for the NPU, so the NPU is asked first.
        (("IS_NPU_AVAILABLE", "IS_CUDA_AVAILABLE"), "npu"),
    ],
)
def test_get_device_follows_mmcvs_order(monkeypatch, available, expected):
    for flag in FLAGS:
        monkeypatch.setattr(device_utils, flag, flag in available)
    assert get_device() == expected


def test_get_device_uses_mmpar_utils_flags():
    # One implementation: the flags are mmpar.utils's (hence device_type's) values.
    assert device_utils.IS_MPS_AVAILABLE is device_type.IS_MPS_AVAILABLE
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    if not (device_type.IS_NPU_AVAILABLE or device_type.IS_MLU_AVAILABLE):
        if expected == "cpu" and device_type.IS_MPS_AVAILABLE:
            expected = "mps"
        assert get_device() == expected


def _batch():
    samples = [
        {
            "img": DataContainer(torch.full((3,), float(i)), stack=True, pad_dims=None),
            "meta": DataContainer({"id": i}, cpu_only=True),
        }
        for i in range(4)
    ]
    return collate(samples, samples_per_gpu=4)


def test_scatter_to_the_cpu_keeps_datacontainer_chunks():
    batch = _batch()
    (out,) = scatter(batch, [-1])
    assert out["img"].shape == (4, 3) and out["img"].device.type == "cpu"
    assert out["meta"] == [{"id": i} for i in range(4)]


def test_scatter_kwargs_moves_to_get_device_and_pads(monkeypatch):
    monkeypatch.setattr("mmpar.device.scatter_gather.get_device", lambda: "cpu")
    inputs, kwargs = scatter_kwargs((torch.ones(2, 2),), {"flag": True}, [0])
    assert len(inputs) == len(kwargs) == 1
    assert torch.equal(inputs[0][0], torch.ones(2, 2)) and kwargs[0] == {"flag": True}
    inputs, kwargs = scatter_kwargs((), {"flag": True}, [-1])
    assert inputs == ((),) and kwargs == ({"flag": True},)


def test_scatter_accepts_mmcvs_deprecated_target_mlus_name():
    with pytest.warns(DeprecationWarning, match="target_mlus"):
        out = scatter(torch.ones(2), target_mlus=[-1])
    assert torch.equal(out[0], torch.ones(2))


class _Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def train_step(self, data, optimizer=None):
        loss = self.fc(data["img"]).sum()
        return {"loss": loss, "num_samples": data["img"].shape[0], "ids": data["meta"]}


def test_mps_data_parallel_fails_clearly_without_mps(monkeypatch):
    monkeypatch.setattr(device_type, "is_mps_available", lambda: False)
    with pytest.raises(RuntimeError, match=r"torch's MPS backend.*MMDataParallel"):
        mps.MPSDataParallel(_Model())


@pytest.fixture
def mps_wrapper(monkeypatch):
    """An MPSDataParallel built as on a Mac (the availability check says yes)."""
    monkeypatch.setattr(device_type, "is_mps_available", lambda: True)
    return mps.MPSDataParallel(_Model(), dim=0, device_ids=[3])


def test_mps_data_parallel_is_an_mmdataparallel_on_mps(mps_wrapper):
    assert isinstance(mps_wrapper, MMDataParallel) and is_module_wrapper(mps_wrapper)
    assert mps_wrapper.device_ids == [0]
    assert mps_wrapper.src_device_obj == torch.device("mps", 0)
    assert mps_wrapper.dim == 0


def test_mps_data_parallel_takes_mmdataparallels_arguments(monkeypatch):
    monkeypatch.setattr(device_type, "is_mps_available", lambda: True)
    model = _Model()
    # mmcls: mps.MPSDataParallel(model.to('mps'), dim=dim, *args, **kwargs)
    assert mps.MPSDataParallel(model, [0], None, dim=1).dim == 1
    assert mps.MPSDataParallel(module=model, output_device=0).module is model
    with pytest.raises(TypeError, match="missing the module"):
        mps.MPSDataParallel(dim=0)
    with pytest.raises(TypeError, match="unexpected keyword"):
        mps.MPSDataParallel(model, find_unused_parameters=True)
    with pytest.raises(TypeError):
        mps.MPSDataParallel(model, device_ids=[0], module=model)


def test_mps_data_parallel_copies_the_batch_to_mps(monkeypatch, mps_wrapper):
    seen = []

    def fake_scatter_kwargs(inputs, kwargs, targets, dim=0):
        seen.append(targets)
        return (inputs,), (kwargs or {},)

    monkeypatch.setattr("mmpar.device.mps.data_parallel.scatter_kwargs", fake_scatter_kwargs)
    mps_wrapper.scatter(({"x": torch.ones(1)},), {}, [0])
    assert seen == [[torch.device("mps", 0)]]


def test_mps_data_parallel_runs_train_step_on_its_device(mps_wrapper):
    # No MPS here: point the wrapper at the CPU to run the whole step (merge chunks, scatter,
    # call the model) as it runs on a Mac.
    mps_wrapper.src_device_obj = torch.device("cpu")
    out = mps_wrapper.train_step(_batch(), None)
    assert out["num_samples"] == 4 and out["ids"] == [{"id": i} for i in range(4)]
    out["loss"].backward()
    assert mps_wrapper.module.fc.weight.grad is not None


def _assert_clear(info, name, library):
    message = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert name in message and library in message
    assert "mmpar does not ship" in message and "instead" in message


@pytest.mark.parametrize(
    ("cls", "base", "library"),
    [
        (NPUDataParallel, MMDataParallel, "torch_npu"),
        (NPUDistributedDataParallel, MMDistributedDataParallel, "torch_npu"),
        (MLUDataParallel, MMDataParallel, "torch_mlu"),
        (MLUDistributedDataParallel, MMDistributedDataParallel, "torch_mlu"),
    ],
)
def test_npu_mlu_wrappers_import_and_fail_clearly_when_built(cls, base, library):
    assert issubclass(cls, base)
    with pytest.raises(BackendNotSupportedError) as info:
        cls(_Model(), dim=0)
    _assert_clear(info, cls.__name__, library)
    if importlib.util.find_spec(library) is None:
        assert "not installed" in str(info.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: IPUBaseRunner(_Model()),
        lambda: IPUEpochBasedRunner(_Model(), max_epochs=1),
        lambda: IPUIterBasedRunner(_Model(), max_iters=1),
        lambda: IPUFp16OptimizerHook(loss_scale=512.0, distributed=False),
        lambda: IPUDataLoader([1, 2], None, batch_size=2),
        lambda: cfg2options({}),
        lambda: ipu_model_wrapper(_Model(), {}),
        lambda: wrap_lr_updater_hook(object),
        lambda: wrap_optimizer_hook(object),
    ],
)
def test_ipu_names_import_and_fail_clearly_when_used(call):
    with pytest.raises(BackendNotSupportedError) as info:
        call()
    _assert_clear(info, "", "poptorch")


def test_error_says_when_the_vendor_library_is_installed(monkeypatch):
    monkeypatch.setattr(unsupported.importlib.util, "find_spec", lambda name: object())
    with pytest.raises(BackendNotSupportedError, match="torch_npu is installed, but mmpar has no"):
        NPUDataParallel(_Model())


def test_mlu_scatter_works_for_the_cpu_and_refuses_mlu_targets():
    inputs, kwargs = mlu_scatter.scatter_kwargs((torch.ones(2),), None, [-1])
    assert torch.equal(inputs[0][0], torch.ones(2)) and kwargs == ({},)
    with pytest.raises(BackendNotSupportedError, match="torch_mlu"):
        mlu_scatter.scatter(torch.ones(2), [0])
