"""The tracker logger hooks make mmcv 1.7.2's library calls, seen through a mocked library.

Each test puts a ``MagicMock`` in ``sys.modules`` for the library, trains a tiny model for a few
CPU iterations and compares the recorded calls with the calls mmcv 1.7.2 makes in that run
(read from mmcv's hook sources and hard-coded here). The model logs ``loss = k`` at the k-th
train iteration and ``acc = 0.5`` in val, so every record's values are exact.

Facts of mmcv 1.7.2 used throughout: the step of a record is ``runner.iter + 1`` (inside
``after_train_iter`` the runner has not yet counted the iteration; after an epoch it has, so
a val epoch after 2 iterations is at step 3); every record, val ones too, carries
``learning_rate`` and ``momentum``; ``EvalHook`` leaves ``runner.mode == 'train'`` and its
results (without ``time``) are therefore ``val`` records.
"""

import os
import sys
from unittest import mock
from unittest.mock import call

import pytest
import torch
import torch.nn as nn
import yaml
from torch.utils.data import DataLoader, Dataset

from mmpar.runner import EpochBasedRunner, EvalHook, IterBasedRunner, IterTimerHook
from mmpar.runner.hooks import HOOKS
from mmpar.runner.hooks.logger.base import LoggerHook
from mmpar.runner.hooks.logger.text import TextLoggerHook

LR, MOMENTUM = 0.01, 0.9
OPT = {"learning_rate": LR, "momentum": MOMENTUM}


