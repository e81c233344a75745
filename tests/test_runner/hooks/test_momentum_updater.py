"""Momentum updater hooks: exact schedules, betas, warmup, several optimizers, resume, errors."""

import math

import pytest
import torch
from helpers import TinyModel
from helpers.schedule_runner import FakeRunner, approx, run_schedule
from torch import nn

from mmpar.runner import EpochBasedRunner
from mmpar.runner.hooks import HOOKS
from mmpar.runner.hooks.lr_updater import OneCycleLrUpdaterHook, annealing_cos
from mmpar.runner.hooks.momentum_updater import (
    CosineAnnealingMomentumUpdaterHook,
    CyclicMomentumUpdaterHook,
    LinearAnnealingMomentumUpdaterHook,
    OneCycleMomentumUpdaterHook,
    StepMomentumUpdaterHook,
)
from mmpar.utils.registry import build_from_cfg

torch.set_num_threads(1)


def params():
    return [nn.Parameter(torch.zeros(1))]


def sgd(*momentums, lr=0.1):
    groups = [{"params": params(), "momentum": m} for m in momentums]
    return torch.optim.SGD(groups, lr=lr)


def adam(*beta1s, lr=0.1):
    groups = [{"params": params(), "betas": (b, 0.999)} for b in beta1s]
    return torch.optim.Adam(groups, lr=lr)


def momentum_of(group):
    return group["momentum"] if "momentum" in group else group["betas"][0]


def snapshot(optimizer):
    if isinstance(optimizer, dict):
        return {k: [momentum_of(g) for g in o.param_groups] for k, o in optimizer.items()}
    return [momentum_of(g) for g in optimizer.param_groups]


def run(runner, hooks, stop_at_iter=None, record=snapshot):
    """Drive ``hooks`` in the epoch runner's order; record every iteration's momentums."""
    return run_schedule(runner, hooks, record, stop_at_iter)


def momentums_of(hook, optimizer=None, max_epochs=4, iters_per_epoch=2):
    optimizer = optimizer if optimizer is not None else sgd(0.9)
    return run(FakeRunner(optimizer, max_epochs, iters_per_epoch), hook)


def first(seen):
    return [s[0] for s in seen]


# ------------------------------------------------------------------------------------------
# Policies
# ------------------------------------------------------------------------------------------
def test_step_by_epoch_two_groups_with_min():
    hook = StepMomentumUpdaterHook(step=[1, 3], gamma=0.5, min_momentum=0.3)
    seen = momentums_of(hook, sgd(0.9, 0.8))[::2]
    assert seen == approx([[0.9, 0.8], [0.45, 0.4], [0.45, 0.4], [0.3, 0.3]])


def test_step_by_iter_sets_adam_beta1_and_keeps_beta2():
    opt = adam(0.9)
    seen = first(momentums_of(StepMomentumUpdaterHook(step=3, by_epoch=False), opt))
    assert seen == approx([0.9, 0.9, 0.9, 0.45, 0.45, 0.45, 0.225, 0.225])
    assert opt.param_groups[0]["betas"][1] == 0.999


def test_cosine_annealing_by_iter():
    hook = CosineAnnealingMomentumUpdaterHook(min_momentum_ratio=0.5, by_epoch=False)
    seen = first(momentums_of(hook, max_epochs=2))
    c = math.cos(math.pi / 4)
    assert seen == approx([0.9, 0.45 + 0.225 * (1 + c), 0.675, 0.45 + 0.225 * (1 - c)])


def test_linear_annealing_by_epoch():
    seen = first(momentums_of(LinearAnnealingMomentumUpdaterHook(min_momentum=0.5))[::2])
    assert seen == approx([0.9, 0.8, 0.7, 0.6])


def test_cyclic_cos_default_ratios():
    seen = first(momentums_of(CyclicMomentumUpdaterHook(), sgd(0.95), max_epochs=5))
    assert seen[0] == approx(0.95)
    assert seen[2] == approx(0.9)
    assert seen[4] == approx(0.85)
    assert seen[7] == approx(0.9)


