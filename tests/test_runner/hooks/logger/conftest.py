"""Fixtures of the tracker logger-hook tests: offline trackers, one short real training."""

import json
import os
import sys

import pytest

from mmpar.runner import IterTimerHook, OptimizerHook
from mmpar.runner.hooks.logger.text import TextLoggerHook


@pytest.fixture(scope="module")
def mlflow_db(tmp_path_factory):
    """One MLflow SQLite store for the module (creating its tables takes seconds)."""
    return tmp_path_factory.mktemp("mlflow") / "mlflow.db"


@pytest.fixture
def isolated(tmp_path, monkeypatch, mlflow_db):
    """Run in tmp_path with the trackers offline, local and silent."""
    monkeypatch.chdir(tmp_path)
    env = {
        "MLFLOW_TRACKING_URI": f"sqlite:///{mlflow_db}",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "DO_NOT_TRACK": "true",
        "DVC_NO_ANALYTICS": "1",
        "WANDB_MODE": "offline",
        "WANDB_DIR": str(tmp_path),
        "WANDB_SILENT": "true",
        "WANDB_DISABLE_GIT": "true",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("MLFLOW_EXPERIMENT_NAME", "MLFLOW_RUN_ID", "WANDB_PROJECT", "WANDB_RUN_ID"):
        monkeypatch.delenv(key, raising=False)
    yield tmp_path
    # MlflowLoggerHook leaves its run active, as mmcv's did; end it while the tracking URI is
    # still the test's (otherwise MLflow ends it at exit in a default store in the cwd).
    if "mlflow" in sys.modules:
        sys.modules["mlflow"].end_run()


@pytest.fixture
def train(make_runner, make_loader):
    """``train(tracker, interval=1, by_epoch=True)``: 2 epochs (train + val workflow) with the
    tracker and a TextLoggerHook; returns the runner and the JSON log's records.
    """

    def run(tracker, interval=1, by_epoch=True):
        runner = make_runner(max_epochs=2)
        runner.timestamp = "20240101_000000"
        runner.register_hook(OptimizerHook(), "ABOVE_NORMAL")
        runner.register_hook(IterTimerHook(), "LOW")
        runner.register_hook(TextLoggerHook(interval=interval, by_epoch=by_epoch), "VERY_LOW")
        runner.register_hook(tracker, "VERY_LOW")
        runner.run([make_loader(), make_loader()], [("train", 1), ("val", 1)])
        with open(os.path.join(runner.work_dir, "20240101_000000.log.json")) as f:
            records = [r for r in map(json.loads, f) if "mode" in r]
        return runner, records

    return run
