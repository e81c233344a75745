"""mmcv 1.x runner behaviours kept for ported code: construction checks, batch_processor runs,
IterLoader, hooks from configs, obj_from_dict and the runner-constructor paths."""

from __future__ import annotations

import logging

import pytest
import torch
import torch.nn as nn

from mmpar.runner import (
    HOOKS,
    RUNNER_BUILDERS,
    EpochBasedRunner,
    Hook,
    IterBasedRunner,
    IterTimerHook,
    Priority,
    SyncBuffersHook,
    TextLoggerHook,
    allreduce_grads,
    allreduce_params,
    build_runner,
    obj_from_dict,
)
from mmpar.runner import IterLoader as TopIterLoader
from mmpar.runner.builder import build_runner_constructor
from mmpar.runner.default_constructor import DefaultRunnerConstructor
from mmpar.runner.iter_based_runner import IterLoader


class Plain(nn.Module):
    """A model without train_step/val_step: only a legacy batch_processor can drive it."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 1)

    def forward(self, x):
        return self.linear(x)


class Recorder:
    """batch_processor(model, data, train_mode, **kwargs) that records its calls."""

    def __init__(self):
        self.calls = []

    def __call__(self, model, data_batch, train_mode, **kwargs):
        self.calls.append((train_mode, model.training, kwargs))
        x, y = data_batch
        loss = ((model(x).squeeze(-1) - y) ** 2).mean()
        name = "loss" if train_mode else "val_loss"
        return {"loss": loss, "log_vars": {name: loss.item()}, "num_samples": len(x)}


def _legacy_runner(cls, tmp_path, logger, **kwargs):
    model = Plain()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    processor = Recorder()
    with pytest.warns(DeprecationWarning, match="batch_processor is deprecated"):
        runner = cls(
            model, processor, optimizer, str(tmp_path / "work"), logger, **kwargs
        )  # mmcv's positional order
    return runner, processor


# ----------------------------------------------------------------------- construction
def test_construction_type_checks(toy_model, tmp_path):
    with pytest.raises(TypeError, match="batch_processor must be callable, but got int"):
        EpochBasedRunner(Plain(), batch_processor=1)
    with pytest.raises(TypeError, match="optimizer must be a torch Optimizer"):
        EpochBasedRunner(toy_model, optimizer=object())
    with pytest.raises(TypeError, match=r'optimizer\["b"\] must be a torch Optimizer'):
        sgd = torch.optim.SGD(toy_model.parameters(), lr=0.1)
        EpochBasedRunner(toy_model, optimizer={"a": sgd, "b": "adam"})
    with pytest.raises(TypeError, match="logger must be a logging.Logger"):
        EpochBasedRunner(toy_model, logger="mmpar")
    for error in (TypeError, AssertionError):  # mmcv asserted train_step exists
        with pytest.raises(error, match="Plain has no train_step"):
            EpochBasedRunner(Plain())
    with pytest.warns(DeprecationWarning), pytest.raises(RuntimeError, match="only one"):
        EpochBasedRunner(toy_model, batch_processor=Recorder())


# ------------------------------------------------------------------ batch_processor runs
def test_batch_processor_drives_epoch_runner_train_and_val(tmp_path, make_loader, test_logger):
    runner, processor = _legacy_runner(EpochBasedRunner, tmp_path, test_logger, max_epochs=2)
    logged = []

    class Capture(Hook):  # what the epoch's records put into the log buffer
        def after_train_epoch(self, r):
            logged.append(("train", len(r.log_buffer.val_history["loss"])))
            r.log_buffer.clear()

        def after_val_epoch(self, r):
            logged.append(("val", len(r.log_buffer.val_history["val_loss"])))
            r.log_buffer.clear()

    runner.register_hook(Capture())
    runner.run([make_loader(), make_loader(n=8)], [("train", 1), ("val", 1)], extra=7)
    modes = [(mode, training) for mode, training, _ in processor.calls]
    assert modes == ([(True, True)] * 3 + [(False, False)] * 2) * 2
    assert all(kwargs == {"extra": 7} for _, _, kwargs in processor.calls)
    assert runner.epoch == 2 and runner.iter == 6
    assert logged == [("train", 3), ("val", 2)] * 2
    assert set(runner.outputs) == {"loss", "log_vars", "num_samples"}


def test_batch_processor_drives_iter_runner_and_is_logged(
    tmp_path, make_loader, test_logger, caplog
):
    runner, processor = _legacy_runner(IterBasedRunner, tmp_path, test_logger, max_iters=4)
    runner.register_hook(IterTimerHook(), priority="LOW")  # train records need its "time"
    runner.register_hook(TextLoggerHook(interval=2, by_epoch=False), priority="VERY_LOW")
    with caplog.at_level(logging.INFO, logger=test_logger.name):
        runner.run([make_loader(), make_loader(n=8)], [("train", 2), ("val", 1)])
    assert [m for m, _, _ in processor.calls] == [True, True, False, True, True, False]
    assert runner.iter == 4
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "Iter [2/4]" in text and "Iter [4/4]" in text and "loss: " in text


# ----------------------------------------------------------------------------- IterLoader
def test_iter_loader_epoch_set_epoch_and_len(make_loader, epoch_recording_sampler):
    assert TopIterLoader is IterLoader
    sampler = epoch_recording_sampler(6)
    loader = IterLoader(make_loader(n=6, batch_size=2, sampler=sampler))
    assert len(loader) == 3 and loader.epoch == 0
    for _ in range(3):
        next(loader)
    assert loader.epoch == 0 and sampler.epochs == []
    next(loader)  # wraps around: a new epoch, announced to the sampler
    assert loader.epoch == 1 and sampler.epochs == [1]
    for _ in range(3):
        next(loader)
    assert loader.epoch == 2 and sampler.epochs == [1, 2]


# -------------------------------------------------------------------- hooks from configs
@HOOKS.register_module()
class _LegacyCfgHook(Hook):
    def __init__(self, tag="x"):
        self.tag = tag


def test_register_hook_from_cfg_reads_priority(make_runner):
    runner = make_runner()
    cfg = dict(type="_LegacyCfgHook", tag="first", priority="HIGHEST")
    runner.register_hook_from_cfg(cfg)
    runner.register_hook_from_cfg(dict(type="_LegacyCfgHook", tag="later", priority=75))
    assert cfg["priority"] == "HIGHEST"  # the caller's dict is not changed
    hooks = [h for h in runner.hooks if isinstance(h, _LegacyCfgHook)]
    assert [(h.tag, h.priority) for h in hooks] == [
        ("first", Priority.HIGHEST.value),
        ("later", 75),
    ]
    runner.register_hook_from_cfg(dict(type="_LegacyCfgHook", tag="normal"))
    hooks = [h for h in runner.hooks if isinstance(h, _LegacyCfgHook)]
    assert [(h.tag, h.priority) for h in hooks] == [
        ("first", Priority.HIGHEST.value),
        ("normal", Priority.NORMAL.value),
        ("later", 75),
    ]


def test_register_training_hooks_with_mmcv_positional_arguments(make_runner):
    runner = make_runner(max_epochs=1)
    runner.register_training_hooks(
        dict(policy="step", step=[1]),  # lr_config
        dict(grad_clip=None),  # optimizer_config
        dict(interval=1),  # checkpoint_config
        dict(interval=5, hooks=[dict(type="TextLoggerHook")]),  # log_config
        dict(policy="step", step=[1], gamma=0.5),  # momentum_config
        dict(type="IterTimerHook"),  # timer_config
        [dict(type="_LegacyCfgHook", priority="LOW")],  # custom_hooks_config
    )
    got = [(type(h).__name__, Priority(h.priority)) for h in runner.hooks]
    assert got == [
        ("StepLrUpdaterHook", Priority.VERY_HIGH),
        ("StepMomentumUpdaterHook", Priority.HIGH),
        ("OptimizerHook", Priority.ABOVE_NORMAL),
        ("CheckpointHook", Priority.NORMAL),
        ("IterTimerHook", Priority.LOW),
        ("_LegacyCfgHook", Priority.LOW),
        ("TextLoggerHook", Priority.VERY_LOW),
    ]


# --------------------------------------------------------------------------- obj_from_dict
def test_obj_from_dict_builds_from_parent_builtin_or_dotted_path():
    model = nn.Linear(2, 1)
    optim = obj_from_dict(
        dict(type="SGD", lr=0.1), torch.optim, dict(params=model.parameters(), lr=0.5)
    )
    assert isinstance(optim, torch.optim.SGD) and optim.defaults["lr"] == 0.1
    assert obj_from_dict(dict(type="dict", a=1)) == {"a": 1}
    assert isinstance(
        obj_from_dict(dict(type="torch.nn.Linear", in_features=2, out_features=3)), nn.Linear
    )
    assert obj_from_dict(dict(type=list)) == []


@pytest.mark.parametrize(
    "args, error, match",
    [
        (("SGD",), TypeError, "info must be a dict, got str"),
        (("SGD",), AssertionError, "info must be a dict"),
        ((dict(lr=1),), KeyError, 'needs a "type" key'),
        ((dict(type=3),), TypeError, "type must be a str or a class, got int"),
        ((dict(type="Nope"), torch.optim), KeyError, 'has no attribute "Nope"'),
        ((dict(type="nope_builtin"),), KeyError, "not a builtin"),
        ((dict(type="no_such_pkg.X"),), KeyError, 'cannot import "no_such_pkg"'),
        ((dict(type="dict"), None, [1]), TypeError, "default_args must be a dict"),
    ],
)
def test_obj_from_dict_errors(args, error, match):
    with pytest.raises(error, match=match):
        obj_from_dict(*args)


# -------------------------------------------------------------------- runner constructors
def test_default_constructor_path_and_custom_constructor(toy_model, tmp_path):
    from mmpar.runner.builder import DefaultRunnerConstructor as FromBuilder

    assert DefaultRunnerConstructor is FromBuilder
    constructor = build_runner_constructor(
        dict(
            type="DefaultRunnerConstructor",
            runner_cfg=dict(type="EpochBasedRunner", max_epochs=1),
            default_args=dict(model=toy_model, work_dir=str(tmp_path)),
        )
    )
    assert isinstance(constructor(), EpochBasedRunner)
    with pytest.raises(TypeError, match="runner_cfg must be a dict"):
        DefaultRunnerConstructor(["EpochBasedRunner"])

    @RUNNER_BUILDERS.register_module(force=True)
    class TaggingConstructor(DefaultRunnerConstructor):
        def __call__(self):
            runner = super().__call__()
            runner.tag = "custom"
            return runner

    runner = build_runner(
        dict(type="IterBasedRunner", max_iters=2, constructor="TaggingConstructor"),
        default_args=dict(model=toy_model, work_dir=str(tmp_path)),
    )
    assert isinstance(runner, IterBasedRunner) and runner.tag == "custom"


# ------------------------------------------------------------ dist helpers, one process
def test_allreduce_and_sync_buffers_are_no_ops_without_a_process_group(make_runner):
    params = [torch.ones(3), torch.arange(4)]
    allreduce_params(params)
    allreduce_params(params, coalesce=False)
    assert params[0].tolist() == [1.0, 1.0, 1.0] and params[1].tolist() == [0, 1, 2, 3]
    layer = nn.Linear(2, 1)
    layer(torch.ones(1, 2)).sum().backward()
    grad = layer.weight.grad.clone()
    allreduce_grads(layer.parameters())
    assert torch.equal(layer.weight.grad, grad)
    model = nn.BatchNorm1d(2)
    model.running_mean.fill_(3.0)
    hook = SyncBuffersHook()
    assert HOOKS.get("SyncBuffersHook") is SyncBuffersHook and hook.distributed is True

    class R:
        pass

    runner = R()
    runner.model = model
    hook.after_train_epoch(runner)
    assert model.running_mean.tolist() == [3.0, 3.0]
    assert set(hook.get_triggered_stages()) == {"after_train_epoch", "after_val_epoch"}


def test_buckets_split_by_dtype_device_and_size():
    from mmpar.utils.dist import _buckets

    a, b, c = torch.zeros(10), torch.zeros(10), torch.zeros(10)
    i = torch.zeros(3, dtype=torch.int64)
    assert [len(x) for x in _buckets([a, i, b, c], 0)] == [3, 1]
    # 40 bytes each; an 80-byte bucket holds two floats
    assert [[t.dtype for t in x] for x in _buckets([a, i, b, c], 80)] == [
        [torch.float32, torch.float32],
        [torch.float32],
        [torch.int64],
    ]
    big = torch.zeros(100)
    assert [len(x) for x in _buckets([a, big, b], 80)] == [1, 1, 1]
