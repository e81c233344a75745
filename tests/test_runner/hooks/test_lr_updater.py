"""LR updater hooks: exact schedules, warmup, several optimizers, resume, bad config."""

import math

import pytest
import torch
from helpers import TinyModel
from helpers.schedule_runner import FakeRunner, approx, run_schedule
from torch import nn

from mmpar.runner import EpochBasedRunner
from mmpar.runner.hooks import HOOKS, Hook
from mmpar.runner.hooks.lr_updater import (
    CosineAnnealingLrUpdaterHook,
    CosineRestartLrUpdaterHook,
    CyclicLrUpdaterHook,
    ExpLrUpdaterHook,
    FixedLrUpdaterHook,
    FlatCosineAnnealingLrUpdaterHook,
    InvLrUpdaterHook,
    LinearAnnealingLrUpdaterHook,
    OneCycleLrUpdaterHook,
    PolyLrUpdaterHook,
    StepLrUpdaterHook,
    annealing_cos,
)
from mmpar.utils.registry import build_from_cfg

torch.set_num_threads(1)


def sgd(*lrs, momentum=0.9):
    """An SGD optimizer with one param group per lr."""
    groups = [{"params": [nn.Parameter(torch.zeros(1))], "lr": lr} for lr in lrs]
    return torch.optim.SGD(groups, lr=lrs[0], momentum=momentum)


def current_lrs(optimizer):
    if isinstance(optimizer, dict):
        return {k: [g["lr"] for g in o.param_groups] for k, o in optimizer.items()}
    return [g["lr"] for g in optimizer.param_groups]


def run(runner, hooks, stop_at_iter=None):
    """Drive ``hooks`` like the epoch runner; return the LRs seen by every iteration."""
    return run_schedule(runner, hooks, current_lrs, stop_at_iter)


def lrs_of(hook, max_epochs=4, iters_per_epoch=2, lrs=(0.1,)):
    runner = FakeRunner(sgd(*lrs), max_epochs, iters_per_epoch)
    return run(runner, hook)


def per_epoch(seen, iters_per_epoch=2):
    return [seen[i] for i in range(0, len(seen), iters_per_epoch)]


# ------------------------------------------------------------------------------------------
# Policies
# ------------------------------------------------------------------------------------------
def test_fixed_keeps_lr():
    assert lrs_of(FixedLrUpdaterHook(), lrs=(0.1, 0.02)) == [[0.1, 0.02]] * 8


def test_step_list_by_epoch_two_groups():
    seen = lrs_of(StepLrUpdaterHook(step=[2, 3]), lrs=(0.1, 0.02))
    assert per_epoch(seen) == approx([[0.1, 0.02], [0.1, 0.02], [0.01, 0.002], [0.001, 0.0002]])
    # by_epoch: both iterations of an epoch see the epoch's LR
    assert seen[4] == seen[5]


def test_step_int_by_iter_with_min_lr():
    seen = lrs_of(StepLrUpdaterHook(step=2, gamma=0.5, min_lr=0.03, by_epoch=False))
    assert [s[0] for s in seen] == approx([0.1, 0.1, 0.05, 0.05, 0.03, 0.03, 0.03, 0.03])


def test_exp_by_epoch():
    seen = per_epoch(lrs_of(ExpLrUpdaterHook(gamma=0.9)))
    assert [s[0] for s in seen] == approx([0.1, 0.09, 0.081, 0.0729])


def test_poly_by_epoch():
    seen = per_epoch(lrs_of(PolyLrUpdaterHook(power=2, min_lr=0.01)))
    assert [s[0] for s in seen] == approx([0.1, 0.060625, 0.0325, 0.015625])


def test_inv_by_iter():
    seen = lrs_of(InvLrUpdaterHook(gamma=0.5, power=2, by_epoch=False), max_epochs=2)
    assert [s[0] for s in seen] == approx([0.1, 0.1 / 2.25, 0.1 / 4, 0.1 / 6.25])


def test_cosine_annealing_by_iter_ratio():
    seen = lrs_of(CosineAnnealingLrUpdaterHook(min_lr_ratio=0.1, by_epoch=False), max_epochs=2)
    c = math.cos(math.pi / 4)
    expected = [0.1, 0.01 + 0.045 * (1 + c), 0.055, 0.01 + 0.045 * (1 - c)]
    assert [s[0] for s in seen] == approx(expected)


