"""DvcliveLoggerHook: steps, values and the model file DVCLive writes, read back from its files."""

import json

import pytest
import torch
from helpers.logger_runner import train_losses, val_losses


def read_tsv(path):
    with open(path) as f:
        lines = f.read().split()
    header, values = lines[:2], lines[2:]
    assert header[0] == "step"
    return [(int(values[i]), float(values[i + 1])) for i in range(0, len(values), 2)]


def test_dvclive_by_epoch_steps_and_model_file(isolated, train):
    from mmpar.runner.hooks.logger.dvclive import DvcliveLoggerHook

    out = isolated / "dvclive"
    model_file = isolated / "models" / "model.pth"
    hook = DvcliveLoggerHook(
        model_file=str(model_file), interval=1, dir=str(out), save_dvc_exp=False
    )
    runner, records = train(hook)

    expected = train_losses(records)
    # mmcv's by_epoch: no per-iteration records; at the end of each epoch the last train
    # record (this hook is the last logger), and the val epoch, both at the epoch's step.
    assert read_tsv(out / "plots" / "metrics" / "train" / "loss.tsv") == [
        (1, pytest.approx(expected[3], abs=1e-5)),
        (2, pytest.approx(expected[6], abs=1e-5)),
    ]
    val = read_tsv(out / "plots" / "metrics" / "val" / "val_loss.tsv")
    assert [s for s, _ in val] == [1, 2]
    assert [v for _, v in val] == pytest.approx(val_losses(records), abs=1e-5)
    summary = json.loads((out / "metrics.json").read_text())
    assert summary["step"] == 2
    assert summary["val"]["val_loss"] == pytest.approx(val_losses(records)[-1], abs=1e-5)
    assert torch.load(model_file, weights_only=False)["meta"]["epoch"] == 2


def test_dvclive_by_iter_steps(isolated, train):
    from mmpar.runner.hooks.logger.dvclive import DvcliveLoggerHook

    out = isolated / "dvclive_iter"
    hook = DvcliveLoggerHook(interval=2, by_epoch=False, dir=str(out), save_dvc_exp=False)
    _, records = train(hook, interval=2, by_epoch=False)
    # Val records (lr and momentum included, as in mmcv) at runner.iter + 1.
    lr = read_tsv(out / "plots" / "metrics" / "learning_rate.tsv")
    assert [s for s, _ in lr] == [2, 4, 4, 6, 7]
    val = read_tsv(out / "plots" / "metrics" / "val" / "val_loss.tsv")
    assert [s for s, _ in val] == [4, 7]
    # by_epoch=False counts the interval over all iterations: records at global steps 2, 4, 6,
    # each the mean of the last 2 iterations (what the text log shows too).
    loss = read_tsv(out / "plots" / "metrics" / "train" / "loss.tsv")
    assert [s for s, _ in loss] == [2, 4, 6]
    text = [r["loss"] for r in records if r["mode"] == "train"]
    assert [v for _, v in loss] == pytest.approx(text, abs=1e-5)
