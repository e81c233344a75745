"""The schedule base shared by the LR and momentum hooks: helpers, mmcv names, resume state."""

import math

import pytest
import torch
from torch import nn

from mmpar.runner.hooks import lr_updater, param_schedule, schedule_policies
from mmpar.runner.hooks.lr_updater import (
    CosineAnnealingLrUpdaterHook,
    LrUpdaterHook,
    OneCycleLrUpdaterHook,
    StepLrUpdaterHook,
)
from mmpar.runner.hooks.momentum_updater import (
    MomentumUpdaterHook,
    OneCycleMomentumUpdaterHook,
    StepMomentumUpdaterHook,
)
from mmpar.runner.hooks.param_schedule import format_param
from mmpar.runner.hooks.schedule_policies import annealing_cos

torch.set_num_threads(1)


class FakeRunner:
    """What the schedule hooks read from a runner; ``iters`` iterations in one epoch."""

    def __init__(self, optimizer, iters):
        self.optimizer = optimizer
        self.data_loader = list(range(iters))
        self.max_epochs, self.max_iters = 1, iters
        self.epoch = self.iter = 0


def sgd(*lrs, momentum=0.9):
    groups = [{"params": [nn.Parameter(torch.zeros(1))], "lr": lr} for lr in lrs]
    return torch.optim.SGD(groups, lr=lrs[0], momentum=momentum)


def run(hook, runner, read):
    """Drive one epoch of ``hook``; return ``read(group)`` of the first group per iteration."""
    hook.before_run(runner)
    hook.before_train_epoch(runner)
    seen = []
    for it in range(runner.max_iters):
        runner.iter = it
        hook.before_train_iter(runner)
        seen.append(read(runner.optimizer.param_groups[0]))
    return seen


def close(actual, expected):
    return len(actual) == len(expected) and all(map(math.isclose, actual, expected))


def lr_of(group):
    return group["lr"]


# ------------------------------------------------------------------------------------------
# Shared helpers
# ------------------------------------------------------------------------------------------
def test_format_param():
    opt = sgd(0.1, 0.2)
    assert format_param("SGD", opt, 0.5) == [0.5, 0.5]
    assert format_param("SGD", opt, [0.5, 0.6]) == [0.5, 0.6]
    assert format_param("gen", opt, {"gen": [1, 2]}) == [1, 2]
    with pytest.raises(ValueError, match='expected 2 values for optimizer "SGD"'):
        format_param("SGD", opt, [0.5])
    with pytest.raises(KeyError, match='optimizer "disc" is not found'):
        format_param("disc", opt, {"gen": 1.0})


# mmcv's helper names in lr_updater: the shared implementations, not copies.
MMCV_LR_HELPERS = ["annealing_cos", "annealing_linear", "format_param", "get_position_from_periods"]


def test_mmcv_helper_names_in_lr_updater_are_the_shared_ones():
    for name in MMCV_LR_HELPERS:
        shared = getattr(param_schedule, name, None) or getattr(schedule_policies, name)
        assert getattr(lr_updater, name) is shared, name


# ------------------------------------------------------------------------------------------
# mmcv's names and extension points
# ------------------------------------------------------------------------------------------
def test_subclass_overriding_mmcv_methods_is_honoured():
    class QuadraticWarmup(CosineAnnealingLrUpdaterHook):  # as mmdet's YOLOX hook does
        def get_warmup_lr(self, cur_iters):
            return [lr * ((cur_iters + 1) / self.warmup_iters) ** 2 for lr in self.regular_lr]

    hook = QuadraticWarmup(min_lr=0.0, by_epoch=False, warmup="linear", warmup_iters=2)
    seen = run(hook, FakeRunner(sgd(0.1), iters=4), lr_of)
    assert close(seen[:2], [0.1 * 0.25, annealing_cos(0.1, 0.0, 0.25)])

    class HalfMomentum(StepMomentumUpdaterHook):
        def get_regular_momentum(self, runner):
            return [m / 2 for m in self.base_momentum]

    seen = run(
        HalfMomentum(step=1, by_epoch=False), FakeRunner(sgd(0.1), 2), lambda g: g["momentum"]
    )
    assert close(seen, [0.45, 0.45])