def test_cosine_annealing_by_epoch_min_lr_two_groups():
    seen = per_epoch(lrs_of(CosineAnnealingLrUpdaterHook(min_lr=0.0), lrs=(0.1, 0.2)))
    assert seen[2] == approx([0.05, 0.1])  # half way: mean of start and end
    c = math.cos(math.pi / 4)
    assert seen[1] == approx([0.05 * (1 + c), 0.1 * (1 + c)])


def test_flat_cosine_annealing_by_epoch():
    seen = per_epoch(lrs_of(FlatCosineAnnealingLrUpdaterHook(start_percent=0.5, min_lr=0.0)))
    assert [s[0] for s in seen] == approx([0.1, 0.1, 0.1, 0.05])


def test_flat_cosine_annealing_by_iter_ratio():
    hook = FlatCosineAnnealingLrUpdaterHook(start_percent=0.25, min_lr_ratio=0.5, by_epoch=False)
    seen = [s[0] for s in lrs_of(hook)]  # 8 iterations, flat for round(2) of them
    assert seen[:3] == approx([0.1, 0.1, 0.1])
    c = math.cos(math.pi * 3 / 6)
    assert seen[5] == approx(0.05 + 0.5 * 0.05 * (1 + c))


def test_cosine_restart_by_epoch():
    hook = CosineRestartLrUpdaterHook(periods=[2, 4], restart_weights=[1, 0.5], min_lr=0.0)
    seen = [s[0] for s in per_epoch(lrs_of(hook, max_epochs=6))]
    c = math.cos(math.pi / 4)
    expected = [0.1, 0.05, 0.05, 0.025 * (1 + c), 0.025, 0.025 * (1 - c)]
    assert seen == approx(expected)


def test_cosine_restart_past_periods_raises():
    hook = CosineRestartLrUpdaterHook(periods=[2], min_lr=0.0)
    with pytest.raises(ValueError, match="exceeds the cumulative periods"):
        lrs_of(hook, max_epochs=3)


def test_cyclic_cos_one_cycle():
    hook = CyclicLrUpdaterHook(target_ratio=(10, 1e-4), step_ratio_up=0.4)
    seen = [s[0] for s in lrs_of(hook, max_epochs=5)]  # 10 iterations, 4 up, 6 down
    assert seen[0] == approx(0.1)
    assert seen[2] == approx(0.55)
    assert seen[1] == approx(1.0 - 0.45 * (1 + math.cos(math.pi / 4)))
    assert seen[4] == approx(1.0)
    assert seen[7] == approx((1.0 + 1e-5) / 2)


def test_cyclic_linear_with_gamma_two_cycles():
    hook = CyclicLrUpdaterHook(
        target_ratio=(10, 1e-4),
        cyclic_times=2,
        step_ratio_up=0.4,
        anneal_strategy="linear",
        gamma=0.5,
    )
    seen = [s[0] for s in lrs_of(hook, max_epochs=5)]  # 2 cycles of 5 its, 2 up, 3 down
    # cycle 0: 0.1 -> 1.0 in 2 its, then 1.0 -> 1e-5 in 3
    assert seen[:5] == approx([0.1, 0.55, 1.0, 1.0 - (1.0 - 1e-5) / 3, 1.0 - 2 * (1.0 - 1e-5) / 3])
    # cycle 1: the peak's distance to base_lr halves: peak = 0.1 + 0.5 * (1.0 - 0.1) = 0.55
    assert seen[5:8] == approx([0.1, 0.325, 0.55])


def test_one_cycle_matches_torch_onecyclelr():
    for three_phase in (False, True):
        for strategy in ("cos", "linear"):
            hook = OneCycleLrUpdaterHook(
                max_lr=1.0, pct_start=0.3, anneal_strategy=strategy, three_phase=three_phase
            )
            seen = [s[0] for s in lrs_of(hook, max_epochs=5)]

            ref_opt = sgd(0.1)
            sched = torch.optim.lr_scheduler.OneCycleLR(
                ref_opt,
                max_lr=1.0,
                total_steps=10,
                pct_start=0.3,
                anneal_strategy=strategy,
                three_phase=three_phase,
                cycle_momentum=False,
            )
            ref = []
            for _ in range(10):
                ref.append(ref_opt.param_groups[0]["lr"])
                ref_opt.step()
                sched.step()
            assert seen == approx(ref), (three_phase, strategy)
    # hand check of the two-phase cos schedule
    assert OneCycleLrUpdaterHook(max_lr=1.0).div_factor == 25


