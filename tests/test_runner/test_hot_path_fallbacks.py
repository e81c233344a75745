"""The per-iteration shortcuts keep mmcv's behaviour wherever their conditions do not hold.

``call_hook`` runs the stage's calls from C, the iter timer appends to a ``LogBuffer``
directly, a plain ``OptimizerHook`` steps without its helper calls and a logger hook writes
``record_due`` out: each test below takes a case a shortcut must leave to the general path.
"""

import pytest
import torch

from mmpar.runner import Hook, IterTimerHook, LogBuffer, OptimizerHook, TextLoggerHook


class ReturnsTrue(Hook):
    def __init__(self, name, calls):
        self.name, self.calls = name, calls

    def after_train_iter(self, runner):
        self.calls.append(self.name)
        return True  # a truthy result must not end the stage


def test_every_hook_of_a_stage_runs_in_order_whatever_they_return(make_runner, make_loader):
    calls = []
    runner = make_runner(max_epochs=1)
    for name in "abc":
        runner.register_hook(ReturnsTrue(name, calls))
    runner.run([make_loader(8, 4)], [("train", 1)])
    assert calls == list("abcabc")


class Raises(Hook):
    def __init__(self, calls):
        self.calls = calls

    def before_train_iter(self, runner):
        self.calls.append("raises")
        raise KeyError("from a hook")


class After(Hook):
    def __init__(self, calls):
        self.calls = calls

    def before_train_iter(self, runner):
        self.calls.append("after")


def test_a_hook_error_ends_the_stage_and_propagates(make_runner, make_loader):
    calls = []
    runner = make_runner(max_epochs=1)
    runner.register_hook(Raises(calls), "HIGH")
    runner.register_hook(After(calls), "LOW")
    with pytest.raises(KeyError, match="from a hook"):
        runner.run([make_loader(8, 4)], [("train", 1)])
    assert calls == ["raises"]


class CountingBuffer(LogBuffer):
    """A subclass overriding ``update``: every value must still pass through it."""

    def __init__(self):
        super().__init__()
        self.keys = []

    def update(self, vars, count=1):
        self.keys.extend(vars)
        super().update(vars, count)


def test_iter_timer_calls_update_of_a_log_buffer_subclass(make_runner, make_loader):
    runner = make_runner(max_epochs=1)
    runner.log_buffer = CountingBuffer()
    runner.register_hook(IterTimerHook(), "LOW")
    runner.run([make_loader(8, 4)], [("train", 1)])
    assert runner.log_buffer.keys == ["data_time", "loss", "time"] * 2
    assert list(runner.log_buffer.val_history) == ["data_time", "loss", "time"]


def test_iter_timer_fills_a_log_buffer_as_update_does():
    direct, updated = LogBuffer(), LogBuffer()
    direct._append("time", 0.5)
    direct._append("time", 0.25, 3)
    updated.update({"time": 0.5})
    updated.update({"time": 0.25}, 3)
    assert direct.val_history == updated.val_history
    assert direct.n_history == updated.n_history


class ScaledBackward(OptimizerHook):
    """A subclass of the plain hook: its own ``_backward`` must run, not the inline steps."""

    def __init__(self):
        super().__init__()
        self.losses = 0

    def _backward(self, runner, loss):
        self.losses += 1
        (loss * 2).backward()


def test_optimizer_hook_subclass_helpers_still_run(make_runner, make_loader):
    hook = ScaledBackward()
    runner = make_runner(max_epochs=1)
    runner.register_optimizer_hook(hook)
    runner.run([make_loader(8, 4)], [("train", 1)])
    assert hook.losses == 2


def test_optimizer_hook_clips_when_grad_clip_is_set(make_runner, make_loader):
    runner = make_runner(max_epochs=1)
    runner.register_optimizer_hook(OptimizerHook(grad_clip=dict(max_norm=1e-3)))
    runner.run([make_loader(8, 4)], [("train", 1)])
    assert len(runner.log_buffer.val_history["grad_norm"]) == 2


def test_optimizer_hook_names_a_loss_that_is_no_tensor(make_runner, make_loader, toy_model):
    class FloatLoss(type(toy_model)):
        def train_step(self, data_batch, optimizer, **kwargs):
            return {"loss": 1.0, "log_vars": {}, "num_samples": 4}

    runner = make_runner(model=FloatLoss(), max_epochs=1)
    runner.register_optimizer_hook(OptimizerHook())
    with pytest.raises(TypeError, match=r'outputs\["loss"\] must be a tensor.*float'):
        runner.run([make_loader(8, 4)], [("train", 1)])


class EverySecond(TextLoggerHook):
    """Overrides a helper ``record_due`` uses: the override decides when to log."""

    def every_n_inner_iters(self, runner, n):
        return runner.inner_iter % 2 == 1


def _logged_iters(hook, runner, loader):
    logged = []
    hook.log = lambda runner: logged.append(runner.inner_iter)
    runner.register_hook(hook, "VERY_LOW")
    runner.run([loader], [("train", 1)])
    return logged


def test_logger_interval_of_a_plain_hook(make_runner, make_loader):
    runner = make_runner(max_epochs=1)
    assert _logged_iters(TextLoggerHook(interval=3), runner, make_loader(28, 4)) == [2, 5]


def test_logger_subclass_override_of_every_n_inner_iters_counts(make_runner, make_loader):
    runner = make_runner(max_epochs=1)
    assert _logged_iters(EverySecond(interval=50), runner, make_loader(20, 4)) == [1, 3]


def test_logger_instance_override_of_record_due_counts(make_runner, make_loader):
    hook = TextLoggerHook(interval=50)
    hook.record_due = lambda runner: runner.inner_iter == 2
    runner = make_runner(max_epochs=1)
    assert _logged_iters(hook, runner, make_loader(20, 4)) == [2]


def test_logger_interval_changed_mid_epoch_counts_at_once(make_runner, make_loader):
    class Shorten(Hook):
        def after_train_iter(self, runner):
            if runner.inner_iter == 1:
                logger.interval = 2

    logger = TextLoggerHook(interval=50)
    runner = make_runner(max_epochs=1)
    runner.register_hook(Shorten(), "HIGHEST")
    assert _logged_iters(logger, runner, make_loader(24, 4)) == [1, 3, 5]


def test_logger_end_of_epoch_record_when_ignore_last_is_false(make_runner, make_loader):
    runner = make_runner(max_epochs=1)
    hook = TextLoggerHook(interval=4, ignore_last=False)
    assert _logged_iters(hook, runner, make_loader(24, 4)) == [3, 5]


def test_a_no_grad_tensor_loss_still_fails_in_backward(make_runner, make_loader, toy_model):
    class Detached(type(toy_model)):
        def train_step(self, data_batch, optimizer, **kwargs):
            return {"loss": torch.tensor(1.0), "log_vars": {}, "num_samples": 4}

    runner = make_runner(model=Detached(), max_epochs=1)
    runner.register_optimizer_hook(OptimizerHook())
    with pytest.raises(RuntimeError, match="does not require grad"):
        runner.run([make_loader(8, 4)], [("train", 1)])
