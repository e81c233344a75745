"""Sparse convolution, pooling and containers against dense PyTorch convolutions.

mmcv-full's CPU build has no sparse-convolution dispatch (its rulebook raises "not implemented on
CPU"), so the reference is the mathematics itself: a sparse convolution equals the dense one on
the densified map, read at the active output sites.
"""

from collections import OrderedDict

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mmpar.cnn import CONV_LAYERS
from mmpar.ops import (
    SparseConv2d,
    SparseConv3d,
    SparseConvTensor,
    SparseConvTranspose3d,
    SparseInverseConv3d,
    SparseMaxPool3d,
    SparseSequential,
    SubMConv2d,
    SubMConv3d,
    scatter_nd,
)
from mmpar.ops.sparse_functional import indice_conv, indice_maxpool, indice_subm_conv
from mmpar.ops.sparse_ops import get_indice_pairs

SHAPE = [6, 7, 5]


def _tensor(batch=2, channels=3, shape=SHAPE, density=0.3, seed=0, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    mask = torch.rand(batch, *shape, generator=gen) < density
    indices = mask.nonzero().int()
    feats = torch.randn(len(indices), channels, generator=gen, dtype=dtype)
    return SparseConvTensor(feats, indices, shape, batch), mask


def _at(dense, indices):
    """Rows of a dense (B, C, *spatial) map at (batch, *spatial) indices."""
    return dense.movedim(1, -1)[tuple(indices.long().t())]


def _dense_weight(weight):
    """mmcv's (*k, in, out) weight as torch's conv weight (out, in, *k)."""
    return weight.movedim(-1, 0).movedim(-1, 1)


def test_subm_conv_equals_dense_conv_at_the_input_sites():
    x, _ = _tensor()
    layer = SubMConv3d(3, 4, 3, indice_key="s").double()
    y = layer(x)
    ref = F.conv3d(x.dense(), _dense_weight(layer.weight), layer.bias, padding=1)
    assert torch.equal(y.indices, x.indices) and y.spatial_shape == SHAPE
    torch.testing.assert_close(y.features, _at(ref, x.indices), rtol=0, atol=1e-12)


def test_strided_conv_sites_and_values_equal_dense_conv():
    x, mask = _tensor()
    layer = SparseConv3d(3, 4, 3, stride=2, padding=1).double()
    y = layer(x)
    ref = F.conv3d(x.dense(), _dense_weight(layer.weight), layer.bias, stride=2, padding=1)
    ones = torch.ones(1, 1, 3, 3, 3, dtype=torch.float64)
    active = F.conv3d(mask[:, None].double(), ones, stride=2, padding=1)[:, 0] > 0
    assert y.spatial_shape == list(ref.shape[2:])
    # Output sites in sorted (batch, z, y, x) order, int32, as mmcv's CUDA rulebook.
    assert y.indices.dtype == torch.int32 and torch.equal(y.indices.long(), active.nonzero())
    torch.testing.assert_close(y.features, _at(ref, y.indices), rtol=0, atol=1e-12)


def test_transposed_and_inverse_conv_equal_dense_transposed_conv():
    x, _ = _tensor()
    up = SparseConvTranspose3d(3, 2, 3, stride=2, padding=1).double()
    y = up(x)
    ref = F.conv_transpose3d(x.dense(), up.weight.movedim(-2, 0).movedim(-1, 1), up.bias, 2, 1)
    assert y.spatial_shape == list(ref.shape[2:])
    torch.testing.assert_close(y.features, _at(ref, y.indices), rtol=0, atol=1e-12)

    down = SparseConv3d(3, 4, 3, stride=2, padding=1, indice_key="d").double()
    inverse = SparseInverseConv3d(4, 2, 3, indice_key="d").double()
    z = inverse(down(x))
    mid = down(x).dense()
    ref = F.conv_transpose3d(
        mid, inverse.weight.movedim(-2, 0).movedim(-1, 1), inverse.bias, 2, 1, output_padding=1
    )
    assert torch.equal(z.indices, x.indices) and z.spatial_shape == SHAPE
    torch.testing.assert_close(z.features, _at(ref, x.indices), rtol=0, atol=1e-12)


def test_2d_layers_and_max_pool():
    x, _ = _tensor(shape=[9, 8], density=0.4)
    layer = SubMConv2d(3, 2, (3, 1), bias=False).double()
    ref = F.conv2d(x.dense(), _dense_weight(layer.weight), padding=(1, 0))
    torch.testing.assert_close(layer(x).features, _at(ref, x.indices), rtol=0, atol=1e-12)
    conv = SparseConv2d(3, 2, 2, stride=2).double()
    ref = F.conv2d(x.dense(), _dense_weight(conv.weight), conv.bias, stride=2)
    out = conv(x)
    torch.testing.assert_close(out.features, _at(ref, out.indices), rtol=0, atol=1e-12)

    x3, _ = _tensor(density=0.5)
    pooled = SparseMaxPool3d(2, 2)(x3)
    # mmcv's kernel starts each output at 0; inactive sites are 0 in the dense map too.
    ref = F.max_pool3d(x3.dense(), 2, 2).clamp(min=0)
    torch.testing.assert_close(pooled.features, _at(ref, pooled.indices), rtol=0, atol=0)


def test_gradients_gradcheck():
    x, _ = _tensor(batch=1, channels=1, shape=[4, 3, 3], density=0.4)
    feats = x.features.clone().requires_grad_(True)
    outids, pairs, num = get_indice_pairs(x.indices, 1, [4, 3, 3], 2, 2)
    weight = torch.randn(2, 2, 2, 1, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda f, w: indice_conv(f, w, pairs, num, len(outids)), (feats, weight)
    )
    _, pairs, num = get_indice_pairs(x.indices, 1, [4, 3, 3], 3, subm=True)
    weight = torch.randn(3, 3, 3, 1, 1, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda f, w: indice_subm_conv(f, w, pairs, num, len(feats)), (feats, weight)
    )
    outids, pairs, num = get_indice_pairs(x.indices, 1, [4, 3, 3], 2, 2)
    assert torch.autograd.gradcheck(lambda f: indice_maxpool(f, pairs, num, len(outids)), (feats,))


def test_rulebook_layout_is_mmcvs():
    indices = torch.tensor([[0, 0, 0], [0, 0, 1], [1, 2, 2]], dtype=torch.int32)
    outids, pairs, num = get_indice_pairs(indices, 2, [3, 3], 3, 1, 1, subm=True)
    assert pairs.shape == (9, 2, 3) and pairs.dtype == num.dtype == torch.int32
    assert torch.equal(outids, indices)
    # Centre offset (4): every site to itself; offset 5 (tap +1 in x): site 0 reads site 1,
    # so input row 1 feeds output row 0.
    assert pairs[4].tolist() == [[0, 1, 2], [0, 1, 2]]
    assert pairs[5].tolist() == [[1, -1, -1], [0, -1, -1]] and num[5] == 1
    assert num.tolist() == [0, 0, 0, 1, 3, 1, 0, 0, 0]


def test_sequential_with_batchnorm_relu_trains_and_fuses():
    x, _ = _tensor(dtype=torch.float32)
    net = SparseSequential(
        OrderedDict(
            conv=SubMConv3d(3, 4, 3, bias=False, indice_key="a"),
            bn=nn.BatchNorm1d(4),
            relu=nn.ReLU(),
            down=SparseConv3d(4, 4, 3, stride=2, padding=1),
        )
    )
    out = net(x)
    out.features.sum().backward()
    assert net.conv.weight.grad.abs().sum() > 0 and set(net.sparity_dict) == {"conv", "down"}
    assert len(net) == 4 and net[-1] is net.down and "a" in out.indice_dict
    net.eval()
    x2, _ = _tensor(dtype=torch.float32)
    fused = net.fused()
    assert len(fused) == 3 and fused[0].fused_bn
    torch.testing.assert_close(fused(x2).features, net(_tensor(dtype=torch.float32)[0]).features)


def test_state_dict_has_mmcvs_names_and_weight_layout():
    layer = SubMConv3d(16, 32, 3, indice_key="subm1")
    assert {k: tuple(v.shape) for k, v in layer.state_dict().items()} == {
        "weight": (3, 3, 3, 16, 32),
        "bias": (32,),
    }
    inverse = SparseInverseConv3d(8, 4, (1, 3, 3), indice_key="k", bias=False)
    assert list(inverse.state_dict()) == ["weight"] and inverse.weight.shape == (1, 3, 3, 8, 4)
    assert CONV_LAYERS.get("SubMConv3d") is SubMConv3d
    built = CONV_LAYERS.build(
        dict(type="SparseConv3d", in_channels=2, out_channels=3, kernel_size=3)
    )
    assert isinstance(built, SparseConv3d) and built.weight.shape == (3, 3, 3, 2, 3)


def test_scatter_nd_and_dense():
    indices = torch.tensor([[0, 1], [2, 0]])
    out = scatter_nd(indices, torch.tensor([[1.0, 2.0], [3.0, 4.0]]), [3, 2, 2])
    assert out[0, 1].tolist() == [1.0, 2.0] and out[2, 0].tolist() == [3.0, 4.0]
    assert out.sum() == 10
    x, mask = _tensor()
    assert torch.equal(x.dense()[:, 0] != 0, mask)
    assert x.dense(channels_first=False).shape == (2, *SHAPE, 3)
    with pytest.raises(IndexError, match="scatter_nd"):
        scatter_nd(torch.tensor([[3, 0]]), torch.ones(1, 2), [3, 2, 2])


def test_bad_input():
    x, _ = _tensor()
    x.indices[0, 1] = SHAPE[0]
    with pytest.raises(ValueError, match="outside"):
        SubMConv3d(3, 4, 3)(x)
    x, _ = _tensor()
    with pytest.raises(ValueError, match=r"features must be \(N, 5\)"):
        SubMConv3d(5, 4, 3)(x)
    with pytest.raises(AssertionError, match="indice_key"):
        SparseInverseConv3d(3, 4, 3, indice_key="missing")(x)
    with pytest.raises(AssertionError, match="SparseConvTensor"):
        SubMConv3d(3, 4, 3)(x.features)
    with pytest.raises(ValueError, match="3-D"):
        SubMConv3d(3, 4, 3)(_tensor(shape=[5, 5])[0])
