"""Tracker logger hooks (MLflow, wandb, DVCLive): real short trainings, read back from each library.

Every test trains the toy model for 2 epochs of 3 iterations plus a val epoch after each, with a
TextLoggerHook next to the tracker hook; the tracker's values are compared with the JSON log.
"""

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from helpers import REPO

from mmpar.runner import IterTimerHook, OptimizerHook
from mmpar.runner.hooks import HOOKS
from mmpar.runner.hooks.logger.text import TextLoggerHook

ITERS_PER_EPOCH = 3  # 12 samples, batch 4


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


def train(make_runner, make_loader, tracker, interval=1, by_epoch=True):
    """Train 2 epochs (train + val workflow) with the tracker and a TextLoggerHook."""
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


def train_losses(records):
    """``{global step: loss}`` of the JSON log's train records (interval 1)."""
    return {
        (r["epoch"] - 1) * ITERS_PER_EPOCH + r["iter"]: r["loss"]
        for r in records
        if r["mode"] == "train"
    }


def val_losses(records):
    return [r["val_loss"] for r in records if r["mode"] == "val"]


# mlflow's own SQLAlchemy store uses a loader option SQLAlchemy deprecates; not ours to fix.
@pytest.mark.filterwarnings("ignore:The ``noload`` loader strategy is deprecated")
def test_mlflow_metrics_params_tags_and_model(isolated, make_runner, make_loader, toy_model):
    from mlflow import MlflowClient
    from mlflow.pytorch import load_model

    hook = HOOKS.build(
        dict(
            type="MlflowLoggerHook",
            exp_name="toy",
            tags={"team": "vision"},
            params={"lr": 0.01, "arch": "linear"},
            interval=1,
        )
    )
    runner, records = train(make_runner, make_loader, hook)

    import mlflow

    # As under mmcv, the run MLflow started on the hook's first call stays active after
    # training (MLflow ends it at exit); the caller ends it.
    active = mlflow.active_run()
    assert active is not None
    mlflow.end_run()
    client = MlflowClient()
    experiment = client.get_experiment_by_name("toy")
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.info.run_id == active.info.run_id
    assert run.data.params == {"lr": "0.01", "arch": "linear"}
    assert run.data.tags["team"] == "vision"

    history = client.get_metric_history(run.info.run_id, "train/loss")
    expected = train_losses(records)
    assert [m.step for m in history] == list(range(1, 7))
    assert [m.value for m in history] == pytest.approx([expected[s] for s in range(1, 7)], abs=1e-5)
    # Every record (val too) carries lr and momentum at step runner.iter + 1; a val epoch
    # after 3 iterations is at step 4, as in mmcv.
    lr = client.get_metric_history(run.info.run_id, "learning_rate")
    assert sorted(m.step for m in lr) == [1, 2, 3, 4, 4, 5, 6, 7]
    assert lr[0].value == pytest.approx(0.01)
    val = sorted(client.get_metric_history(run.info.run_id, "val/val_loss"), key=lambda m: m.step)
    assert [m.step for m in val] == [4, 7]
    assert [m.value for m in val] == pytest.approx(val_losses(records), abs=1e-5)
    assert "train/time" not in run.data.metrics

    model = load_model(f"runs:/{run.info.run_id}/models")
    for name, value in toy_model.state_dict().items():
        assert torch.equal(model.state_dict()[name], value)


def test_mlflow_uses_an_active_run_and_leaves_it_open(isolated, make_runner, make_loader):
    import mlflow

    from mmpar.runner.hooks.logger.mlflow import MlflowLoggerHook

    mlflow.set_experiment("outer")  # not the experiment id another test left selected
    with mlflow.start_run() as outer:
        hook = MlflowLoggerHook(log_model=False, interval=3)
        train(make_runner, make_loader, hook, interval=3)
        assert mlflow.active_run().info.run_id == outer.info.run_id
    run = mlflow.MlflowClient().get_run(outer.info.run_id)
    assert run.data.metrics["train/loss"] > 0
    history = mlflow.MlflowClient().get_metric_history(outer.info.run_id, "train/loss")
    assert [m.step for m in history] == [3, 6]


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


def test_wandb_offline_history_steps_summary_artifact(isolated, make_runner, make_loader):
    from mmpar.runner.hooks.logger.wandb import WandbLoggerHook

    hook = WandbLoggerHook(
        init_kwargs=dict(project="toy", config=dict(lr=0.01), dir=str(isolated)),
        interval=1,
        define_metric_cfg={"val/val_loss": "min", "train/loss": "median"},
    )
    with pytest.warns(UserWarning, match="median"):
        runner, records = train(make_runner, make_loader, hook)
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


def test_wandb_without_step_logs_global_step(isolated, make_runner, make_loader):
    from mmpar.runner.hooks.logger.wandb import WandbLoggerHook

    hook = WandbLoggerHook(
        init_kwargs=dict(dir=str(isolated)), interval=3, with_step=False, log_artifact=False
    )
    train(make_runner, make_loader, hook, interval=3)
    rows = [r["history"]["item"] for r in read_wandb_records(isolated) if r["type"] == "history"]
    # One row per record: train at steps 3 and 6, each followed by its val record at
    # runner.iter + 1 (mmcv's step).
    assert [(r["global_step"], "train/loss" in r, "val/val_loss" in r) for r in rows] == [
        (3, True, False),
        (4, False, True),
        (6, True, False),
        (7, False, True),
    ]


def read_tsv(path):
    with open(path) as f:
        lines = f.read().split()
    header, values = lines[:2], lines[2:]
    assert header[0] == "step"
    return [(int(values[i]), float(values[i + 1])) for i in range(0, len(values), 2)]


def test_dvclive_by_epoch_steps_and_model_file(isolated, make_runner, make_loader):
    from mmpar.runner.hooks.logger.dvclive import DvcliveLoggerHook

    out = isolated / "dvclive"
    model_file = isolated / "models" / "model.pth"
    hook = DvcliveLoggerHook(
        model_file=str(model_file), interval=1, dir=str(out), save_dvc_exp=False
    )
    runner, records = train(make_runner, make_loader, hook)

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


def test_dvclive_by_iter_steps(isolated, make_runner, make_loader):
    from mmpar.runner.hooks.logger.dvclive import DvcliveLoggerHook

    out = isolated / "dvclive_iter"
    hook = DvcliveLoggerHook(interval=2, by_epoch=False, dir=str(out), save_dvc_exp=False)
    _, records = train(make_runner, make_loader, hook, interval=2, by_epoch=False)
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


@pytest.mark.parametrize(
    "name, package",
    [
        ("MlflowLoggerHook", "mlflow"),
        ("WandbLoggerHook", "wandb"),
        ("DvcliveLoggerHook", "dvclive"),
        ("NeptuneLoggerHook", "neptune"),
        ("ClearMLLoggerHook", "clearml"),
        ("SegmindLoggerHook", "segmind"),
        ("PaviLoggerHook", "pavi"),
    ],
)
def test_missing_tracker_package_fails_at_construction(monkeypatch, name, package):
    monkeypatch.setitem(sys.modules, package, None)  # import of it raises ImportError
    with pytest.raises(ImportError, match=f"pip install {package}") as info:
        HOOKS.build(dict(type=name))
    assert name in str(info.value)


def test_import_runner_loads_no_tracker_library():
    code = (
        "import sys, mmpar.runner, mmpar.runner.hooks.logger.wandb; "
        "print(sorted(m for m in ('mlflow', 'wandb', 'dvclive', 'neptune', 'clearml', "
        "'segmind', 'pavi') if m in sys.modules))"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"
