"""TensorboardLoggerHook: the tags, global steps and values of the events it writes."""

import torch
from helpers.logger_runner import FakeRunner, eval_hook, read_tb

from mmpar.runner.hooks.logger.tensorboard import TensorboardLoggerHook

torch.set_num_threads(1)


def test_tensorboard_tags_steps_values(tmp_path):
    tb = TensorboardLoggerHook(interval=2)
    ev = eval_hook([0.5, 0.75])
    runner = FakeRunner([ev, tb], tmp_path, iters_per_epoch=4)
    runner.run([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    assert tb.writer is None  # closed in after_run
    scalars = read_tb(tmp_path / "tf_logs")
    assert set(scalars) == {
        "train/loss",
        "train/acc_train",
        "val/accuracy",
        "learning_rate",
        "momentum",
    }
    assert scalars["train/loss"] == [(2, 1.5), (4, 3.5), (6, 5.5), (8, 7.5)]
    # The global step is the number of optimizer steps: val shares the last train step.
    assert scalars["val/accuracy"] == [(4, 0.5), (8, 0.75)]
    assert scalars["learning_rate"] == [(s, 0.1) for s in (2, 4, 6, 8)]
    assert scalars["momentum"] == [(s, 0.9) for s in (2, 4, 6, 8)]
