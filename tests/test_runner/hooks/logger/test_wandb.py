"""WandbLoggerHook: an offline run's history, steps, summary and artifact, read back with wandb."""

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.logger_runner import train_losses, val_losses


def read_wandb_records(wandb_dir):
    """The records of the offline run's .wandb file, read with wandb's own CLI reader."""
    (run_file,) = glob.glob(os.path.join(wandb_dir, "wandb", "offline-run-*", "run-*.wandb"))
    cli = Path(sys.executable).with_name("wandb")
    out = subprocess.run(
        [str(cli), "leet", "inspect", "--json", run_file],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_wandb_offline_history_steps_summary_artifact(isolated, train):
    from mmpar.runner.hooks.logger.wandb import WandbLoggerHook

    hook = WandbLoggerHook(
        init_kwargs=dict(project="toy", config=dict(lr=0.01), dir=str(isolated)),
        interval=1,
        define_metric_cfg={"val/val_loss": "min", "train/loss": "median"},
    )
    with pytest.warns(UserWarning, match="median"):
        runner, records = train(hook)
    import wandb

    assert wandb.run is None  # wandb.join() finished the run

    rows = {}
    kinds = set()
    for rec in read_wandb_records(isolated):
        kinds.add(rec["type"])
        if rec["type"] == "history":
            rows[rec["history"]["step"].get("num", 0)] = rec["history"]["item"]
    expected = train_losses(records)
    # mmcv's calls: wandb.log(tags, step=runner.iter + 1, commit=True). The val epochs land at
    # steps 4 and 7; the first train record of epoch 2 (also step 4, logged after the val
    # record was committed) is dropped by wandb, as it was under mmcv.
    assert sorted(rows) == list(range(1, 8))
    for step in (1, 2, 3, 5, 6):
        assert rows[step]["train/loss"] == pytest.approx(expected[step], abs=1e-5)
    for step, val_loss in zip((4, 7), val_losses(records)):
        assert rows[step]["val/val_loss"] == pytest.approx(val_loss, abs=1e-5)
        assert "train/loss" not in rows[step]
    assert all(row["learning_rate"] == pytest.approx(0.01) for row in rows.values())
    assert "metric" in kinds and "artifact" in kinds  # define_metric and the log artifact


def test_wandb_without_step_logs_global_step(isolated, train):
    from mmpar.runner.hooks.logger.wandb import WandbLoggerHook

    hook = WandbLoggerHook(
        init_kwargs=dict(dir=str(isolated)), interval=3, with_step=False, log_artifact=False
    )
    train(hook, interval=3)
    rows = [r["history"]["item"] for r in read_wandb_records(isolated) if r["type"] == "history"]
    # One row per record: train at steps 3 and 6, each followed by its val record at
    # runner.iter + 1 (mmcv's step).
    assert [(r["global_step"], "train/loss" in r, "val/val_loss" in r) for r in rows] == [
        (3, True, False),
        (4, False, True),
        (6, True, False),
        (7, False, True),
    ]