def test_one_cycle_hand_values_and_total_steps():
    hook = OneCycleLrUpdaterHook(max_lr=1.0, total_steps=20, pct_start=0.1)
    seen = [s[0] for s in lrs_of(hook, max_epochs=5)]  # 10 of 20 steps: rise to it 1
    assert seen[0] == approx(0.04)
    assert seen[1] == approx(1.0)
    assert seen[2] == approx(annealing_cos(1.0, 0.04 / 1e4, 1 / 18))


def test_linear_annealing_by_iter_and_epoch():
    hook = LinearAnnealingLrUpdaterHook(min_lr_ratio=0.0, by_epoch=False)
    assert [s[0] for s in lrs_of(hook, max_epochs=2)] == approx([0.1, 0.075, 0.05, 0.025])
    hook = LinearAnnealingLrUpdaterHook(min_lr=0.02)
    seen = per_epoch(lrs_of(hook, lrs=(0.1, 0.2)))
    assert seen == approx([[0.1, 0.2], [0.08, 0.155], [0.06, 0.11], [0.04, 0.065]])


# ------------------------------------------------------------------------------------------
# Warmup
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "warmup, expected",
    [
        ("constant", [0.01, 0.01, 0.01, 0.01, 0.1, 0.1]),
        ("linear", [0.01, 0.0325, 0.055, 0.0775, 0.1, 0.1]),
        ("exp", [0.01, 0.1 * 0.1**0.75, 0.1 * 0.1**0.5, 0.1 * 0.1**0.25, 0.1, 0.1]),
    ],
)
def test_warmup_by_iter(warmup, expected):
    hook = FixedLrUpdaterHook(by_epoch=False, warmup=warmup, warmup_iters=4, warmup_ratio=0.1)
    seen = lrs_of(hook, max_epochs=3, lrs=(0.1, 0.2))
    assert [s[0] for s in seen] == approx(expected)
    assert [s[1] for s in seen] == approx([2 * e for e in expected])


def test_linear_warmup_on_top_of_iteration_schedule():
    hook = StepLrUpdaterHook(step=2, gamma=0.5, by_epoch=False, warmup="linear", warmup_iters=4)
    seen = [s[0] for s in lrs_of(hook, max_epochs=3)]
    # regular LR 0.1, 0.1, 0.05, 0.05, 0.025, ... scaled by 0.1, 0.325, 0.55, 0.775, 1
    assert seen == approx([0.01, 0.0325, 0.0275, 0.03875, 0.025, 0.025])


def test_warmup_with_epoch_schedule():
    hook = StepLrUpdaterHook(step=[2], warmup="linear", warmup_iters=3, warmup_ratio=0.1)
    seen = [s[0] for s in lrs_of(hook, max_epochs=3)]
    assert seen == approx([0.01, 0.04, 0.07, 0.1, 0.01, 0.01])


def test_warmup_by_epoch_counts_loader_length():
    hook = FixedLrUpdaterHook(
        by_epoch=False, warmup="linear", warmup_iters=1, warmup_ratio=0.2, warmup_by_epoch=True
    )
    seen = [s[0] for s in lrs_of(hook, max_epochs=2, iters_per_epoch=4)]
    assert hook.warmup_iters == 4
    assert seen == approx([0.02, 0.04, 0.06, 0.08, 0.1, 0.1, 0.1, 0.1])


