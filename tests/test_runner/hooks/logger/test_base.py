"""LoggerHook: loggable tags, per optimizer LR and momentum; when a record is due."""

import pytest
import torch
from helpers.logger_runner import FakeRunner

from mmpar.runner import Hook, TextLoggerHook
from mmpar.runner.hooks.logger.base import LoggerHook

torch.set_num_threads(1)


def test_loggable_tags_and_lr_dicts(tmp_path):
    class Dummy(LoggerHook):
        def log(self, runner):
            pass

    hook = Dummy()
    runner = FakeRunner([hook], tmp_path)
    runner.log_buffer.output.update(
        {"loss": torch.tensor(0.5), "time": 1.0, "per_class": [1, 2], "note": "hi"}
    )
    # mmcv's rules: values as they are, only time/data_time (and text, by default) left out.
    assert hook.get_loggable_tags(runner) == {
        "train/loss": torch.tensor(0.5),
        "train/per_class": [1, 2],
        "learning_rate": 0.1,
        "momentum": 0.9,
    }
    assert hook.get_loggable_tags(runner, allow_text=True, add_mode=False)["note"] == "hi"
    assert "train/loss" not in hook.get_loggable_tags(runner, allow_scalar=False)
    # What TensorBoard plots: scalars as Python numbers, no lists.
    assert hook.get_record_tags(runner) == {
        "train/loss": 0.5,
        "learning_rate": 0.1,
        "momentum": 0.9,
    }
    runner.current_lr = lambda: {"gen": [0.1], "disc": [0.2]}
    runner.current_momentum = lambda: {"gen": [0.9], "disc": [0.8]}
    tags = hook.get_loggable_tags(runner)
    assert tags["learning_rate/disc"] == 0.2 and tags["momentum/gen"] == 0.9
    runner.mode = "test"
    with pytest.raises(ValueError, match="'test'"):
        hook.get_mode(runner)


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
