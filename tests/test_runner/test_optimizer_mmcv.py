"""mmcv 1.7.2's optimizer constructor, as mmcv code observes it: the param groups handed to the
optimizer (keys and values, derived by hand from mmcv's rules), the registry of torch optimizers,
and ``build_optimizer``'s inputs."""

import inspect

import pytest
import torch
import torch.nn as nn

from mmpar.runner import (
    OPTIMIZER_BUILDERS,
    OPTIMIZERS,
    DefaultOptimizerConstructor,
    build_optimizer,
)
from mmpar.runner.optimizer.builder import TORCH_OPTIMIZERS

LR, WD = 0.01, 1e-4


class DeformConv2d(nn.Conv2d):
    """Stands in for mmpar.ops' class: the constructor recognises DCNs by class name."""


class DeformConv2dPack(DeformConv2d):
    """mmcv's packed DCN: a subclass with a ``conv_offset`` child predicting the offsets."""

    def __init__(self, channels):
        super().__init__(channels, channels, 3, padding=1)
        self.conv_offset = nn.Conv2d(channels, 18, 3, padding=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.param1 = nn.Parameter(torch.ones(1))  # the model's own parameter: name '.param1'
        self.conv1 = nn.Conv2d(3, 4, 3, bias=False)
        self.conv2 = nn.Conv2d(4, 2, 1)
        self.bn = nn.BatchNorm2d(2)
        self.sub = nn.Module()
        self.sub.param1 = nn.Parameter(torch.ones(1))
        self.sub.gn = nn.GroupNorm(2, 2)
        self.sub.dw = nn.Conv2d(2, 2, 3, groups=2)  # depth-wise, with a bias
        self.dcn = DeformConv2dPack(2)
        self.fc = nn.Linear(2, 2)


ORDER = [  # mmcv's order: a module's own parameters, then its children, depth first
    "param1", "conv1.weight", "conv2.weight", "conv2.bias", "bn.weight", "bn.bias",
    "sub.param1", "sub.gn.weight", "sub.gn.bias", "sub.dw.weight", "sub.dw.bias",
    "dcn.weight", "dcn.bias", "dcn.conv_offset.weight", "dcn.conv_offset.bias",
    "fc.weight", "fc.bias",
]  # fmt: skip


def _groups(model, optimizer_cfg, paramwise_cfg):
    """The param groups the constructor builds, as {name: group without 'params'}."""
    names = {id(p): n for n, p in model.named_parameters()}
    params = []
    DefaultOptimizerConstructor(optimizer_cfg, paramwise_cfg).add_params(params, model)
    assert [names[id(g["params"][0])] for g in params] == ORDER
    return {
        names[id(g["params"][0])]: {k: v for k, v in g.items() if k != "params"} for g in params
    }


def test_paramwise_groups_follow_mmcv_precedence():
    paramwise = dict(
        bias_lr_mult=2.0,
        bias_decay_mult=0.5,
        norm_decay_mult=0.0,
        dwconv_decay_mult=0.1,
        dcn_offset_lr_mult=0.1,
    )
    groups = _groups(Net(), dict(type="SGD", lr=LR, momentum=0.9, weight_decay=WD), paramwise)
    approx = pytest.approx
    expected = {
        "param1": {},
        "conv1.weight": {},
        "conv2.weight": {},
        "conv2.bias": dict(lr=approx(LR * 2), weight_decay=approx(WD * 0.5)),
        "bn.weight": dict(weight_decay=0.0),
        "bn.bias": dict(weight_decay=0.0),  # a norm bias keeps the base lr
        "sub.param1": {},
        "sub.gn.weight": dict(weight_decay=0.0),
        "sub.gn.bias": dict(weight_decay=0.0),
        "sub.dw.weight": dict(weight_decay=approx(WD * 0.1)),
        # depth-wise wins over bias_decay_mult for the decay; the lr is still a bias's
        "sub.dw.bias": dict(lr=approx(LR * 2), weight_decay=approx(WD * 0.1)),
        "dcn.weight": {},
        "dcn.bias": dict(lr=approx(LR * 2), weight_decay=approx(WD * 0.5)),
        "dcn.conv_offset.weight": dict(lr=approx(LR * 0.1)),
        # bias_lr_mult and bias_decay_mult skip a DCN's children; the offset lr replaces them
        "dcn.conv_offset.bias": dict(lr=approx(LR * 0.1)),
        "fc.weight": {},
        "fc.bias": dict(lr=approx(LR * 2), weight_decay=approx(WD * 0.5)),
    }
    assert groups == expected


def test_rules_set_their_keys_at_the_default_multiplier():
    # mmcv writes the key of every rule that applies, at multiplier 1 when it is not given: a
    # depth-wise conv's bias takes dwconv_decay_mult (1), not the given bias_decay_mult.
    groups = _groups(Net(), dict(type="SGD", lr=LR, weight_decay=WD), dict(bias_decay_mult=0.0))
    assert groups["sub.dw.bias"] == dict(lr=LR, weight_decay=WD)
    assert groups["sub.dw.weight"] == dict(weight_decay=WD)
    assert groups["bn.weight"] == dict(weight_decay=WD)
    assert groups["fc.bias"] == dict(lr=LR, weight_decay=0.0)
    assert groups["dcn.conv_offset.weight"] == dict(lr=LR)


def test_custom_keys_longest_then_alphabetical_and_exclusive():
    custom = {
        "sub": dict(lr_mult=0.5),
        "sub.gn": dict(lr_mult=0.2, decay_mult=3.0),
        "sub.dw": dict(lr_mult=0.3),  # same length as 'sub.gn': each matches its own
        ".param1": dict(lr_mult=4.0),  # the model's own parameter is named '.param1'
        "bias": dict(decay_mult=0.0),
        "dcn": dict(lr_mult=0.7),
    }
    groups = _groups(
        Net(), dict(type="SGD", lr=LR, weight_decay=WD), dict(custom_keys=custom, bias_lr_mult=9)
    )
    approx = pytest.approx
    assert groups["param1"] == dict(lr=approx(LR * 4), weight_decay=WD)
    assert groups["sub.param1"] == dict(lr=approx(LR * 4), weight_decay=WD)  # '.param1' is longer
    assert groups["sub.gn.bias"] == dict(lr=approx(LR * 0.2), weight_decay=approx(WD * 3))
    assert groups["sub.dw.bias"] == dict(lr=approx(LR * 0.3), weight_decay=WD)
    # 'dcn' matches the DCN's parameters: no offset or bias rule applies then; the longer
    # 'bias' wins over 'dcn' for the biases
    assert groups["dcn.conv_offset.weight"] == dict(lr=approx(LR * 0.7), weight_decay=WD)
    assert groups["dcn.conv_offset.bias"] == dict(lr=LR, weight_decay=0.0)
    assert groups["conv2.bias"] == dict(lr=LR, weight_decay=0.0)  # 'bias' replaces bias_lr_mult
    assert groups["conv1.weight"] == {}


def test_optimizer_param_groups_and_frozen_parameters():
    model = Net()
    model.conv1.weight.requires_grad = False
    cfg = dict(type="SGD", lr=LR, momentum=0.9, weight_decay=WD)
    optimizer = build_optimizer(model, dict(cfg, paramwise_cfg=dict(dcn_offset_lr_mult=0.1)))
    assert len(optimizer.param_groups) == len(ORDER)
    by_name = dict(zip(ORDER, optimizer.param_groups))
    assert by_name["conv1.weight"]["lr"] == LR and by_name["conv1.weight"]["weight_decay"] == WD
    assert by_name["dcn.conv_offset.weight"]["lr"] == pytest.approx(LR * 0.1)
    assert all(g["momentum"] == 0.9 for g in optimizer.param_groups)
    # without paramwise_cfg: one group, the model's parameters in order
    optimizer = build_optimizer(model, cfg)
    assert len(optimizer.param_groups) == 1
    assert optimizer.param_groups[0]["params"] == list(model.parameters())


def test_bypass_duplicate_warns_and_skips_a_module_seen_twice():
    model = Net()
    # one module under two parents: mmcv walks each parent's children, so it visits it twice
    model.sub.fc2 = model.fc  # visited first (sub comes before fc): fc is the duplicate
    cfg = dict(type="SGD", lr=LR)
    with pytest.raises(ValueError, match="more than one parameter group"):
        build_optimizer(model, dict(cfg, paramwise_cfg=dict(bias_lr_mult=1.0)))
    with pytest.warns(UserWarning) as record:
        optimizer = build_optimizer(model, dict(cfg, paramwise_cfg=dict(bypass_duplicate=True)))
    assert [str(w.message).split(" is a duplicate")[0] for w in record] == ["fc.weight", "fc.bias"]
    assert len(optimizer.param_groups) == len(ORDER)


def test_config_errors_have_mmcv_types():
    model = Net()
    with pytest.raises(TypeError):
        DefaultOptimizerConstructor([("type", "SGD")])
    with pytest.raises(TypeError):
        DefaultOptimizerConstructor(dict(type="SGD", lr=LR), paramwise_cfg=[1])
    # As mmcv: the constructor checks paramwise_cfg first; "type" is needed when building.
    with pytest.raises(TypeError):
        DefaultOptimizerConstructor(dict(lr=LR), paramwise_cfg=[1])
    constructor = DefaultOptimizerConstructor(dict(lr=LR))
    with pytest.raises(KeyError, match='needs a "type"'):
        constructor(model)
    with pytest.raises(TypeError):
        DefaultOptimizerConstructor(dict(type="SGD", lr=LR), dict(custom_keys=[("a", {})]))
    with pytest.raises(ValueError):
        DefaultOptimizerConstructor(dict(type="SGD", lr=LR), dict(dwconv_decay_mult=0.0))
    with pytest.raises(ValueError):
        DefaultOptimizerConstructor(
            dict(type="SGD", lr=LR), dict(custom_keys={"fc": dict(decay_mult=0.0)})
        )
    # an lr multiplier without an lr: mmcv fails multiplying None (a TypeError)
    with pytest.raises(TypeError, match="no lr"):
        build_optimizer(model, dict(type="Adam", paramwise_cfg=dict(bias_lr_mult=2.0)))


def test_subclass_keys_pass_through_silently(recwarn):
    class LayerDecay(DefaultOptimizerConstructor):  # mmseg/mmpose's layer-decay pattern
        def add_params(self, params, module, **kwargs):
            rate = self.paramwise_cfg["decay_rate"]
            for p in module.parameters():
                params.append(dict(params=[p], lr=self.base_lr * rate))

    ctor = LayerDecay(dict(type="SGD", lr=LR), dict(num_layers=2, decay_rate=0.5))
    optimizer = ctor(Net())
    assert {g["lr"] for g in optimizer.param_groups} == {LR * 0.5}
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


def test_every_torch_optimizer_is_registered():
    expected = {
        name
        for name in dir(torch.optim)
        if not name.startswith("__")
        and inspect.isclass(getattr(torch.optim, name))
        and issubclass(getattr(torch.optim, name), torch.optim.Optimizer)
    }
    assert {"Optimizer", "SGD", "Adam", "AdamW", "Adafactor"} <= expected
    assert set(TORCH_OPTIMIZERS) == expected
    for name in expected:
        assert OPTIMIZERS.get(name) is getattr(torch.optim, name)
    optimizer = build_optimizer(Net(), dict(type="Adafactor", lr=LR))
    assert isinstance(optimizer, torch.optim.Adafactor)


def test_build_optimizer_with_a_custom_constructor_key():
    @OPTIMIZER_BUILDERS.register_module(force=True)
    class HeadOnlyConstructor:
        def __init__(self, optimizer_cfg, paramwise_cfg=None):
            self.optimizer_cfg, self.paramwise_cfg = optimizer_cfg, paramwise_cfg

        def __call__(self, model):
            return OPTIMIZERS.build(dict(self.optimizer_cfg, params=model.fc.parameters()))

    cfg = dict(type="SGD", lr=LR, constructor="HeadOnlyConstructor", paramwise_cfg=dict(x=1))
    optimizer = build_optimizer(Net(), cfg)
    assert len(optimizer.param_groups[0]["params"]) == 2
    assert cfg["constructor"] == "HeadOnlyConstructor"  # the caller's dict is left alone


def test_dict_of_optimizer_configs():
    # mmcv's build_optimizer takes one optimizer config: a dict of them has no "type" (KeyError).
    # Projects with several optimizers (mmpose's build_optimizers) build one per submodule.
    model = Net()
    cfgs = dict(conv2=dict(type="SGD", lr=LR), fc=dict(type="Adam", lr=LR))
    with pytest.raises(KeyError):
        build_optimizer(model, cfgs)
    optimizers = {key: build_optimizer(getattr(model, key), cfg) for key, cfg in cfgs.items()}
    assert isinstance(optimizers["conv2"], torch.optim.SGD)
    assert isinstance(optimizers["fc"], torch.optim.Adam)
    assert optimizers["fc"].param_groups[0]["params"] == list(model.fc.parameters())