# ------------------------------------------------------------------------------------------
# A dict of optimizers
# ------------------------------------------------------------------------------------------
def test_dict_of_two_optimizers_step_with_warmup():
    optims = {"gen": sgd(0.1, 0.2), "disc": sgd(0.3)}
    runner = FakeRunner(optims, max_epochs=3, iters_per_epoch=2)
    hook = StepLrUpdaterHook(step=[1, 2], warmup="constant", warmup_iters=1, warmup_ratio=0.5)
    seen = run(runner, hook)
    assert seen[0] == {"gen": approx([0.05, 0.1]), "disc": approx([0.15])}
    assert seen[1] == {"gen": approx([0.1, 0.2]), "disc": approx([0.3])}
    assert seen[2] == {"gen": approx([0.01, 0.02]), "disc": approx([0.03])}
    assert seen[5] == {"gen": approx([0.001, 0.002]), "disc": approx([0.003])}
    assert hook.base_lr == {"gen": [0.1, 0.2], "disc": [0.3]}


def test_dict_of_two_optimizers_one_cycle_per_optimizer_max_lr():
    optims = {"gen": sgd(0.1, 0.2), "disc": sgd(0.3)}
    runner = FakeRunner(optims, max_epochs=5, iters_per_epoch=2)
    hook = OneCycleLrUpdaterHook(max_lr={"gen": [1.0, 2.0], "disc": 0.5}, div_factor=10)
    seen = run(runner, hook)
    assert seen[0] == {"gen": approx([0.1, 0.2]), "disc": approx([0.05])}
    assert seen[2] == {"gen": approx([1.0, 2.0]), "disc": approx([0.5])}


# ------------------------------------------------------------------------------------------
# Resume
# ------------------------------------------------------------------------------------------
RESUMABLE = [
    lambda: StepLrUpdaterHook(step=[1, 2], warmup="linear", warmup_iters=3),
    lambda: CosineAnnealingLrUpdaterHook(
        min_lr_ratio=0.01, by_epoch=False, warmup="exp", warmup_iters=2
    ),
    lambda: PolyLrUpdaterHook(power=2.0, warmup="constant", warmup_iters=1, warmup_by_epoch=True),
    lambda: CyclicLrUpdaterHook(cyclic_times=2, gamma=0.5),
    lambda: OneCycleLrUpdaterHook(max_lr=[1.0, 2.0], three_phase=True),
    lambda: CosineRestartLrUpdaterHook(
        periods=[5, 7], restart_weights=[1, 0.3], min_lr=0.001, by_epoch=False
    ),
]


def _resume(make_hook, stop_at, load_optimizer_state, fresh_lrs=(0.1, 0.2)):
    """Run to ``stop_at``, 'checkpoint', rebuild everything, resume; return all LRs."""
    first = FakeRunner(sgd(0.1, 0.2), max_epochs=4, iters_per_epoch=3)
    hook = make_hook()
    seen = run(first, hook, stop_at_iter=stop_at)
    hook_state = hook.state_dict()
    optim_state = first.optimizer.state_dict()
    epoch, inner_iter, it = first.epoch, stop_at % 3, stop_at

    second = FakeRunner(sgd(*fresh_lrs), max_epochs=4, iters_per_epoch=3)
    if load_optimizer_state:
        second.optimizer.load_state_dict(optim_state)
    second.epoch, second.inner_iter, second.iter = epoch, inner_iter, it
    new_hook = make_hook()
    new_hook.load_state_dict(hook_state)  # the runner resumes before before_run
    return seen + run(second, new_hook)


@pytest.mark.parametrize("make_hook", RESUMABLE)
@pytest.mark.parametrize("stop_at", [2, 4, 7])
def test_resume_gives_uninterrupted_lrs(make_hook, stop_at):
    reference = run(FakeRunner(sgd(0.1, 0.2), max_epochs=4, iters_per_epoch=3), make_hook())
    assert len(reference) == 12
    assert _resume(make_hook, stop_at, load_optimizer_state=True) == approx(reference)
    # the hook's own state is enough, even if the rebuilt optimizer starts elsewhere
    resumed = _resume(make_hook, stop_at, load_optimizer_state=False, fresh_lrs=(0.7, 0.9))
    assert resumed == approx(reference)