def test_cyclic_linear_gamma_two_cycles():
    hook = CyclicMomentumUpdaterHook(cyclic_times=2, anneal_strategy="linear", gamma=0.5)
    seen = first(momentums_of(hook, sgd(0.95), max_epochs=5))  # 5 its per cycle, 2 falling
    assert seen[:5] == approx([0.95, 0.9, 0.85, 0.85 + 0.1 / 3, 0.85 + 0.2 / 3])
    # second cycle: distance to 0.95 halves, so the low is 0.9
    assert seen[5:8] == approx([0.95, 0.925, 0.9])


@pytest.mark.parametrize("make_opt", [lambda: sgd(0.5), lambda: adam(0.5)])
@pytest.mark.parametrize("three_phase", [False, True])
@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_one_cycle_pair_matches_torch_onecyclelr(make_opt, three_phase, strategy):
    opt = make_opt()
    runner = FakeRunner(opt, max_epochs=5, iters_per_epoch=2)
    hooks = [
        OneCycleLrUpdaterHook(max_lr=1.0, anneal_strategy=strategy, three_phase=three_phase),
        OneCycleMomentumUpdaterHook(anneal_strategy=strategy, three_phase=three_phase),
    ]
    seen = run(runner, hooks, record=lambda o: (o.param_groups[0]["lr"], snapshot(o)[0]))

    ref_opt = make_opt()
    sched = torch.optim.lr_scheduler.OneCycleLR(
        ref_opt,
        max_lr=1.0,
        total_steps=10,
        anneal_strategy=strategy,
        three_phase=three_phase,
        base_momentum=0.85,
        max_momentum=0.95,
    )
    ref = []
    for _ in range(10):
        ref.append((ref_opt.param_groups[0]["lr"], momentum_of(ref_opt.param_groups[0])))
        ref_opt.step()
        sched.step()
    assert seen == approx(ref)


def test_one_cycle_hand_values_per_group():
    hook = OneCycleMomentumUpdaterHook(base_momentum=[0.8, 0.7], max_momentum=0.9, pct_start=0.5)
    seen = momentums_of(hook, sgd(0.1, 0.1), max_epochs=5)  # fall over its 0..4, rise 4..9
    assert seen[0] == approx([0.9, 0.9])
    assert seen[2] == approx([0.85, 0.8])
    assert seen[4] == approx([0.8, 0.7])
    assert seen[6] == approx([annealing_cos(0.8, 0.9, 2 / 5), annealing_cos(0.7, 0.9, 2 / 5)])


# ------------------------------------------------------------------------------------------
# Warmup
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "warmup, expected",
    [
        ("constant", [0.8, 0.8, 0.8, 0.8, 0.4, 0.4]),
        ("linear", [0.8, 0.4 / 0.625, 0.4 / 0.75, 0.4 / 0.875, 0.4, 0.4]),
        ("exp", [0.8, 0.4 / 0.5**0.75, 0.4 / 0.5**0.5, 0.4 / 0.5**0.25, 0.4, 0.4]),
    ],
)
def test_warmup_by_iter(warmup, expected):
    hook = StepMomentumUpdaterHook(
        step=100, by_epoch=False, warmup=warmup, warmup_iters=4, warmup_ratio=0.5
    )
    assert first(momentums_of(hook, sgd(0.4), max_epochs=3)) == approx(expected)


def test_warmup_with_epoch_schedule():
    hook = StepMomentumUpdaterHook(step=[2], warmup="constant", warmup_iters=2, warmup_ratio=0.5)
    seen = first(momentums_of(hook, sgd(0.4), max_epochs=3))
    assert seen == approx([0.8, 0.8, 0.4, 0.4, 0.2, 0.2])


def test_warmup_with_dict_of_optimizers_uses_each_optimizers_values():
    optims = {"gen": sgd(0.4, 0.2), "disc": adam(0.3)}
    hook = StepMomentumUpdaterHook(
        step=100, by_epoch=False, warmup="constant", warmup_iters=1, warmup_ratio=0.5
    )
    seen = run(FakeRunner(optims, max_epochs=1, iters_per_epoch=2), hook)
    assert seen[0] == approx({"gen": [0.8, 0.4], "disc": [0.6]})
    assert seen[1] == approx({"gen": [0.4, 0.2], "disc": [0.3]})


