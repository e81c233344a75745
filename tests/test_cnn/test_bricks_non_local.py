"""NonLocal1d/2d/3d: keys (mmcv's), modes against a direct computation, init, sub-sampling."""

import pytest
import torch
from torch import nn

from mmpar.cnn.bricks import NonLocal1d, NonLocal2d, NonLocal3d

CONV = ["conv.weight", "conv.bias"]


def _keys(module):
    return list(module.state_dict())


def test_state_dict_keys():
    assert _keys(NonLocal2d(8)) == [
        *(f"g.{k}" for k in CONV),
        *(f"conv_out.{k}" for k in CONV),
        *(f"theta.{k}" for k in CONV),
        *(f"phi.{k}" for k in CONV),
    ]
    bn = ["bn.weight", "bn.bias", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert _keys(NonLocal2d(8, sub_sample=True, norm_cfg=dict(type="BN"))) == [
        *(f"g.0.{k}" for k in CONV),
        "conv_out.conv.weight",
        *(f"conv_out.{k}" for k in bn),
        *(f"theta.{k}" for k in CONV),
        *(f"phi.0.{k}" for k in CONV),
    ]
    assert _keys(NonLocal2d(8, sub_sample=True, mode="gaussian")) == [
        *(f"g.0.{k}" for k in CONV),
        *(f"conv_out.{k}" for k in CONV),
    ]
    assert _keys(NonLocal2d(8, mode="concatenation"))[-1] == "concat_project.conv.weight"


def test_attributes_and_conv_dimensions():
    block = NonLocal2d(8, reduction=4)
    assert (block.inter_channels, block.use_scale, block.mode) == (2, True, "embedded_gaussian")
    assert NonLocal2d(1).inter_channels == 1  # at least one channel
    assert NonLocal2d._abbr_ == "nonlocal_block"
    assert isinstance(NonLocal1d(4).g.conv, nn.Conv1d)
    assert isinstance(NonLocal3d(4).g.conv, nn.Conv3d)
    assert isinstance(NonLocal2d(4).g.conv, nn.Conv2d)
    with pytest.raises(ValueError, match="Mode"):
        NonLocal2d(4, mode="cosine")


def test_zero_init_makes_the_identity_and_normal_init_sets_std():
    x = torch.randn(2, 4, 3, 3)
    assert torch.allclose(NonLocal2d(4)(x), x)
    with_norm = NonLocal2d(4, norm_cfg=dict(type="BN"))
    assert torch.equal(with_norm.conv_out.bn.weight, torch.zeros(4))
    torch.manual_seed(0)
    big = NonLocal2d(256, std=0.5, zeros_init=False)
    for conv in (big.g.conv, big.theta.conv, big.phi.conv, big.conv_out.conv):
        assert conv.weight.std().item() == pytest.approx(0.5, rel=0.05)
        assert torch.equal(conv.bias, torch.zeros_like(conv.bias))


def _reference(block, x):
    """The block's output from its definition, with no reshaping tricks."""
    n, c = x.shape[:2]
    g = block.g(x).flatten(2)  # [N, C', P]
    if block.mode == "gaussian":
        theta, phi = x.flatten(2), x.flatten(2)
    else:
        theta, phi = block.theta(x).flatten(2), block.phi(x).flatten(2)
    if block.mode == "concatenation":
        p, q = theta.shape[2], phi.shape[2]
        pairs = torch.cat(
            [theta.unsqueeze(3).expand(-1, -1, p, q), phi.unsqueeze(2).expand(-1, -1, p, q)], 1
        )
        affinity = block.concat_project(pairs).squeeze(1) / q
    else:
        dots = torch.einsum("ncp,ncq->npq", theta, phi)
        if block.mode == "gaussian":
            affinity = dots.softmax(-1)
        elif block.mode == "embedded_gaussian":
            affinity = (dots / theta.shape[1] ** 0.5).softmax(-1)
        else:
            affinity = dots / dots.shape[-1]
    y = torch.einsum("npq,ncq->ncp", affinity, g).reshape(n, -1, *x.shape[2:])
    return x + block.conv_out(y)


@pytest.mark.parametrize("mode", ["gaussian", "embedded_gaussian", "dot_product", "concatenation"])
def test_modes_match_their_definitions(mode):
    torch.manual_seed(0)
    block = NonLocal2d(4, mode=mode, zeros_init=False, std=0.3)
    x = torch.randn(2, 4, 3, 4)
    assert torch.allclose(block(x), _reference(block, x), atol=1e-5)
    if mode == "embedded_gaussian":
        block.use_scale = False
        unscaled = block(x)
        block.use_scale = True
        assert not torch.allclose(unscaled, block(x))


@pytest.mark.parametrize("mode", ["gaussian", "embedded_gaussian", "dot_product", "concatenation"])
@pytest.mark.parametrize(
    ("cls", "shape", "pool"),
    [
        (NonLocal1d, (2, 4, 6), nn.MaxPool1d),
        (NonLocal2d, (2, 4, 4, 6), nn.MaxPool2d),
        (NonLocal3d, (2, 4, 2, 4, 6), nn.MaxPool3d),
    ],
)
def test_sub_sampling_pools_keys_and_values(cls, shape, pool, mode):
    torch.manual_seed(0)
    block = cls(4, sub_sample=True, mode=mode, zeros_init=False)
    assert block.sub_sample
    assert isinstance(block.g, nn.Sequential) and isinstance(block.g[1], pool)
    if mode == "gaussian":
        assert isinstance(block.phi, pool)
    else:
        assert isinstance(block.phi[1], pool)
    x = torch.randn(shape)
    out = block(x)
    assert out.shape == x.shape
    out.sum().backward()
    assert block.conv_out.conv.weight.grad is not None


def test_3d_sub_sampling_keeps_time():
    block = NonLocal3d(4, sub_sample=True)
    assert block.g[1].kernel_size == (1, 2, 2)
    assert block.g(torch.randn(1, 4, 3, 4, 4)).shape == (1, 2, 3, 2, 2)