def test_state_dict_content_and_roundtrip():
    optims = {"gen": sgd(0.1, 0.2), "disc": sgd(0.3)}
    hook = StepLrUpdaterHook(step=1)
    assert hook.state_dict() == {}
    hook.before_run(FakeRunner(optims, max_epochs=2, iters_per_epoch=1))
    state = hook.state_dict()
    assert state == {"base_lr": {"gen": [0.1, 0.2], "disc": [0.3]}}
    state["base_lr"]["gen"][0] = 99  # a copy, not the hook's own list
    assert hook.base_lr["gen"][0] == 0.1
    # loaded after before_run: takes effect at the next stage
    runner = FakeRunner({"gen": sgd(1.0, 1.0), "disc": sgd(1.0)}, max_epochs=2, iters_per_epoch=1)
    other = StepLrUpdaterHook(step=1)
    other.before_run(runner)
    other.load_state_dict(hook.state_dict())
    other.before_train_epoch(runner)
    assert current_lrs(runner.optimizer) == {"gen": [0.1, 0.2], "disc": [0.3]}


def test_restored_state_must_match_param_groups():
    hook = StepLrUpdaterHook(step=1)
    hook.load_state_dict({"base_lr": [0.1, 0.2, 0.3]})
    with pytest.raises(ValueError, match="3 values .* but it has 2 param groups"):
        hook.before_run(FakeRunner(sgd(0.1, 0.2), max_epochs=2, iters_per_epoch=1))
    hook = StepLrUpdaterHook(step=1)
    hook.load_state_dict({"base_lr": [0.1]})
    with pytest.raises(ValueError, match="do not match the optimizer layout"):
        hook.before_run(FakeRunner({"gen": sgd(0.1)}, max_epochs=2, iters_per_epoch=1))
    with pytest.raises(KeyError, match="base_lr"):
        StepLrUpdaterHook(step=1).load_state_dict({"lr": [0.1]})


# ------------------------------------------------------------------------------------------
# Registry and bad config
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "policy",
    [
        "Fixed",
        "Step",
        "Exp",
        "Poly",
        "Inv",
        "CosineAnnealing",
        "FlatCosineAnnealing",
        "CosineRestart",
        "Cyclic",
        "OneCycle",
        "LinearAnnealing",
    ],
)
def test_registered_under_mmcv_names(policy):
    assert HOOKS.get(policy + "LrUpdaterHook") is not None


def test_build_step_from_lr_config():
    hook = build_from_cfg(dict(type="StepLrUpdaterHook", step=[2, 3]), HOOKS)
    assert isinstance(hook, StepLrUpdaterHook) and hook.step == [2, 3] and hook.by_epoch


@pytest.mark.parametrize(
    "make, exc, message",
    [
        (lambda: StepLrUpdaterHook(step=-1), ValueError, "positive integers, got -1"),
        (lambda: StepLrUpdaterHook(step=[2, 0]), ValueError, "positive integers"),
        (lambda: StepLrUpdaterHook(step="2"), TypeError, '"step" must be an int or a list'),
        (lambda: StepLrUpdaterHook(step=2.5), TypeError, '"step" must be an int or a list'),
        (
            lambda: CosineAnnealingLrUpdaterHook(min_lr=0.0, min_lr_ratio=0.1),
            ValueError,
            'exactly one of "min_lr" and "min_lr_ratio"',
        ),
        (lambda: CosineAnnealingLrUpdaterHook(), ValueError, "exactly one"),
        (
            lambda: LinearAnnealingLrUpdaterHook(min_lr=0.0, min_lr_ratio=0.1),
            ValueError,
            "exactly one",
        ),
        (
            lambda: FlatCosineAnnealingLrUpdaterHook(start_percent=1.5, min_lr=0.0),
            ValueError,
            "start_percent",
        ),
        (
            lambda: CosineRestartLrUpdaterHook(periods=[2, 3], restart_weights=[1], min_lr=0.0),
            ValueError,
            "same length",
        ),
        (lambda: CosineRestartLrUpdaterHook(periods=[0], min_lr=0.0), ValueError, "positive ints"),
        (
            lambda: FixedLrUpdaterHook(warmup="cosine", warmup_iters=2),
            ValueError,
            r"valid types are \['constant', 'linear', 'exp'\]",
        ),
        (lambda: FixedLrUpdaterHook(warmup="linear", warmup_iters=0), ValueError, "warmup_iters"),
        (
            lambda: FixedLrUpdaterHook(warmup="linear", warmup_iters=2, warmup_ratio=0),
            ValueError,
            r'"warmup_ratio" must be in \(0, 1\]',
        ),
        (lambda: CyclicLrUpdaterHook(by_epoch=True), ValueError, "by_epoch=False"),
        (lambda: CyclicLrUpdaterHook(anneal_strategy="quad"), ValueError, "anneal_strategy"),
        (lambda: CyclicLrUpdaterHook(gamma=0), ValueError, '"gamma" must be in'),
        (lambda: CyclicLrUpdaterHook(step_ratio_up=1.0), ValueError, "step_ratio_up"),
        (lambda: CyclicLrUpdaterHook(target_ratio="x"), ValueError, "target_ratio"),
        (lambda: OneCycleLrUpdaterHook(max_lr="1"), ValueError, "max_lr"),
        (lambda: OneCycleLrUpdaterHook(max_lr=1.0, pct_start=1.5), ValueError, "pct_start"),
        (lambda: OneCycleLrUpdaterHook(max_lr=1.0, by_epoch=True), ValueError, "by_epoch"),
        (lambda: OneCycleLrUpdaterHook(max_lr=1.0, total_steps=0), ValueError, "total_steps"),
    ],
)
def test_bad_arguments(make, exc, message):
    with pytest.raises(exc, match=message):
        make()


