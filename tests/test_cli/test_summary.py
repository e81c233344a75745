"""The run summary: status, progress, best metric, last checkpoint, wall time from the runner."""

import logging
import os
import signal

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

import mmpar.runner as R
from mmpar.cli import format_summary, report_summary, run_status

X = torch.linspace(-1, 1, 8).unsqueeze(1)


class Line(list):
    """Samples of y = 3x; ``evaluate`` scores predictions by their mean squared error."""

    def __init__(self):
        super().__init__({"x": x, "y": 3 * x} for x in X)

    def evaluate(self, results, logger=None):
        return {"mse_loss": float(((torch.tensor(results) - 3 * X.flatten()) ** 2).mean())}


class Fit(nn.Linear):
    """``nn.Linear(1, 1)`` with the model API: a loss in training, predictions otherwise."""

    def __init__(self):
        super().__init__(1, 1)

    def forward(self, x, y=None, return_loss=True):
        out = super().forward(x)
        return ((out - y) ** 2).mean() if return_loss else out.flatten().tolist()

    def train_step(self, data, optimizer):
        loss = self(**data)
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(data["x"])}


class SignalAt(R.Hook):
    """Send this process SIGTERM after iteration ``n`` (1-based), as a scheduler would."""

    def __init__(self, n):
        self.n = n

    def after_train_iter(self, runner):
        if runner.iter + 1 == self.n:
            os.kill(os.getpid(), signal.SIGTERM)


def _build(work_dir, lr, max_epochs=4, early_stopping=False):
    torch.manual_seed(0)
    model = Fit()
    runner = R.EpochBasedRunner(
        model,
        optimizer=torch.optim.SGD(model.parameters(), lr=lr),
        work_dir=str(work_dir),
        logger=logging.getLogger("test_cli.summary"),
        meta={},
        max_epochs=max_epochs,
    )
    runner.register_hook(R.OptimizerHook(), priority="ABOVE_NORMAL")
    runner.register_hook(R.CheckpointHook(interval=1))
    runner.register_hook(R.EvalHook(DataLoader(Line(), batch_size=4), save_best="auto"), "LOW")
    if early_stopping:
        runner.register_hook(R.EarlyStoppingHook("mse_loss", patience=1), priority="VERY_LOW")
    return runner


def _run(work_dir, lr, max_epochs=4, early_stopping=False):
    runner = _build(work_dir, lr, max_epochs, early_stopping)
    runner.run([DataLoader(Line(), batch_size=4)], [("train", 1)])
    return runner


def test_finished_run(tmp_path, capsys):
    runner = _run(tmp_path, lr=0.1)
    assert run_status(runner) == "finished"
    text = report_summary(runner, run_status(runner), 75.4)
    assert capsys.readouterr().out == text + "\n"
    best = runner.meta["hook_msgs"]["best_ckpt"]
    assert os.path.isfile(best)
    assert text.splitlines() == [
        f"Run summary (work_dir: {tmp_path})",
        "  status:          finished",
        "  trained:         epoch 4 of 4, iteration 8 of 8",
        f"  best:            mse_loss = {runner.meta['hook_msgs']['best_score']:.4f} "
        f"({os.path.basename(best)})",
        "  last checkpoint: epoch_4.pth",
        "  wall time:       0:01:15",
    ]


def test_stopped_early_run(tmp_path):
    runner = _run(tmp_path, lr=0.0, max_epochs=10, early_stopping=True)  # nothing improves
    assert runner.should_stop and runner.epoch == 2
    assert run_status(runner) == "stopped early"
    text = format_summary(runner, run_status(runner), 3)
    assert "status:          stopped early" in text
    assert "trained:         epoch 2 of 10, iteration 4 of 20" in text
    assert f"best:            mse_loss = {runner.meta['hook_msgs']['best_score']:.4f}" in text
    assert "best_mse_loss_epoch_1.pth" in text
    assert "last checkpoint: epoch_2.pth" in text


def test_preempted_mid_epoch_run_counts_what_was_trained(tmp_path):
    runner = _build(tmp_path, lr=0.1)  # 2 iterations per epoch
    runner.register_hook(SignalAt(3))
    runner.register_hook(R.PreemptionHook(), priority="LOWEST")
    with pytest.raises(R.TrainingPreempted):
        runner.run([DataLoader(Line(), batch_size=4)], [("train", 1)])
    text = format_summary(runner, "preempted", 1)
    # 3 iterations were trained: epoch 1 and the first iteration of epoch 2.
    assert "trained:         epoch 1 of 4 + 1 iterations of epoch 2, iteration 3 of 8" in text
    assert "last checkpoint: preempted_iter_3.pth" in text


def test_latest_link_wins_when_newer_and_nothing_saved_says_so(tmp_path):
    runner = _run(tmp_path, lr=0.1, max_epochs=1)
    # A checkpoint saved outside CheckpointHook (e.g. on preemption) moves latest.pth only.
    runner.save_checkpoint(str(tmp_path), filename_tmpl="mid_epoch.pth")
    os.utime(tmp_path / "epoch_1.pth", ns=(0, 0))
    text = format_summary(runner, "preempted", 1)
    assert "last checkpoint: mid_epoch.pth" in text
    runner.meta = {}
    for name in os.listdir(tmp_path):
        os.remove(tmp_path / name)
    text = format_summary(runner, "failed: CheckpointSaveError", 0)
    assert "last checkpoint: none written" in text and "best:" not in text
    runner.meta = {"hook_msgs": {"best_score": 0.5, "best_ckpt": "/elsewhere/best_x_epoch_1.pth"}}
    text = format_summary(runner, "finished", 0)  # outside the work dir: the full path
    assert "best:            mse_loss = 0.5000 (/elsewhere/best_x_epoch_1.pth)" in text


def test_a_sharded_checkpoint_directory_counts_as_the_last_checkpoint(tmp_path):
    runner = _run(tmp_path, lr=0.1, max_epochs=1)
    # A sharded (FSDP) checkpoint is a directory under the checkpoint's name.
    os.remove(tmp_path / "epoch_1.pth")
    os.mkdir(tmp_path / "epoch_1.pth")
    assert "last checkpoint: epoch_1.pth" in format_summary(runner, "finished", 0)


def test_other_ranks_print_nothing(tmp_path, capsys):
    runner = _run(tmp_path, lr=0.1, max_epochs=1)
    runner._rank = 1
    assert report_summary(runner, "finished", 1) is None
    assert capsys.readouterr().out == ""
