"""EMAHook: exact update rule, warm-up, epoch-end swap, state round trip."""

import pytest
import torch
from torch import nn

from mmpar.parallel import MMDataParallel
from mmpar.runner.hooks import HOOKS
from mmpar.runner.hooks.ema import EMAHook

torch.set_num_threads(1)


class FakeRunner:
    def __init__(self, model):
        self.model = model
        self.iter = self.epoch = 0


def set_weight(model, value):
    with torch.no_grad():
        model.weight.fill_(value)
        model.bias.fill_(-value)


def test_registered_and_bad_args():
    assert HOOKS.get("EMAHook") is EMAHook
    with pytest.raises(ValueError, match="momentum"):
        EMAHook(momentum=1.5)
    with pytest.raises(ValueError, match="interval"):
        EMAHook(interval=0)
    with pytest.raises(ValueError, match="warm_up"):
        EMAHook(warm_up=0)


def test_momentum_schedule():
    hook = EMAHook(momentum=0.01, warm_up=10)
    assert hook.momentum_at(0) == pytest.approx(0.9)  # (10 - 1) / (10 + 0)
    assert hook.momentum_at(80) == pytest.approx(9 / 90)
    assert hook.momentum_at(10_000) == pytest.approx(0.01)  # settled at momentum
    assert EMAHook(momentum=0.1, interval=2).momentum_at(10_000) == pytest.approx(0.19)


def test_update_and_swap_exact():
    model = nn.Linear(1, 1)
    set_weight(model, 0.0)
    hook = EMAHook(momentum=0.5, warm_up=1)  # warm_up=1: constant momentum 0.5
    runner = FakeRunner(model)
    hook.before_run(runner)
    hook.before_train_epoch(runner)
    expected = 0.0
    for step, value in enumerate([4.0, 8.0, 2.0]):
        set_weight(model, value)  # what the optimizer step produced
        runner.iter = step
        hook.after_train_iter(runner)
        expected = 0.5 * expected + 0.5 * value
    assert expected == 3.5  # 0 -> 2 -> 5 -> 3.5
    hook.after_train_epoch(runner)
    # Evaluation / checkpoint see the EMA; the live weights are kept aside.
    assert model.weight.item() == 3.5 and model.bias.item() == -3.5
    assert hook.swapped
    hook.before_train_epoch(runner)
    assert model.weight.item() == 2.0 and model.bias.item() == -2.0
    assert not hook.swapped
    # Swapping twice in a row is not possible: the flag guards each direction.
    hook.before_train_epoch(runner)
    assert model.weight.item() == 2.0


def test_interval_skips_iterations():
    model = nn.Linear(1, 1)
    set_weight(model, 0.0)
    hook = EMAHook(momentum=0.5, interval=2, warm_up=1)
    runner = FakeRunner(model)
    hook.before_run(runner)
    for step in range(4):
        set_weight(model, float(step + 1))
        runner.iter = step
        hook.after_train_iter(runner)
    # Updates at iterations 0 and 2 with m = 1 - 0.5**2 = 0.75.
    assert hook.state_dict()["ema"]["weight"].item() == pytest.approx(0.75 * 3 + 0.25 * 0.75)


def test_unwraps_module_wrapper_and_keeps_model_state_dict_clean():
    model = nn.Linear(2, 1)
    wrapped = MMDataParallel(model, device_ids=None)
    hook = EMAHook()
    hook.before_run(FakeRunner(wrapped))
    assert set(hook.state_dict()["ema"]) == {"weight", "bias"}
    assert set(model.state_dict()) == {"weight", "bias"}  # no ema_* buffers added


def test_averages_carry_the_checkpoints_names_under_compile_and_a_wrapper():
    # The checkpoint's state dict drops torch.compile's ``_orig_mod.``; the EMA names match it.
    model = nn.Linear(2, 1)
    hook = EMAHook()
    hook.before_run(FakeRunner(MMDataParallel(torch.compile(model), device_ids=None)))
    assert set(hook.state_dict()["ema"]) == {"weight", "bias"}


def test_state_round_trip_resumes_exactly():
    def train(hook, model, runner, steps, values):
        for step, value in zip(steps, values):
            set_weight(model, value)
            runner.iter = step
            hook.after_train_iter(runner)

    values = [1.0, 5.0, 3.0, 7.0]
    ref_model = nn.Linear(1, 1)
    set_weight(ref_model, 0.0)
    ref = EMAHook(momentum=0.3, warm_up=3)
    ref_runner = FakeRunner(ref_model)
    ref.before_run(ref_runner)
    train(ref, ref_model, ref_runner, range(4), values)

    model = nn.Linear(1, 1)
    set_weight(model, 0.0)
    first = EMAHook(momentum=0.3, warm_up=3)
    runner = FakeRunner(model)
    first.before_run(runner)
    train(first, model, runner, range(2), values[:2])
    first.after_train_epoch(runner)  # checkpoint at an epoch end: model holds the EMA
    state = first.state_dict()
    model_state = {k: v.clone() for k, v in model.state_dict().items()}

    resumed_model = nn.Linear(1, 1)
    resumed_model.load_state_dict(model_state)
    resumed = EMAHook(momentum=0.3, warm_up=3)
    resumed.load_state_dict(state)  # the runner restores hook state before before_run
    resumed_runner = FakeRunner(resumed_model)
    resumed.before_run(resumed_runner)
    resumed.before_train_epoch(resumed_runner)
    assert resumed_model.weight.item() == 5.0  # live weights are back
    train(resumed, resumed_model, resumed_runner, range(2, 4), values[2:])
    assert torch.equal(resumed.state_dict()["ema"]["weight"], ref.state_dict()["ema"]["weight"])


def test_state_of_another_model_is_rejected():
    hook = EMAHook()
    hook.before_run(FakeRunner(nn.Linear(1, 1)))
    with pytest.raises(KeyError, match="missing"):
        hook.load_state_dict({"ema": {"other.weight": torch.zeros(1)}, "swapped": False})