def test_bad_arguments_through_registry_name_the_hook():
    with pytest.raises(ValueError, match="StepLrUpdaterHook.*step"):
        build_from_cfg(dict(type="StepLrUpdaterHook", step=-1), HOOKS)


def test_bad_arguments_found_at_before_run():
    with pytest.raises(ValueError, match="total_steps=5 must be >= .* max_iters=8"):
        lrs_of(OneCycleLrUpdaterHook(max_lr=1.0, total_steps=5))
    with pytest.raises(ValueError, match="expected 1 values"):
        lrs_of(OneCycleLrUpdaterHook(max_lr=[1.0, 2.0]))
    with pytest.raises(ValueError, match="smaller than cyclic_times"):
        lrs_of(CyclicLrUpdaterHook(cyclic_times=9))


# ------------------------------------------------------------------------------------------
# With the real EpochBasedRunner
# ------------------------------------------------------------------------------------------
class EpochLrRecorder(Hook):
    """A NORMAL-priority hook recording ``runner.current_lr()`` at each epoch start."""

    def __init__(self):
        self.lrs = []

    def before_train_epoch(self, runner):
        self.lrs.append(runner.current_lr())


def _epoch_runner(tmp_path, max_epochs):
    torch.manual_seed(0)
    model = TinyModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    runner = EpochBasedRunner(
        model, optimizer=optimizer, work_dir=str(tmp_path), max_epochs=max_epochs
    )
    runner.register_training_hooks(
        lr_config=dict(policy="step", step=[1, 2], gamma=0.1),
        optimizer_config=dict(grad_clip=None),
    )
    recorder = EpochLrRecorder()
    runner.register_hook(recorder)
    return runner, model, recorder


def test_epoch_based_runner_step_policy(tmp_path):
    loader = torch.utils.data.DataLoader(torch.randn(8, 2), batch_size=4)  # 2 iterations
    runner, model, recorder = _epoch_runner(tmp_path, max_epochs=3)
    assert any(isinstance(h, StepLrUpdaterHook) for h in runner.hooks)
    runner.run([loader], [("train", 1)])
    assert recorder.lrs == [approx([0.1]), approx([0.01]), approx([0.001])]
    assert [g["lr"] for g in model.groups] == approx([0.1, 0.1, 0.01, 0.01, 0.001, 0.001])
    assert runner.current_lr() == approx([0.001])


def test_epoch_based_runner_resume_keeps_schedule(tmp_path):
    loader = torch.utils.data.DataLoader(torch.randn(8, 2), batch_size=4)
    first, _, _ = _epoch_runner(tmp_path / "a", max_epochs=2)
    first.run([loader], [("train", 1)])
    ckpt = first.save_checkpoint(str(tmp_path / "a"))

    second, model, recorder = _epoch_runner(tmp_path / "b", max_epochs=3)
    second.optimizer.param_groups[0]["lr"] = 0.5  # a rebuilt optimizer starts elsewhere
    second.resume(ckpt)
    second.run([loader], [("train", 1)])
    assert recorder.lrs == [approx([0.001])]
    assert [g["lr"] for g in model.groups] == approx([0.001, 0.001])
