"""LoggerHook: which log-buffer values are loggable tags, per optimizer LR and momentum."""

import pytest
import torch
from helpers.logger_runner import FakeRunner

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
