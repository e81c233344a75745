"""build_norm_layer's names, arguments and errors; infer_abbr's rules; is_norm."""

import pytest
import torch
from torch import nn

from mmpar.cnn.bricks import NORM_LAYERS, build_norm_layer, is_norm
from mmpar.cnn.bricks.norm import infer_abbr


@pytest.mark.parametrize(
    ("cfg", "postfix", "name", "cls"),
    [
        (dict(type="BN"), "", "bn", nn.BatchNorm2d),
        (dict(type="BN1d"), 1, "bn1", nn.BatchNorm1d),
        (dict(type="BN3d"), "_x", "bn_x", nn.BatchNorm3d),
        (dict(type="SyncBN"), 2, "bn2", nn.SyncBatchNorm),
        (dict(type="GN", num_groups=2), 3, "gn3", nn.GroupNorm),
        (dict(type="LN"), "", "ln", nn.LayerNorm),
        (dict(type="IN"), 1, "in1", nn.InstanceNorm2d),
        (dict(type="IN1d"), "", "in", nn.InstanceNorm1d),
        (dict(type="IN3d"), "", "in", nn.InstanceNorm3d),
    ],
)
def test_names_and_classes(cfg, postfix, name, cls):
    got_name, layer = build_norm_layer(cfg, 4, postfix)
    assert got_name == name
    assert type(layer) is cls
    assert layer.eps == 1e-5


def test_arguments_reach_the_layer():
    _, bn = build_norm_layer(dict(type="BN", momentum=0.3, eps=1e-3), 6)
    assert (bn.num_features, bn.momentum, bn.eps) == (6, 0.3, 1e-3)
    _, gn = build_norm_layer(dict(type="GN", num_groups=3), 6)
    assert (gn.num_groups, gn.num_channels) == (3, 6)
    _, ln = build_norm_layer(dict(type="LN"), 6)
    assert ln.normalized_shape == (6,)
    x = torch.randn(2, 6)
    assert torch.allclose(ln(x), nn.functional.layer_norm(x, (6,), eps=1e-5))


def test_the_cfg_is_not_modified():
    cfg = dict(type="BN", requires_grad=False)
    build_norm_layer(cfg, 2)
    assert cfg == dict(type="BN", requires_grad=False)


def test_requires_grad_freezes_the_parameters():
    _, frozen = build_norm_layer(dict(type="BN", requires_grad=False), 4)
    assert [p.requires_grad for p in frozen.parameters()] == [False, False]
    _, trained = build_norm_layer(dict(type="GN", num_groups=2), 4)
    assert all(p.requires_grad for p in trained.parameters())


def test_errors_have_mmcvs_types():
    with pytest.raises(TypeError):
        build_norm_layer("BN", 4)
    with pytest.raises(KeyError):
        build_norm_layer(dict(momentum=0.1), 4)
    with pytest.raises(KeyError, match="FancyNorm"):
        build_norm_layer(dict(type="FancyNorm"), 4)
    with pytest.raises(AssertionError):
        build_norm_layer(dict(type="GN"), 4)  # GN needs num_groups
    with pytest.raises(AssertionError):
        build_norm_layer(dict(type="BN"), 4, postfix=1.5)


def test_infer_abbr_rules():
    class WithAbbr(nn.BatchNorm2d):
        _abbr_ = "custom"

    class MyBatchNorm(nn.BatchNorm2d):
        pass

    class InstanceOfBoth(nn.InstanceNorm2d):
        pass

    class LayerNormish(nn.Module):  # by name only
        pass

    class GroupThing(nn.Module):
        pass

    class BatchThing(nn.Module):
        pass

    class InstanceThing(nn.Module):
        pass

    class Other(nn.Module):
        pass

    assert infer_abbr(WithAbbr) == "custom"
    assert infer_abbr(MyBatchNorm) == "bn"
    assert infer_abbr(InstanceOfBoth) == "in"
    assert infer_abbr(nn.GroupNorm) == "gn"
    assert infer_abbr(nn.LayerNorm) == "ln"
    assert infer_abbr(LayerNormish) == "ln"
    assert infer_abbr(GroupThing) == "gn"
    assert infer_abbr(BatchThing) == "bn"
    assert infer_abbr(InstanceThing) == "in"
    assert infer_abbr(Other) == "norm_layer"
    with pytest.raises(TypeError):
        infer_abbr(nn.BatchNorm2d(2))


def test_a_registered_custom_norm_gets_its_abbreviation():
    @NORM_LAYERS.register_module(name="_TestNorm")
    class Fancy(nn.Module):
        _abbr_ = "fancy"

        def __init__(self, num_features, eps=1e-5):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(num_features))

    try:
        name, layer = build_norm_layer(dict(type="_TestNorm"), 3, postfix=2)
        assert name == "fancy2" and isinstance(layer, Fancy)
    finally:
        NORM_LAYERS.module_dict.pop("_TestNorm")


def test_is_norm():
    assert is_norm(nn.BatchNorm1d(2))
    assert is_norm(nn.SyncBatchNorm(2))
    assert is_norm(nn.InstanceNorm2d(2))
    assert is_norm(nn.GroupNorm(1, 2))
    assert is_norm(nn.LayerNorm(2))
    assert not is_norm(nn.Conv2d(2, 2, 1))
    assert not is_norm(nn.BatchNorm2d(2), exclude=nn.BatchNorm2d)
    assert not is_norm(nn.GroupNorm(1, 2), exclude=(nn.LayerNorm, nn.GroupNorm))
    assert is_norm(nn.GroupNorm(1, 2), exclude=nn.LayerNorm)
    with pytest.raises(TypeError):
        is_norm(nn.BatchNorm2d(2), exclude="BN")
    with pytest.raises(TypeError):
        is_norm(nn.BatchNorm2d(2), exclude=(nn.BatchNorm2d, "BN"))
