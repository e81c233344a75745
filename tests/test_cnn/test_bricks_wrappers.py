"""The empty-tensor wrappers: empty batches give empty outputs of the right shape, with grads."""

from unittest import mock

import pytest
import torch
from torch import nn

from mmpar.cnn.bricks import wrappers
from mmpar.cnn.bricks.wrappers import (
    Conv2d,
    Conv3d,
    ConvTranspose2d,
    ConvTranspose3d,
    Linear,
    MaxPool2d,
    MaxPool3d,
    NewEmptyTensorOp,
    obsolete_torch_version,
)


def _conv_out(size, k, p, s, d):
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _deconv_out(size, k, p, s, d, op):
    return (size - 1) * s - 2 * p + (d * (k - 1) + 1) + op


@pytest.mark.parametrize(("k", "p", "s", "d"), [(3, 0, 1, 1), (3, 1, 2, 1), (5, 2, 1, 2)])
def test_conv2d_and_conv3d_on_empty_batches(k, p, s, d):
    for cls, spatial in ((Conv2d, (9, 10)), (Conv3d, (5, 9, 10))):
        layer = cls(2, 3, k, stride=s, padding=p, dilation=d)
        x = torch.randn(0, 2, *spatial, requires_grad=True)
        out = layer(x)
        assert out.shape == (0, 3, *(_conv_out(n, k, p, s, d) for n in spatial))
        out.sum().backward()
        assert x.grad.shape == x.shape
        assert torch.equal(layer.weight.grad, torch.zeros_like(layer.weight))  # DDP sees a grad


@pytest.mark.parametrize(("k", "p", "s", "op"), [(3, 0, 1, 0), (3, 1, 2, 1), (4, 1, 2, 0)])
def test_transposed_convs_on_empty_batches(k, p, s, op):
    for cls, spatial in ((ConvTranspose2d, (4, 5)), (ConvTranspose3d, (3, 4, 5))):
        layer = cls(2, 3, k, stride=s, padding=p, output_padding=op)
        out = layer(torch.randn(0, 2, *spatial))
        assert out.shape == (0, 3, *(_deconv_out(n, k, p, s, 1, op) for n in spatial))


@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pools_on_empty_batches(ceil_mode):
    out2 = MaxPool2d(3, stride=2, padding=1, ceil_mode=ceil_mode)(torch.randn(0, 4, 8, 9))
    ref2 = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=ceil_mode)(torch.randn(1, 4, 8, 9))
    assert out2.shape == (0, *ref2.shape[1:])
    out3 = MaxPool3d(2, ceil_mode=ceil_mode)(torch.randn(0, 4, 3, 5, 5))
    ref3 = nn.MaxPool3d(2, ceil_mode=ceil_mode)(torch.randn(1, 4, 3, 5, 5))
    assert out3.shape == (0, *ref3.shape[1:])


def test_linear_on_empty_batches():
    layer = Linear(5, 3)
    x = torch.randn(0, 5, requires_grad=True)
    out = layer(x)
    assert out.shape == (0, 3)
    out.sum().backward()
    assert torch.equal(layer.weight.grad, torch.zeros(3, 5))


def test_non_empty_inputs_compute_what_torch_computes():
    torch.manual_seed(0)
    pairs = [
        (Conv2d(2, 3, 3), nn.Conv2d(2, 3, 3), torch.randn(2, 2, 5, 5)),
        (
            ConvTranspose2d(2, 3, 3, stride=2),
            nn.ConvTranspose2d(2, 3, 3, stride=2),
            torch.randn(2, 2, 4, 4),
        ),
        (Linear(4, 2), nn.Linear(4, 2), torch.randn(3, 4)),
    ]
    for ours, theirs, x in pairs:
        theirs.load_state_dict(ours.state_dict())
        assert list(ours.state_dict()) == ["weight", "bias"]
        assert torch.allclose(ours(x), theirs(x))
    assert torch.equal(MaxPool2d(2)(pairs[0][2]), nn.MaxPool2d(2)(pairs[0][2]))


def test_new_empty_tensor_op():
    x = torch.randn(0, 3, 4, requires_grad=True)
    out = NewEmptyTensorOp.apply(x, (0, 7))
    assert out.shape == (0, 7)
    out.sum().backward()
    assert x.grad.shape == (0, 3, 4)


def test_obsolete_torch_version():
    assert obsolete_torch_version("parrots", (1, 4))
    assert obsolete_torch_version((1, 4), (1, 4))
    assert obsolete_torch_version((1, 3), (1, 4))
    assert not obsolete_torch_version((1, 5), (1, 4))
    assert isinstance(wrappers.TORCH_VERSION, tuple) and len(wrappers.TORCH_VERSION) == 2
    assert not obsolete_torch_version(wrappers.TORCH_VERSION, (1, 9))


@pytest.mark.parametrize("name", ["ConvTranspose2d", "ConvTranspose3d"])
def test_transposed_conv_passes_output_size_only_when_given(name):
    wrapper_cls = getattr(wrappers, name)
    layer = wrapper_cls(3, 2, 1)
    x = torch.zeros((1, 3) + (4,) * (2 if name.endswith("2d") else 3))
    with mock.patch(f"torch.nn.{name}.forward") as torch_forward:
        layer(x)
        torch_forward.assert_called_with(x)  # as mmcv: the input alone
        layer(x, [4] * (x.dim() - 2))
        torch_forward.assert_called_with(x, [4] * (x.dim() - 2))
