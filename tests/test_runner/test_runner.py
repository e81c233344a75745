import logging
import time

import pytest
import torch
import torch.nn as nn

from mmpar.parallel import MMDataParallel
from mmpar.runner import (
    RUNNERS,
    EpochBasedRunner,
    Hook,
    IterBasedRunner,
    NanGuardHook,
    Priority,
    build_runner,
)


class Recorder(Hook):
    """Records (stage, epoch, iter, inner_iter, mode) for every stage."""

    def __init__(self):
        self.calls = []

    def _rec(self, stage, runner):
        self.calls.append((stage, runner.epoch, runner.iter, runner.inner_iter, runner.mode))


for _stage in Hook.stages + ("before_epoch", "after_epoch"):
    setattr(Recorder, _stage, lambda self, runner, _s=_stage: self._rec(_s, runner))


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch):
    def fail(*args):
        raise AssertionError("the runner must not sleep")

    monkeypatch.setattr(time, "sleep", fail)


# --------------------------------------------------------------------------- construction
def test_model_without_train_step_is_rejected(tmp_path):
    with pytest.raises(TypeError, match="Linear has no train_step"):
        EpochBasedRunner(nn.Linear(2, 2), work_dir=str(tmp_path))
    # The check and the model's name look under every wrapper, torch.compile's included.
    with pytest.raises(TypeError, match="Linear has no train_step"):
        EpochBasedRunner(MMDataParallel(torch.compile(nn.Linear(2, 2))), work_dir=str(tmp_path))


def test_model_name_is_the_bare_models_under_any_wrappers(toy_model, tmp_path):
    wrapped = MMDataParallel(torch.compile(toy_model))
    assert EpochBasedRunner(wrapped, work_dir=str(tmp_path)).model_name == "ToyModel"


def test_bad_optimizer_and_meta_types(toy_model, tmp_path):
    with pytest.raises(TypeError, match="optimizer must be"):
        EpochBasedRunner(toy_model, optimizer="sgd")
    with pytest.raises(TypeError, match=r'optimizer\["g"\]'):
        EpochBasedRunner(toy_model, optimizer={"g": 1})
    with pytest.raises(TypeError, match="meta must be a dict"):
        EpochBasedRunner(toy_model, meta=[1])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(max_epochs=2, max_iters=3), "Only one of max_epochs and max_iters"),
        (dict(max_epochs=0), "max_epochs must be a positive int"),
        (dict(max_iters=-1), "max_iters must be a positive int"),
        (dict(max_epochs=True), "max_epochs must be a positive int"),
        (dict(max_epochs=1.5), "max_epochs must be a positive int"),
    ],
)
def test_max_epochs_iters_validation(toy_model, kwargs, match):
    with pytest.raises(ValueError, match=match):
        EpochBasedRunner(toy_model, **kwargs)


def test_a_whole_float_limit_counts_as_its_int(make_runner, make_loader):
    # Configs write max_iters=1e5; mmcv's loops take such a float, so the runner does too.
    runner = make_runner("iter", max_iters=4.0)
    assert runner.max_iters == 4 and isinstance(runner.max_iters, int)
    runner.run([make_loader()], [("train", 1)])
    assert runner.iter == 4


