"""auto_fp16 / force_fp32 on torch.autocast, wrap_fp16_model, cast helpers and LossScaler."""

from collections import OrderedDict, namedtuple

import pytest
import torch
import torch.nn as nn

from mmpar.runner import LossScaler, auto_fp16, force_fp32, wrap_fp16_model
from mmpar.runner.fp16_utils import (
    autocast_dtype,
    cast_tensor_type,
    patch_forward_method,
    patch_norm_fp32,
)

Pair = namedtuple("Pair", "a b")


def test_cast_tensor_type_converts_only_the_source_dtype_in_nested_inputs():
    inputs = OrderedDict(
        x=torch.ones(2),
        idx=torch.arange(2),
        nested=[torch.ones(1), ("text", Pair(torch.ones(1), 3))],
    )
    out = cast_tensor_type(inputs, torch.float32, torch.float16)
    assert type(out) is OrderedDict
    assert out["x"].dtype == torch.float16 and out["idx"].dtype == torch.int64
    assert out["nested"][0].dtype == torch.float16 and out["nested"][1][0] == "text"
    assert isinstance(out["nested"][1][1], Pair) and out["nested"][1][1].b == 3
    assert out["nested"][1][1].a.dtype == torch.float16
    assert inputs["x"].dtype == torch.float32  # the input is not modified
    module = nn.Linear(1, 1)
    assert cast_tensor_type(module, torch.float32, torch.float16) is module


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fp16_enabled = False
        self.fc = nn.Linear(4, 4)
        self.seen = {}

    @auto_fp16(apply_to=("x",))
    def forward(self, x, y):
        self.seen["forward"] = (x.dtype, y.dtype, torch.is_autocast_enabled(x.device.type))
        out = self.fc(x)
        return out, self.loss(out, y)

    @auto_fp16(out_fp32=True)
    def forward_fp32_out(self, x):
        return self.fc(x)

    @force_fp32(apply_to=("pred",))
    def loss(self, pred, target):
        self.seen["loss"] = (pred.dtype, torch.is_autocast_enabled(pred.device.type))
        return ((pred - target) ** 2).mean()

    @force_fp32(out_fp16=True)
    def scores(self, pred):
        return pred.softmax(-1)


def test_decorators_do_nothing_until_fp16_is_enabled():
    net = Net()
    x, y = torch.randn(2, 4), torch.randn(2, 4)
    out, loss = net(x, y)
    assert out.dtype == torch.float32 and loss.dtype == torch.float32
    assert net.seen["forward"] == (torch.float32, torch.float32, False)
    assert net.scores(out).dtype == torch.float32


def test_auto_fp16_runs_in_low_precision_and_force_fp32_in_float32_on_cpu():
    net = Net()
    wrap_fp16_model(net)
    assert net.fp16_enabled and net.fc.weight.dtype == torch.float32  # not cast to half
    low = autocast_dtype("cpu")
    assert low == torch.bfloat16
    x, y = torch.randn(2, 4), torch.randn(2, 4)
    out, loss = net(x, y)
    # x is cast (apply_to), y is not; the body runs under CPU autocast.
    assert net.seen["forward"] == (low, torch.float32, True)
    assert out.dtype == low
    # force_fp32: low-precision pred back to float32, autocast off inside.
    assert net.seen["loss"] == (torch.float32, False)
    assert loss.dtype == torch.float32
    assert net.forward_fp32_out(x).dtype == torch.float32
    assert net.scores(out).dtype == low  # out_fp16: the device's low-precision dtype
    assert not torch.is_autocast_enabled("cpu")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_auto_fp16_uses_float16_on_cuda():
    net = Net().cuda()
    wrap_fp16_model(net)
    out, loss = net(torch.randn(2, 4, device="cuda"), torch.randn(2, 4, device="cuda"))
    assert out.dtype == torch.float16 and loss.dtype == torch.float32
    assert net.seen["forward"][0] == torch.float16


class NotAModule:
    fp16_enabled = True

    @auto_fp16()
    def forward(self, x):
        return x

    @force_fp32()
    def loss(self, x):
        return x


def test_decorating_methods_of_unsupported_classes_raises_type_error():
    with pytest.raises(TypeError, match="auto_fp16"):
        NotAModule().forward(torch.ones(1))
    with pytest.raises(TypeError, match="force_fp32"):
        NotAModule().loss(torch.ones(1))

    class Allowed:
        fp16_enabled = True

        @auto_fp16(supported_types=(object,))
        def forward(self, x):
            return x

    assert Allowed().forward(torch.ones(1)).dtype == torch.bfloat16


def test_wrap_fp16_model_sets_the_flag_only_where_declared():
    model = nn.Sequential(Net(), nn.Linear(2, 2))
    wrap_fp16_model(model)
    assert model[0].fp16_enabled is True
    assert not hasattr(model[1], "fp16_enabled")


def test_patch_norm_fp32_keeps_norms_in_float32_for_a_half_model():
    model = nn.Sequential(nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4), nn.GroupNorm(2, 4)).half()
    patch_norm_fp32(model)
    assert model[0].weight.dtype == torch.float16
    assert model[1].weight.dtype == torch.float32 and model[2].weight.dtype == torch.float32
    out = model[2](torch.randn(1, 4, 2, 2, dtype=torch.float16))
    assert out.dtype == torch.float16  # computed in float32, handed back in half

    seen = []
    patched = patch_forward_method(
        lambda t: seen.append(t.dtype) or t, torch.float16, torch.float32, convert_output=False
    )
    assert patched(torch.ones(1, dtype=torch.float16)).dtype == torch.float32
    assert seen == [torch.float32]


def _params_with_grad(value):
    p = nn.Parameter(torch.ones(2))
    p.grad = torch.tensor([1.0, value])
    return [p]


def test_loss_scaler_halves_on_overflow_and_grows_after_a_clean_window():
    scaler = LossScaler(init_scale=2.0**10, scale_window=3)
    assert scaler.loss_scale == 1024
    assert scaler.has_overflow(_params_with_grad(float("inf")))
    assert scaler.has_overflow(_params_with_grad(float("nan")))
    assert not scaler.has_overflow(_params_with_grad(1.0))
    scaler.update_scale(True)
    assert scaler.loss_scale == 512
    for _ in range(2):
        scaler.update_scale(False)
        assert scaler.loss_scale == 512
    scaler.update_scale(False)  # third clean step after the overflow
    assert scaler.loss_scale == 1024
    low = LossScaler(init_scale=1.0)
    low.update_scale(True)
    assert low.loss_scale == 1  # never below 1


def test_loss_scaler_static_mode_and_state_dict():
    static = LossScaler(init_scale=512.0, mode="static", scale_window=1)
    assert not static.has_overflow(_params_with_grad(float("inf")))
    static.update_scale(True)
    static.update_scale(False)
    assert static.loss_scale == 512.0
    dynamic = LossScaler(scale_window=2)
    dynamic.update_scale(False)
    dynamic.update_scale(False)
    restored = LossScaler()
    restored.load_state_dict(dynamic.state_dict())
    assert restored.state_dict() == dynamic.state_dict()
    assert restored.loss_scale == 2.0**33 and restored.cur_iter == 2
    with pytest.raises(AssertionError, match="dynamic"):
        LossScaler(mode="auto")