class CountingModel(nn.Module):
    """Logs ``loss = k`` at its k-th train step and ``acc = 0.5`` in every val step."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(1, 1)
        self.steps = 0

    def forward(self, x, return_loss=True, **kwargs):
        return self.linear(x)

    def train_step(self, data_batch, optimizer=None, **kwargs):
        self.steps += 1
        loss = self.linear(data_batch).sum()
        return {"loss": loss, "log_vars": {"loss": float(self.steps)}, "num_samples": 1}

    def val_step(self, data_batch, optimizer=None, **kwargs):
        return {"log_vars": {"acc": 0.5}, "num_samples": 1}


class Scored(Dataset):
    """One sample; ``evaluate`` returns ``acc = 0.75``."""

    def __len__(self):
        return 1

    def __getitem__(self, i):
        return torch.zeros(1)

    def evaluate(self, results, logger=None, **kwargs):
        return {"acc": 0.75}


def loader(n):
    return DataLoader(torch.zeros(n, 1), batch_size=1)


def build_runner(tmp_path, kind="epoch", **kwargs):
    model = CountingModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    cls = EpochBasedRunner if kind == "epoch" else IterBasedRunner
    runner = cls(model, optimizer=optimizer, work_dir=str(tmp_path / "work"), **kwargs)
    runner.register_hook(IterTimerHook(), "LOW")  # puts time/data_time in the records
    return runner


def train(tmp_path, *hooks, epochs=2, val=True, **kwargs):
    """2 epochs of 2 iterations (+ a val epoch of 1 iteration after each), ``hooks`` VERY_LOW."""
    runner = build_runner(tmp_path, max_epochs=epochs, **kwargs)
    for hook in hooks:
        runner.register_hook(hook, "VERY_LOW")
    flow = [("train", 1), ("val", 1)] if val else [("train", 1)]
    runner.run([loader(2), loader(1)] if val else [loader(2)], flow)
    return runner


def rec(mode, step=None, **values):
    """The tags of a record: ``<mode>/<name>`` values, then lr and momentum (mmcv's order)."""
    return {**{f"{mode}/{k}": v for k, v in values.items()}, **OPT}


# The records of ``train()`` with interval 1, as (tags, step).
RECORDS = [
    (rec("train", loss=1.0), 1),
    (rec("train", loss=2.0), 2),
    (rec("val", acc=0.5), 3),
    (rec("train", loss=3.0), 3),
    (rec("train", loss=4.0), 4),
    (rec("val", acc=0.5), 5),
]


@pytest.fixture
def fake(monkeypatch):
    """``fake('mlflow', 'mlflow.pytorch')``: MagicMocks in sys.modules; returns the first."""

    def install(*names):
        mods = [mock.MagicMock(name=name) for name in names]
        for name, mod in zip(names, mods):
            monkeypatch.setitem(sys.modules, name, mod)
        return mods[0]

    return install


def test_mlflow_calls(tmp_path, fake):
    mlflow = fake("mlflow", "mlflow.pytorch")
    hook = HOOKS.build(
        dict(type="MlflowLoggerHook", exp_name="exp", tags={"t": 1}, params={"p": 2}, interval=1)
    )
    runner = train(tmp_path, hook)
    assert hook.mlflow is mlflow
    # ``import mlflow.pytorch as m`` binds the ``pytorch`` attribute of the mlflow module.
    assert hook.mlflow_pytorch is mlflow.pytorch
    expected = [call.set_experiment("exp"), call.set_tags({"t": 1}), call.log_params({"p": 2})]
    expected += [call.log_metrics(tags, step=step) for tags, step in RECORDS]
    expected += [
        call.pytorch.log_model(
            runner.model, "models", pip_requirements=[f"torch=={torch.__version__}"]
        )
    ]
    assert mlflow.mock_calls == expected


def test_mlflow_without_optional_calls(tmp_path, fake):
    mlflow = fake("mlflow", "mlflow.pytorch")
    train(tmp_path, HOOKS.build(dict(type="MlflowLoggerHook", log_model=False, interval=2)))
    # No run management of its own: MLflow starts the run on the first call.
    assert mlflow.mock_calls == [
        call.log_metrics(rec("train", loss=1.5), step=2),
        call.log_metrics(rec("val", acc=0.5), step=3),
        call.log_metrics(rec("train", loss=3.5), step=4),
        call.log_metrics(rec("val", acc=0.5), step=5),
    ]


def test_wandb_calls_with_step(tmp_path, fake):
    wandb = fake("wandb")
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    for name in ("cfg.py", "sub/run.log", "notes.txt", ".hidden.py"):
        (work / name).write_text("x")
    hook = HOOKS.build(
        dict(
            type="WandbLoggerHook",
            init_kwargs=dict(project="p"),
            interval=1,
            define_metric_cfg={"val/acc": "max"},
        )
    )
    train(tmp_path, hook)
    calls = wandb.mock_calls
    assert calls[:2] == [call.init(project="p"), call.define_metric("val/acc", summary="max")]
    assert calls[2:8] == [call.log(tags, step=step, commit=True) for tags, step in RECORDS]
    # After the run: the files ending in out_suffix (recursively, no hidden ones) in one
    # artifact, added by path, then log_artifact and join.
    assert calls[8] == call.Artifact(name="artifacts", type="model")
    added = sorted(c.args[0] for c in calls[9:-2])
    assert added == sorted(os.path.join(str(work), f) for f in ("cfg.py", "sub/run.log"))
    assert all(c == call.Artifact().add_file(c.args[0]) for c in calls[9:-2])
    assert calls[-2:] == [call.log_artifact(wandb.Artifact.return_value), call.join()]


def test_wandb_calls_without_step(tmp_path, fake):
    wandb = fake("wandb")
    hook = HOOKS.build(
        dict(type="WandbLoggerHook", interval=2, with_step=False, commit=False, log_artifact=False)
    )
    with pytest.warns(UserWarning, match="median"):
        hook.define_metric_cfg = {"train/loss": "median"}
        train(tmp_path, hook)
    assert wandb.mock_calls == [
        call.init(),
        call.log({**rec("train", loss=1.5), "global_step": 2}, commit=False),
        call.log({**rec("val", acc=0.5), "global_step": 3}, commit=False),
        call.log({**rec("train", loss=3.5), "global_step": 4}, commit=False),
        call.log({**rec("val", acc=0.5), "global_step": 5}, commit=False),
        call.join(),
    ]


def test_neptune_calls(tmp_path, fake):
    neptune = fake("neptune", "neptune.new")
    hook = HOOKS.build(dict(type="NeptuneLoggerHook", init_kwargs=dict(project="a/b"), interval=1))
    # ``import neptune.new as neptune`` binds the ``new`` attribute of the neptune module.
    assert hook.neptune is neptune.new
    train(tmp_path, hook)
    run = neptune.new.init.return_value
    assert neptune.new.mock_calls[0] == call.init(project="a/b")
    expected = []
    for tags, step in RECORDS:
        for name, value in tags.items():
            expected += [call.__getitem__(name), call.__getitem__().log(value, step=step)]
    assert run.mock_calls == expected + [call.stop()]


def test_neptune_1x_starts_the_run_with_init_run(tmp_path, fake):
    neptune = fake("neptune", "neptune.new")
    del neptune.new.init  # neptune 1.x removed init in favour of init_run
    hook = HOOKS.build(dict(type="NeptuneLoggerHook", interval=2, with_step=False))
    train(tmp_path, hook, val=False)
    run = neptune.new.init_run.return_value
    assert neptune.new.init_run.call_args == call()
    logged = [c for c in run.mock_calls if c[0] == "__getitem__().log"]
    assert logged == [call.__getitem__().log(v) for v in rec("train", loss=1.5).values()] + [
        call.__getitem__().log(2)  # global_step
    ] + [call.__getitem__().log(v) for v in rec("train", loss=3.5).values()] + [
        call.__getitem__().log(4)
    ]


def test_clearml_calls(tmp_path, fake):
    clearml = fake("clearml")
    hook = HOOKS.build(dict(type="ClearMLLoggerHook", init_kwargs=dict(project_name="p")))
    hook.interval = 1
    train(tmp_path, hook)
    task = clearml.Task.init.return_value
    assert clearml.Task.mock_calls[:2] == [call.init(project_name="p"), call.init().get_logger()]
    expected = [
        call.report_scalar(tag, tag, value, step)
        for tags, step in RECORDS
        for tag, value in tags.items()
    ]
    # Nothing after the last report (no flush or close of its own).
    assert task.get_logger.return_value.mock_calls == expected


def test_segmind_calls(tmp_path, fake):
    segmind = fake("segmind")
    train(tmp_path, HOOKS.build(dict(type="SegmindLoggerHook", interval=2)))
    log_metrics = segmind.tracking.fluent.log_metrics
    # step and epoch are runner.epoch: 0 during epoch 1, 1 after it.
    assert segmind.utils.logging_utils.try_mlflow_log.mock_calls == [
        call(log_metrics, rec("train", loss=1.5), step=0, epoch=0),
        call(log_metrics, rec("val", acc=0.5), step=1, epoch=1),
        call(log_metrics, rec("train", loss=3.5), step=1, epoch=1),
        call(log_metrics, rec("val", acc=0.5), step=2, epoch=2),
    ]


def test_dvclive_by_epoch_calls(tmp_path, fake):
    dvclive = fake("dvclive")
    hook = HOOKS.build(dict(type="DvcliveLoggerHook", interval=1, dir="out"))
    # The Live is created when the hook is built, with the extra keyword arguments.
    assert dvclive.Live.mock_calls == [call(dir="out")]
    assert hook.dvclive is dvclive.Live.return_value
    train(tmp_path, hook)
    # Alone, by_epoch: no iteration records; each val epoch at the epoch's step.
    val = [call.log("val/acc", 0.5), call.log("learning_rate", LR), call.log("momentum", MOMENTUM)]
    assert hook.dvclive.mock_calls == [call.set_step(1), *val, call.set_step(2), *val]


def test_dvclive_by_epoch_after_a_text_logger(tmp_path, fake):
    fake("dvclive")
    live = mock.MagicMock()
    hook = HOOKS.build(dict(type="DvcliveLoggerHook", interval=1, dvclive=live))
    # The last logger: the last train record of each epoch is logged at the epoch's end.
    train(tmp_path, TextLoggerHook(interval=1), hook)

    def logs(*items):
        return [call.log(k, v) for k, v in items]

    opt = [("learning_rate", LR), ("momentum", MOMENTUM)]
    assert live.mock_calls == [
        call.set_step(1),
        *logs(("train/loss", 2.0), *opt),
        call.set_step(1),
        *logs(("val/acc", 0.5), *opt),
        call.set_step(2),
        *logs(("train/loss", 4.0), *opt),
        call.set_step(2),
        *logs(("val/acc", 0.5), *opt),
    ]


def test_dvclive_by_iter_calls_and_model_file(tmp_path, fake):
    fake("dvclive")
    live = mock.MagicMock()
    model_file = tmp_path / "models" / "m.pth"
    hook = HOOKS.build(
        dict(
            type="DvcliveLoggerHook",
            interval=1,
            by_epoch=False,
            dvclive=live,
            model_file=str(model_file),
        )
    )
    train(tmp_path, hook)
    expected = []
    for tags, step in RECORDS:
        expected += [call.set_step(step), *(call.log(k, v) for k, v in tags.items())]
    assert live.mock_calls == expected
    assert torch.load(model_file, weights_only=False)["meta"]["epoch"] == 2


def test_pavi_calls(tmp_path, fake):
    pavi = fake("pavi")
    hook = HOOKS.build(dict(type="PaviLoggerHook", interval=1, add_last_ckpt=True))
    runner = build_runner(
        tmp_path, max_epochs=2, meta=dict(config_dict=dict(lr=0.02, ids=range(1)))
    )
    runner.register_checkpoint_hook(dict(interval=1))
    runner.register_hook(hook, "VERY_LOW")
    runner.run([loader(2), loader(1)], [("train", 1), ("val", 1)])

    name = os.path.basename(runner.work_dir)
    session = yaml.dump({"lr": 0.02, "ids": [0], "max_iter": 4})
    assert pavi.SummaryWriter.mock_calls[0] == call(
        name=name, model="CountingModel", session_text=session
    )
    writer = pavi.SummaryWriter.return_value
    assert hook.writer is writer  # kept after the run, as mmcv
    # Tags without the mode prefix; val records at the epoch when by_epoch.
    plain = [({k.split("/")[-1]: v for k, v in tags.items()}, step) for tags, step in RECORDS]
    modes = ["train", "train", "val", "train", "train", "val"]
    steps = [1, 2, 1, 3, 4, 2]
    assert writer.mock_calls == [
        *(call.add_scalars(m, t, s) for m, (t, _), s in zip(modes[:3], plain[:3], steps[:3])),
        *(call.add_scalars(m, t, s) for m, (t, _), s in zip(modes[3:], plain[3:], steps[3:])),
        # add_last_ckpt: latest.pth resolves to the last epoch's checkpoint.
        call.add_snapshot_file(
            tag=name, snapshot_file_path=os.path.join(runner.work_dir, "epoch_2.pth"), iteration=2
        ),
        call.close(),
    ]


class ModeRecorder(LoggerHook):
    """Records what a logger sees at each record: runner.mode, get_mode, epoch and step."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seen = []

    def log(self, runner):
        self.seen.append(
            (runner.mode, self.get_mode(runner), self.get_epoch(runner), self.get_iter(runner))
        )


def eval_hook(**kwargs):
    return EvalHook(DataLoader(Scored(), batch_size=1), test_fn=lambda m, d: [0], **kwargs)


def test_epoch_eval_records_are_val_records_in_train_mode(tmp_path, fake):
    mlflow = fake("mlflow", "mlflow.pytorch")
    recorder = ModeRecorder(interval=1)
    runner = build_runner(tmp_path, max_epochs=2)
    runner.register_hook(eval_hook(), "LOW")
    runner.register_hook(recorder, "VERY_LOW")
    runner.register_hook(
        HOOKS.build(dict(type="MlflowLoggerHook", log_model=False, interval=1)), "VERY_LOW"
    )
    runner.run([loader(2)], [("train", 1)])
    # EvalHook evaluates inside after_train_epoch and leaves runner.mode 'train'; the record it
    # wrote has no 'time', so get_mode is 'val'; epoch is epoch + 1, step runner.iter + 1.
    assert recorder.seen == [
        ("train", "train", 1, 1),
        ("train", "train", 1, 2),
        ("train", "val", 1, 3),
        ("train", "train", 2, 3),
        ("train", "train", 2, 4),
        ("train", "val", 2, 5),
    ]
    # With no TextLoggerHook to consume it, eval_iter_num is logged too (as mmcv).
    val = {"val/eval_iter_num": 1, "val/acc": 0.75, **OPT}
    assert mlflow.mock_calls == [
        call.log_metrics(rec("train", loss=1.0), step=1),
        call.log_metrics(rec("train", loss=2.0), step=2),
        call.log_metrics(val, step=3),
        call.log_metrics(rec("train", loss=3.0), step=3),
        call.log_metrics(rec("train", loss=4.0), step=4),
        call.log_metrics(val, step=5),
    ]


def test_iter_eval_logs_train_then_val_record_at_the_same_step(tmp_path, fake):
    mlflow = fake("mlflow", "mlflow.pytorch")
    runner = build_runner(tmp_path, kind="iter", max_iters=4)
    runner.register_hook(eval_hook(by_epoch=False, interval=2), "LOW")
    recorder = ModeRecorder(interval=1, by_epoch=False)
    text = TextLoggerHook(interval=1, by_epoch=False)
    mlflow_hook = HOOKS.build(
        dict(type="MlflowLoggerHook", log_model=False, interval=1, by_epoch=False)
    )
    for hook in (recorder, text, mlflow_hook):
        runner.register_hook(hook, "VERY_LOW")
    runner.run([loader(4)], [("train", 4)])
    assert recorder.seen == [
        ("train", "train", 1, 1),
        ("train", "train", 1, 2),
        ("train", "val", 1, 2),
        ("train", "train", 1, 3),
        ("train", "train", 1, 4),
        ("train", "val", 1, 4),
    ]
    # The TextLoggerHook before it consumed eval_iter_num, as in mmcv.
    val = {"val/acc": 0.75, **OPT}
    assert mlflow.mock_calls == [
        call.log_metrics(rec("train", loss=1.0), step=1),
        call.log_metrics(rec("train", loss=2.0), step=2),
        call.log_metrics(val, step=2),
        call.log_metrics(rec("train", loss=3.0), step=3),
        call.log_metrics(rec("train", loss=4.0), step=4),
        call.log_metrics(val, step=4),
    ]


def test_dvclive_by_epoch_logs_iteration_evaluations_at_the_epoch_end(tmp_path, fake):
    fake("dvclive")
    live = mock.MagicMock()
    runner = build_runner(tmp_path, max_epochs=2)
    runner.register_hook(eval_hook(by_epoch=False, interval=2), "LOW")
    runner.register_hook(HOOKS.build(dict(type="DvcliveLoggerHook", dvclive=live)), "VERY_LOW")
    runner.run([loader(2)], [("train", 1)])
    # mmcv: the results stay in the buffer until the epoch ends; a val record at the epoch.
    val = [
        call.log("val/eval_iter_num", 1),
        call.log("val/acc", 0.75),
        call.log("learning_rate", LR),
        call.log("momentum", MOMENTUM),
    ]
    assert live.mock_calls == [call.set_step(1), *val, call.set_step(2), *val]