def test_unwritable_work_dir_names_the_path(toy_model, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    bad = blocker / "work"
    with pytest.raises(PermissionError, match=str(bad)):
        EpochBasedRunner(toy_model, work_dir=str(bad))


def test_properties(make_runner, tmp_path):
    runner = make_runner(max_epochs=3, meta={"seed": 1})
    assert runner.model_name == "ToyModel"
    assert (runner.rank, runner.world_size) == (0, 1)
    assert (runner.epoch, runner.iter, runner.inner_iter) == (0, 0, 0)
    assert runner.max_epochs == 3 and runner.max_iters is None
    assert runner.work_dir == str(tmp_path / "work") and (tmp_path / "work").is_dir()
    assert runner.meta == {"seed": 1} and runner.hooks == [] and runner.mode is None
    assert len(runner.timestamp) == 15


def test_current_lr_and_momentum_single_and_dict(toy_model, tmp_path):
    sgd = torch.optim.SGD(toy_model.parameters(), lr=0.1, momentum=0.8)
    runner = EpochBasedRunner(toy_model, optimizer=sgd)
    assert runner.current_lr() == [0.1] and runner.current_momentum() == [0.8]
    adam = torch.optim.Adam(toy_model.parameters(), lr=0.01, betas=(0.7, 0.9))
    runner = EpochBasedRunner(toy_model, optimizer={"a": adam, "s": sgd})
    assert runner.current_lr() == {"a": [0.01], "s": [0.1]}
    assert runner.current_momentum() == {"a": [0.7], "s": [0.8]}
    with pytest.raises(RuntimeError, match="no optimizer"):
        EpochBasedRunner(toy_model).current_lr()


# --------------------------------------------------------------------------------- hooks
def test_register_hook_orders_by_priority_stably(make_runner):
    runner = make_runner()
    a, b, c, d = Hook(), Hook(), Hook(), Hook()
    runner.register_hook(a, "LOW")
    runner.register_hook(b)  # NORMAL
    runner.register_hook(c, Priority.VERY_HIGH)
    runner.register_hook(d, 50)  # equal to NORMAL: after b
    assert runner.hooks == [c, b, d, a]
    with pytest.raises(ValueError, match="reserved"):
        runner.register_hook(a)
    with pytest.raises(TypeError, match="Hook instance"):
        runner.register_hook(object())


def test_get_hook_info_lists_stages_and_priorities(make_runner):
    runner = make_runner()
    runner.register_hook(NanGuardHook(), "VERY_HIGH")
    info = runner.get_hook_info()
    assert "after_train_iter:" in info and "VERY_HIGH" in info and "NanGuardHook" in info
    assert "before_run:" not in info


# ------------------------------------------------------------------------ epoch runner
def test_epoch_runner_workflow_stages_counters_and_outputs(make_runner, make_loader):
    runner = make_runner(max_epochs=2)
    rec = Recorder()
    runner.register_hook(rec)
    train, val = make_loader(12, 4), make_loader(8, 4)
    runner.run([train, val], [("train", 1), ("val", 1)])
    stages = [c[0] for c in rec.calls]
    assert stages[0] == "before_run" and stages[-1] == "after_run"
    assert stages.count("after_train_iter") == 6 and stages.count("after_val_iter") == 4
    assert stages.count("after_train_epoch") == 2 and stages.count("after_val_epoch") == 2
    after_iters = [c[1:4] for c in rec.calls if c[0] == "after_train_iter"]
    assert after_iters == [(0, 0, 0), (0, 1, 1), (0, 2, 2), (1, 3, 0), (1, 4, 1), (1, 5, 2)]
    assert [c[1] for c in rec.calls if c[0] == "after_train_epoch"] == [0, 1]
    assert (runner.epoch, runner.iter, runner.max_iters) == (2, 6, 6)
    assert "val_loss" in runner.outputs["log_vars"]
    assert runner.log_buffer.n_history["loss"] == [4] * 6


def test_epoch_runner_workflow_validation(make_runner, make_loader):
    runner = make_runner(max_epochs=1)
    loader = make_loader()
    with pytest.raises(ValueError, match=r"unknown workflow mode 'test'.*\['train', 'val'\]"):
        runner.run([loader], [("test", 1)])
    with pytest.raises(ValueError, match="2 phases but 1 data loaders"):
        runner.run([loader], [("train", 1), ("val", 1)])
    with pytest.raises(ValueError, match="max_epochs must be set"):
        make_runner().run([loader], [("train", 1)])


class BadModel(nn.Module):
    def __init__(self, out):
        super().__init__()
        self.p = nn.Parameter(torch.zeros(1))
        self.out = out

    def train_step(self, data_batch, optimizer):
        return self.out


def test_non_dict_output_fails_and_a_dict_without_loss_is_taken(make_runner, make_loader):
    runner = make_runner(model=BadModel([1.0]), max_epochs=1)
    with pytest.raises(TypeError, match="BadModel.train_step.*must return a dict.*list"):
        runner.run([make_loader()], [("train", 1)])
    # As in mmcv: a model that steps its own optimizers returns no loss (see
    # test_lossless_train_step.py); the runner keeps the outputs for the hooks.
    runner = make_runner(model=BadModel({"los": 1, "acc": 2}), max_epochs=1)
    runner.run([make_loader()], [("train", 1)])
    assert runner.outputs == {"los": 1, "acc": 2} and runner.iter == len(make_loader())


class ValArgsModel(nn.Module):
    """Records the positional arguments val_step gets; its val_step takes no optimizer."""

    def __init__(self):
        super().__init__()
        self.p = nn.Parameter(torch.zeros(1))
        self.val_args = []

    def train_step(self, data_batch, optimizer):
        return {"log_vars": {}, "num_samples": 1}

    def val_step(self, data_batch, *args, **kwargs):
        self.val_args.append(args)
        return {"log_vars": {}, "num_samples": 1}


@pytest.mark.parametrize("kind, passed", [("epoch", 1), ("iter", 0)])
def test_val_step_gets_the_optimizer_as_mmcv_passes_it(make_runner, make_loader, kind, passed):
    # mmcv's EpochBasedRunner calls val_step(batch, optimizer), its IterBasedRunner
    # val_step(batch): a val_step(self, data_batch, **kwargs) works with the iteration runner.
    model = ValArgsModel()
    limit = {"max_epochs": 1} if kind == "epoch" else {"max_iters": 1}
    runner = make_runner(kind, model=model, **limit)
    runner.run([make_loader(), make_loader()], [("train", 1), ("val", 1)])
    assert model.val_args and all(len(args) == passed for args in model.val_args)


def test_after_run_is_called_when_training_fails(make_runner, make_loader):
    runner = make_runner(model=BadModel(None), max_epochs=1)
    rec = Recorder()
    runner.register_hook(rec)
    with pytest.raises(TypeError):
        runner.run([make_loader()], [("train", 1)])
    assert rec.calls[-1][0] == "after_run"


class StopAt(Hook):
    def __init__(self, at):
        self.at = at

    def after_train_iter(self, runner):
        if runner.iter == self.at:
            runner.should_stop = True


def test_should_stop_ends_training_cleanly(make_runner, make_loader):
    runner = make_runner(max_epochs=5)
    rec = Recorder()
    runner.register_hook(StopAt(4))
    runner.register_hook(rec)
    runner.run([make_loader(12, 4)], [("train", 1)])
    assert runner.iter == 5
    assert [c[0] for c in rec.calls].count("after_train_epoch") == 2
    assert rec.calls[-1][0] == "after_run"


# ------------------------------------------------------------------------- iter runner
def test_iter_runner_restarts_loader_and_counts_epochs(
    make_runner, make_loader, epoch_recording_sampler
):
    runner = make_runner("iter", max_iters=7)
    sampler = epoch_recording_sampler(8)
    loader = make_loader(8, 4, sampler=sampler)  # 2 batches per epoch
    rec = Recorder()
    runner.register_hook(rec)
    runner.run([loader, make_loader(8, 4)], [("train", 3), ("val", 1)])
    stages = [c[0] for c in rec.calls]
    assert stages.count("after_train_iter") == 7 and stages.count("after_val_iter") == 3
    assert stages[:2] == ["before_run", "before_epoch"] and stages[-2:] == [
        "after_epoch",
        "after_run",
    ]
    epochs = [c[1] for c in rec.calls if c[0] == "after_train_iter"]
    assert epochs == [0, 0, 1, 1, 2, 2, 3]
    assert sampler.epochs == [1, 2, 3]
    assert runner.iter == 7


def test_iter_runner_rejects_empty_loader(make_runner, make_loader):
    runner = make_runner("iter", max_iters=2)
    with pytest.raises(RuntimeError, match="yields no batch"):
        runner.run([make_loader(3, 4, drop_last=True)], [("train", 1)])


# ---------------------------------------------------------------------------- builder
def test_build_runner_from_config(toy_model, tmp_path):
    runner = build_runner(
        dict(type="IterBasedRunner", max_iters=3),
        default_args=dict(model=toy_model, work_dir=str(tmp_path), logger=logging.getLogger("x")),
    )
    assert isinstance(runner, IterBasedRunner) and runner.max_iters == 3
    assert RUNNERS.get("EpochBasedRunner") is EpochBasedRunner
    with pytest.raises(KeyError, match="not in the runner registry"):
        build_runner(dict(type="NoSuchRunner"), default_args=dict(model=toy_model))


@pytest.mark.parametrize("kind, name", [("epoch", "max_epochs"), ("iter", "max_iters")])
def test_run_limit_in_run_is_deprecated_and_required(make_runner, make_loader, kind, name):
    runner = make_runner(kind)
    runner.register_training_hooks(lr_config=None, optimizer_config={})
    with pytest.raises(ValueError, match=f"{name} must be set"):
        runner.run([make_loader()], [("train", 1)])
    with pytest.warns(DeprecationWarning, match=rf"setting {name} in run\(\) is deprecated") as rec:
        runner.run([make_loader()], [("train", 1)], **{name: 1})
    assert rec[0].filename == __file__  # points at the caller of run()
    assert getattr(runner, name) == 1