# ------------------------------------------------------------------------------------------
# A dict of optimizers
# ------------------------------------------------------------------------------------------
def test_dict_of_two_optimizers_cosine():
    optims = {"gen": sgd(0.9, 0.8), "disc": adam(0.6)}
    hook = CosineAnnealingMomentumUpdaterHook(min_momentum=0.0)
    seen = run(FakeRunner(optims, max_epochs=4, iters_per_epoch=2), hook)
    assert seen[4] == approx({"gen": [0.45, 0.4], "disc": [0.3]})
    assert hook.base_momentum == {"gen": [0.9, 0.8], "disc": [0.6]}


def test_dict_of_two_optimizers_one_cycle():
    optims = {"gen": sgd(0.9, 0.8), "disc": adam(0.6)}
    hook = OneCycleMomentumUpdaterHook(
        base_momentum={"gen": [0.8, 0.7], "disc": 0.5}, max_momentum=0.9, pct_start=0.5
    )
    seen = run(FakeRunner(optims, max_epochs=5, iters_per_epoch=2), hook)
    assert seen[0] == approx({"gen": [0.9, 0.9], "disc": [0.9]})
    assert seen[4] == approx({"gen": [0.8, 0.7], "disc": [0.5]})


# ------------------------------------------------------------------------------------------
# Resume
# ------------------------------------------------------------------------------------------
RESUMABLE = [
    lambda: StepMomentumUpdaterHook(step=[1, 2], warmup="linear", warmup_iters=3),
    lambda: CosineAnnealingMomentumUpdaterHook(min_momentum_ratio=0.5, by_epoch=False),
    lambda: LinearAnnealingMomentumUpdaterHook(
        min_momentum=0.1, by_epoch=False, warmup="exp", warmup_iters=2
    ),
    lambda: CyclicMomentumUpdaterHook(cyclic_times=2, gamma=0.5),
    lambda: OneCycleMomentumUpdaterHook(base_momentum=[0.8, 0.7], three_phase=True),
]


def _resume(make_hook, stop_at, load_optimizer_state, fresh=(0.9, 0.8)):
    first_run = FakeRunner(sgd(0.9, 0.8), max_epochs=4, iters_per_epoch=3)
    hook = make_hook()
    seen = run(first_run, hook, stop_at_iter=stop_at)
    hook_state = hook.state_dict()
    optim_state = first_run.optimizer.state_dict()

    second = FakeRunner(sgd(*fresh), max_epochs=4, iters_per_epoch=3)
    if load_optimizer_state:
        second.optimizer.load_state_dict(optim_state)
    second.epoch, second.inner_iter, second.iter = first_run.epoch, stop_at % 3, stop_at
    new_hook = make_hook()
    new_hook.load_state_dict(hook_state)
    return seen + run(second, new_hook)


@pytest.mark.parametrize("make_hook", RESUMABLE)
@pytest.mark.parametrize("stop_at", [2, 4, 7])
def test_resume_gives_uninterrupted_momentums(make_hook, stop_at):
    reference = run(FakeRunner(sgd(0.9, 0.8), max_epochs=4, iters_per_epoch=3), make_hook())
    assert len(reference) == 12
    assert _resume(make_hook, stop_at, load_optimizer_state=True) == approx(reference)
    resumed = _resume(make_hook, stop_at, load_optimizer_state=False, fresh=(0.3, 0.2))
    assert resumed == approx(reference)


def test_one_cycle_state_overrides_changed_config():
    hook = OneCycleMomentumUpdaterHook(base_momentum=0.8, max_momentum=0.9)
    hook.before_run(FakeRunner(sgd(0.5), max_epochs=2, iters_per_epoch=2))
    state = hook.state_dict()
    assert state == {"base_momentum": [0.8], "max_momentum": [0.9]}
    other = OneCycleMomentumUpdaterHook(base_momentum=0.1, max_momentum=0.2)
    other.load_state_dict(state)
    seen = first(momentums_of(other, sgd(0.5), max_epochs=2))
    assert seen[0] == approx(0.9)
    assert min(seen) >= 0.8 - 1e-12


def test_restored_state_must_match_param_groups():
    hook = StepMomentumUpdaterHook(step=1)
    hook.load_state_dict({"base_momentum": [0.9, 0.9, 0.9]})
    with pytest.raises(ValueError, match="3 values .* but it has 1 param groups"):
        momentums_of(hook)
    with pytest.raises(KeyError, match="base_momentum"):
        StepMomentumUpdaterHook(step=1).load_state_dict({"momentum": [0.9]})


