"""init_cfg initialisers: each type's values on the named layers only, override, Pretrained."""

import math

import pytest
import torch
import torch.nn as nn

from mmpar.runner import UnsafeCheckpointError, save_checkpoint
from mmpar.runner.model_setup.weight_init import (
    apply_init_cfg,
    bias_init_with_prob,
    initialize,
    load_pretrained,
)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 64, 3)
        self.bn = nn.BatchNorm2d(64)
        self.fc = nn.Linear(256, 512)
        self.head = nn.Sequential(nn.Linear(512, 10), nn.Conv1d(2, 2, 1))


def _snapshot(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


def _changed(model, before):
    return {k for k, v in model.state_dict().items() if not torch.equal(v, before[k])}


@pytest.fixture
def net():
    torch.manual_seed(0)
    return Net()


def test_constant_touches_only_the_named_layer(net):
    before = _snapshot(net)
    initialize(net, dict(type="Constant", layer="Conv2d", val=1.5, bias=2))
    assert torch.all(net.conv.weight == 1.5) and torch.all(net.conv.bias == 2)
    assert _changed(net, before) == {"conv.weight", "conv.bias"}


def test_layer_matches_base_class_names_and_lists(net):
    before = _snapshot(net)
    initialize(net, dict(type="Constant", layer=["_BatchNorm", "Conv1d"], val=0.5, bias=0.25))
    assert torch.all(net.bn.weight == 0.5) and torch.all(net.bn.bias == 0.25)
    assert torch.all(net.head[1].weight == 0.5)
    assert _changed(net, before) == {"bn.weight", "bn.bias", "head.1.weight", "head.1.bias"}


def test_normal_statistics(net):
    initialize(net, dict(type="Normal", layer="Linear", mean=0.5, std=0.02, bias=0.1))
    w = net.fc.weight
    assert w.mean().item() == pytest.approx(0.5, abs=1e-3)
    assert w.std().item() == pytest.approx(0.02, rel=0.02)
    assert torch.allclose(net.fc.bias, torch.full_like(net.fc.bias, 0.1))
    assert net.head[0].weight.mean().item() == pytest.approx(0.5, abs=2e-3)


def test_trunc_normal_stays_within_cutoffs(net):
    initialize(net, dict(type="TruncNormal", layer="Linear", mean=0.0, std=1.0, a=-0.5, b=0.5))
    w = net.fc.weight
    assert w.min().item() >= -0.5 and w.max().item() <= 0.5
    # A normal cut at +-0.5 std is close to uniform on [-0.5, 0.5] (std 0.289); slightly less.
    assert 0.25 < w.std().item() < 0.289


def test_uniform_bounds_and_mean(net):
    initialize(net, dict(type="Uniform", layer="Linear", a=-0.1, b=0.3))
    w = net.fc.weight
    assert w.min().item() >= -0.1 and w.max().item() <= 0.3
    assert w.mean().item() == pytest.approx(0.1, abs=2e-3)
    assert w.max().item() > 0.29 and w.min().item() < -0.09


def test_xavier_normal_and_uniform(net):
    fan_in, fan_out = 256, 512
    initialize(net, dict(type="Xavier", layer="Linear", gain=2.0))
    assert net.fc.weight.std().item() == pytest.approx(
        2.0 * math.sqrt(2.0 / (fan_in + fan_out)), rel=0.02
    )
    initialize(net, dict(type="Xavier", layer="Linear", distribution="uniform"))
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    assert net.fc.weight.abs().max().item() <= bound
    assert net.fc.weight.abs().max().item() > 0.99 * bound


def test_kaiming_fan_out_and_fan_in(net):
    initialize(net, dict(type="Kaiming", layer="Linear"))  # mmcv default: fan_out, relu
    assert net.fc.weight.std().item() == pytest.approx(math.sqrt(2.0 / 512), rel=0.02)
    initialize(net, dict(type="Kaiming", layer="Linear", mode="fan_in", distribution="uniform"))
    bound = math.sqrt(2.0) * math.sqrt(3.0 / 256)
    assert bound * 0.99 < net.fc.weight.abs().max().item() <= bound


def test_bias_prob_sets_the_prior_bias(net):
    initialize(net, dict(type="Normal", layer="Linear", std=0.01, bias_prob=0.01))
    expected = -math.log(0.99 / 0.01)
    assert bias_init_with_prob(0.01) == pytest.approx(expected)
    assert torch.allclose(net.fc.bias, torch.full_like(net.fc.bias, expected))


def test_override_wins_over_layer(net):
    initialize(
        net,
        dict(
            type="Constant",
            layer="Linear",
            val=1.0,
            bias=2.0,
            override=dict(name="head", type="Constant", val=3.0, bias=4.0),
        ),
    )
    assert torch.all(net.fc.weight == 1) and torch.all(net.fc.bias == 2)
    # The whole sub-module named 'head' is initialised, the Conv1d in it too.
    for layer in net.head:
        assert torch.all(layer.weight == 3) and torch.all(layer.bias == 4)


def test_override_with_only_a_name_reuses_the_parent_arguments(net):
    before = _snapshot(net)
    initialize(
        net, dict(type="Constant", layer="Conv2d", val=7.0, bias=1.0, override=[dict(name="bn")])
    )
    assert torch.all(net.conv.weight == 7) and torch.all(net.bn.weight == 7)
    assert torch.all(net.bn.bias == 1)
    assert _changed(net, before) == {"conv.weight", "conv.bias", "bn.weight", "bn.bias"}


def test_list_of_configs_and_shared_cfg_is_not_mutated(net):
    cfg = [
        dict(
            type="Constant",
            layer="Conv2d",
            val=1.0,
            override=dict(name="fc", type="Constant", val=5.0),
        ),
        dict(type="Constant", layer="BatchNorm2d", val=2.0),
    ]
    initialize(net, cfg)
    initialize(net.head, cfg[1])
    assert cfg[0]["override"] == dict(name="fc", type="Constant", val=5.0)
    assert torch.all(net.conv.weight == 1) and torch.all(net.bn.weight == 2)
    assert torch.all(net.fc.weight == 5)


def test_bad_configs_raise_mmcv_exception_types(net):
    with pytest.raises(KeyError, match="Orthogonal"):
        initialize(net, dict(type="Orthogonal", layer="Linear"))
    with pytest.raises(ValueError, match="Orthogonal"):  # mmpar's earlier contract too
        apply_init_cfg(net, dict(type="Orthogonal", layer="Linear"))
    with pytest.raises(TypeError, match="Normal"):
        initialize(net, dict(type="Normal", layer="Linear", sigma=1.0))
    with pytest.raises(TypeError, match="val"):
        initialize(net, dict(type="Constant", layer="Linear"))  # val is required
    with pytest.raises(TypeError, match="init_cfg must be a dict"):
        initialize(net, "Constant")
    with pytest.raises(TypeError, match="bias must be a number"):
        initialize(net, dict(type="Constant", layer="Linear", val=1, bias="0"))
    with pytest.raises(TypeError, match="layer"):
        initialize(net, dict(type="Constant", layer=3, val=1))
    with pytest.raises(AssertionError, match="distribution"):
        initialize(net, dict(type="Xavier", layer="Linear", distribution="gaussian"))
    with pytest.raises(ValueError, match='needs "name"'):
        initialize(net, dict(type="Constant", layer="Linear", val=1, override=dict(val=2)))
    with pytest.raises(ValueError, match='no "type"'):
        initialize(net, dict(type="Constant", val=1, override=dict(name="fc", val=2)))
    with pytest.raises(RuntimeError, match="'neck'"):
        initialize(net, dict(type="Constant", val=1, override=dict(name="neck")))
    with pytest.raises(TypeError, match="override"):
        initialize(net, dict(type="Constant", val=1, override="fc"))
    with pytest.raises(ValueError, match='needs "layer"'):
        apply_init_cfg(net, dict(type="Constant", val=1))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
        self.head = nn.Linear(4, 2)


def test_pretrained_with_prefix_loads_the_sub_state(tmp_path):
    torch.manual_seed(1)
    trained = Classifier()
    path = tmp_path / "epoch_1.pth"
    save_checkpoint(trained, str(path))
    for prefix in ("backbone.", "backbone"):
        backbone = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
        initialize(backbone, dict(type="Pretrained", checkpoint=str(path), prefix=prefix))
        for key, value in backbone.state_dict().items():
            assert torch.equal(value, trained.state_dict()[f"backbone.{key}"]), key
    whole = Classifier()
    initialize(whole, dict(type="Pretrained", checkpoint=str(path), map_location="cpu"))
    for key, value in whole.state_dict().items():
        assert torch.equal(value, trained.state_dict()[key]), key
    with pytest.raises(KeyError, match="neck") as info:
        initialize(backbone, dict(type="Pretrained", checkpoint=str(path), prefix="neck"))
    assert isinstance(info.value, AssertionError)  # what mmcv raised for a missing prefix
    with pytest.raises(TypeError, match="Pretrained"):
        initialize(whole, dict(type="Pretrained", checkpoint=str(path), strict=True))


class Payload:
    """Not a tensor: safe loading must refuse to unpickle it."""


def test_pretrained_loading_stays_safe(tmp_path):
    path = tmp_path / "evil.pth"
    torch.save({"state_dict": Classifier().state_dict(), "extra": Payload()}, path)
    with pytest.raises(UnsafeCheckpointError):
        initialize(Classifier(), dict(type="Pretrained", checkpoint=str(path)))
    with pytest.raises(FileNotFoundError):
        load_pretrained(Classifier(), str(tmp_path / "missing.pth"))
