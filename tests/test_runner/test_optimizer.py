import pytest
import torch
import torch.nn as nn

from mmpar.parallel import MMDataParallel
from mmpar.runner import OPTIMIZERS, DefaultOptimizerConstructor, build_optimizer


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.dw = nn.Conv2d(4, 4, 3, groups=4, bias=False)
        self.head = nn.Linear(4, 2)


def _groups_by_param(model, optimizer):
    names = {id(p): n for n, p in model.named_parameters()}
    return {names[id(g["params"][0])]: g for g in optimizer.param_groups}


def test_registry_has_torch_optimizers_and_plain_build():
    assert OPTIMIZERS.get("SGD") is torch.optim.SGD and OPTIMIZERS.get("AdamW") is torch.optim.AdamW
    model = Net()
    optim = build_optimizer(MMDataParallel(model), dict(type="SGD", lr=0.1, momentum=0.9))
    assert isinstance(optim, torch.optim.SGD) and len(optim.param_groups) == 1
    assert optim.param_groups[0]["momentum"] == 0.9


def test_paramwise_multipliers():
    model = Net()
    cfg = dict(
        type="SGD",
        lr=0.1,
        weight_decay=1e-4,
        paramwise_cfg=dict(
            bias_lr_mult=2.0, bias_decay_mult=0.5, norm_decay_mult=0.0, dwconv_decay_mult=0.1
        ),
    )
    groups = _groups_by_param(model, build_optimizer(model, cfg))
    assert groups["conv.bias"]["lr"] == pytest.approx(0.2)
    assert groups["conv.bias"]["weight_decay"] == pytest.approx(5e-5)
    assert groups["conv.weight"]["lr"] == pytest.approx(0.1)
    assert groups["conv.weight"]["weight_decay"] == pytest.approx(1e-4)
    assert groups["bn.weight"]["weight_decay"] == 0 and groups["bn.bias"]["weight_decay"] == 0
    assert groups["bn.bias"]["lr"] == pytest.approx(0.1)  # norm biases keep the base lr
    assert groups["dw.weight"]["weight_decay"] == pytest.approx(1e-5)


def test_custom_keys_longest_match_wins_and_overrides_rules():
    model = Net()
    cfg = dict(
        type="SGD",
        lr=1.0,
        weight_decay=1.0,
        paramwise_cfg=dict(
            bias_lr_mult=3.0,
            custom_keys={"head": dict(lr_mult=0.1), "head.bias": dict(lr_mult=0.5, decay_mult=0.0)},
        ),
    )
    groups = _groups_by_param(model, build_optimizer(model, cfg))
    assert groups["head.weight"]["lr"] == pytest.approx(0.1)
    assert groups["head.bias"]["lr"] == pytest.approx(0.5)
    assert groups["head.bias"]["weight_decay"] == 0
    assert groups["conv.bias"]["lr"] == pytest.approx(3.0)


def test_paramwise_errors():
    model = Net()
    with pytest.raises(ValueError, match="no weight_decay"):
        build_optimizer(model, dict(type="SGD", lr=0.1, paramwise_cfg=dict(norm_decay_mult=0)))
    with pytest.warns(UserWarning, match=r"\['bias_lr'\] are ignored"):
        build_optimizer(model, dict(type="SGD", lr=0.1, paramwise_cfg=dict(bias_lr=2)))
    with pytest.raises(KeyError, match="not in the optimizer registry"):
        build_optimizer(model, dict(type="Sgd2", lr=0.1))


def test_shared_parameters_need_bypass_duplicate():
    model = Net()
    model.head2 = model.head
    ctor = DefaultOptimizerConstructor(dict(type="SGD", lr=0.1), dict(bias_lr_mult=1.0))
    params = []
    other = nn.Module()
    other.a, other.b = nn.Linear(2, 2), nn.Linear(2, 2)
    other.b.weight = other.a.weight
    ctor.add_params(params, other)  # as in mmcv, the optimizer is the one to reject them
    assert [g["params"][0] is other.a.weight for g in params].count(True) == 2
    with pytest.raises(ValueError, match="more than one parameter group"):
        ctor(other)
    ctor = DefaultOptimizerConstructor(dict(type="SGD", lr=0.1), dict(bypass_duplicate=True))
    with pytest.warns(UserWarning, match="b.weight is a duplicate"):
        optim = ctor(other)
    assert sum(len(g["params"]) for g in optim.param_groups) == 3