# ------------------------------------------------------------------------------------------
# Registry and bad config
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "policy", ["Step", "CosineAnnealing", "LinearAnnealing", "Cyclic", "OneCycle"]
)
def test_registered_under_mmcv_names(policy):
    assert HOOKS.get(policy + "MomentumUpdaterHook") is not None


def test_build_from_momentum_config():
    hook = build_from_cfg(dict(type="CyclicMomentumUpdaterHook", cyclic_times=2), HOOKS)
    assert isinstance(hook, CyclicMomentumUpdaterHook) and hook.cyclic_times == 2


def test_optimizer_without_momentum_is_rejected():
    opt = torch.optim.Adagrad(params(), lr=0.1)
    with pytest.raises(ValueError, match='neither "momentum" nor "betas"'):
        momentums_of(StepMomentumUpdaterHook(step=1), opt)
    with pytest.raises(ValueError, match='neither "momentum" nor "betas"'):
        momentums_of(OneCycleMomentumUpdaterHook(), torch.optim.Adagrad(params(), lr=0.1))


@pytest.mark.parametrize(
    "make, exc, message",
    [
        (lambda: StepMomentumUpdaterHook(step=-1), ValueError, "positive integers, got -1"),
        (lambda: StepMomentumUpdaterHook(step=None), TypeError, '"step" must be an int'),
        (
            lambda: CosineAnnealingMomentumUpdaterHook(min_momentum=0.1, min_momentum_ratio=0.5),
            ValueError,
            'exactly one of "min_momentum" and "min_momentum_ratio"',
        ),
        (lambda: LinearAnnealingMomentumUpdaterHook(), ValueError, "exactly one"),
        (
            lambda: StepMomentumUpdaterHook(step=1, warmup="cos", warmup_iters=1),
            ValueError,
            r"valid types are \['constant', 'linear', 'exp'\]",
        ),
        (
            lambda: StepMomentumUpdaterHook(step=1, warmup="exp", warmup_iters=1, warmup_ratio=2),
            ValueError,
            "warmup_ratio",
        ),
        (lambda: CyclicMomentumUpdaterHook(by_epoch=True), ValueError, "by_epoch=False"),
        (lambda: CyclicMomentumUpdaterHook(anneal_strategy="quad"), ValueError, "anneal_strategy"),
        (lambda: OneCycleMomentumUpdaterHook(base_momentum="0.8"), ValueError, "base_momentum"),
        (lambda: OneCycleMomentumUpdaterHook(pct_start=-0.1), ValueError, "pct_start"),
        (lambda: OneCycleMomentumUpdaterHook(by_epoch=True), ValueError, "by_epoch"),
    ],
)
def test_bad_arguments(make, exc, message):
    with pytest.raises(exc, match=message):
        make()


# ------------------------------------------------------------------------------------------
# With the real EpochBasedRunner
# ------------------------------------------------------------------------------------------
def test_epoch_based_runner_lr_and_momentum_configs():
    loader = torch.utils.data.DataLoader(torch.randn(8, 2), batch_size=4)  # 2 iterations
    model = TinyModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1, betas=(0.9, 0.999))
    runner = EpochBasedRunner(model, optimizer=optimizer, max_epochs=2)
    runner.register_training_hooks(
        lr_config=dict(policy="LinearAnnealing", min_lr=0.0, by_epoch=False),
        momentum_config=dict(policy="CosineAnnealing", min_momentum_ratio=0.5, by_epoch=False),
        optimizer_config=dict(grad_clip=None),
    )
    runner.run([loader], [("train", 1)])
    c = math.cos(math.pi / 4)
    expected_momentum = [0.9, 0.45 + 0.225 * (1 + c), 0.675, 0.45 + 0.225 * (1 - c)]
    assert [g["lr"] for g in model.groups] == approx([0.1, 0.075, 0.05, 0.025])
    assert [g["betas"][0] for g in model.groups] == approx(expected_momentum)
    assert runner.current_momentum() == approx([expected_momentum[-1]])
    assert optimizer.param_groups[0]["betas"][1] == 0.999