def test_custom_policy_on_a_family_base():
    class HalfLr(LrUpdaterHook):
        def get_lr(self, runner, base_lr):
            return base_lr / 2

    assert close(run(HalfLr(by_epoch=False), FakeRunner(sgd(0.1), 2), lr_of), [0.05, 0.05])
    with pytest.raises(NotImplementedError, match="get_lr"):
        run(LrUpdaterHook(), FakeRunner(sgd(0.1), 1), lr_of)
    with pytest.raises(NotImplementedError, match="get_momentum"):
        run(MomentumUpdaterHook(), FakeRunner(sgd(0.1), 1), lr_of)


def test_mmcv_attribute_names_are_the_base_values():
    hook = StepLrUpdaterHook(step=1)
    hook.before_run(FakeRunner(sgd(0.1, 0.2), 1))
    assert hook.base_lr is hook.base_values and hook.base_lr == [0.1, 0.2]
    hook.base_lr = [0.3, 0.4]
    assert hook.base_values == [0.3, 0.4]
    momentum = StepMomentumUpdaterHook(step=1, by_epoch=False)
    run(momentum, FakeRunner(sgd(0.1, momentum=0.8), 1), lr_of)
    assert momentum.regular_mom == momentum.regular_momentum == momentum.regular_values == [0.8]


def test_initial_value_already_in_a_group_is_kept_except_by_one_cycle():
    optimizer = sgd(0.1)
    optimizer.param_groups[0]["initial_lr"] = 0.5  # e.g. from a loaded optimizer state
    hook = StepLrUpdaterHook(step=1)
    hook.before_run(FakeRunner(optimizer, 1))
    assert hook.base_lr == [0.5]
    # mmcv: OneCycle starts from max_lr / div_factor whatever the group held.
    one_cycle = OneCycleLrUpdaterHook(max_lr=1.0, div_factor=10)
    one_cycle.before_run(FakeRunner(optimizer, 4))
    assert one_cycle.base_lr == [0.1] and optimizer.param_groups[0]["initial_lr"] == 0.5


# ------------------------------------------------------------------------------------------
# Resume state: the keys checkpoints of earlier versions hold
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make_hook, state, key, optimizer",
    [
        (lambda: StepLrUpdaterHook(step=1), {"base_lr": [0.3, 0.4]}, "initial_lr", None),
        (
            lambda: StepLrUpdaterHook(step=1),
            {"base_lr": {"gen": [0.3, 0.4], "disc": [0.5]}},
            "initial_lr",
            lambda: {"gen": sgd(0.1, 0.2), "disc": sgd(0.1)},
        ),
        (lambda: OneCycleLrUpdaterHook(max_lr=1.0), {"base_lr": [0.3, 0.4]}, "initial_lr", None),
        (
            lambda: StepMomentumUpdaterHook(step=1),
            {"base_momentum": [0.7, 0.6]},
            "initial_momentum",
            None,
        ),
        (
            lambda: OneCycleMomentumUpdaterHook(),
            {"base_momentum": [0.7, 0.6], "max_momentum": [0.8, 0.9]},
            "max_momentum",
            None,
        ),
    ],
)
def test_state_of_a_previous_checkpoint_resumes(make_hook, state, key, optimizer):
    optimizer = optimizer() if optimizer else sgd(0.1, 0.2)
    hook = make_hook()
    hook.load_state_dict(state)
    assert hook.state_dict() == state  # reported as loaded until before_run
    hook.before_run(FakeRunner(optimizer, 4))
    assert hook.state_dict() == state
    recorded = state["max_momentum"] if key == "max_momentum" else next(iter(state.values()))
    if isinstance(optimizer, dict):
        assert {k: [g[key] for g in o.param_groups] for k, o in optimizer.items()} == recorded
    else:
        assert [g[key] for g in optimizer.param_groups] == recorded


def test_state_without_its_keys_is_refused():
    with pytest.raises(KeyError, match='state has no "base_lr"'):
        StepLrUpdaterHook(step=1).load_state_dict({"lr": [0.1]})
    with pytest.raises(KeyError, match='state has no "max_momentum"'):
        OneCycleMomentumUpdaterHook().load_state_dict({"base_momentum": [0.8]})
