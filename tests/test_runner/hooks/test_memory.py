"""ClosureHook and EmptyCacheHook in real runs; every mmcv hooks name at mmcv's path."""

import pytest
import torch

from mmpar.runner import OptimizerHook
from mmpar.runner.hooks import HOOKS, ClosureHook, EmptyCacheHook, Hook


class StageTracer(Hook):
    """Appends the name of every stage it runs at to ``events``."""

    def __init__(self, events):
        self.events = events
        for stage in self.stages:
            setattr(self, stage, lambda runner, stage=stage: events.append(stage))


def run_two_epochs(make_runner, make_loader, *hooks):
    runner = make_runner(max_epochs=2)
    runner.register_hook(OptimizerHook(), "ABOVE_NORMAL")
    for hook in hooks:
        runner.register_hook(hook, "LOWEST" if isinstance(hook, StageTracer) else "NORMAL")
    # 8 samples in batches of 4: 2 train and 2 val iterations per epoch.
    runner.run([make_loader(n=8), make_loader(n=8)], [("train", 1), ("val", 1)])
    return runner


def expected_stages(per_iter_release, before_epoch_release, after_epoch_release):
    """The tracer's stages with 'E' where the cache must be released (tracer runs last)."""
    events = ["before_run"]
    for _ in range(2):
        for mode in ("train", "val"):
            events += ["E"] * before_epoch_release + [f"before_{mode}_epoch"]
            for _ in range(2):
                events += [f"before_{mode}_iter"] + ["E"] * per_iter_release
                events += [f"after_{mode}_iter"]
            events += ["E"] * after_epoch_release + [f"after_{mode}_epoch"]
    return events + ["after_run"]


@pytest.mark.parametrize(
    "flags",
    [
        dict(before_epoch=True, after_epoch=True, after_iter=True),
        dict(),  # mmcv's defaults: after every epoch only
        dict(before_epoch=True, after_epoch=False),
    ],
)
def test_empty_cache_called_at_configured_stages(monkeypatch, make_runner, make_loader, flags):
    events = []
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: events.append("E"))
    hook = HOOKS.build(dict(type="EmptyCacheHook", **flags))
    run_two_epochs(make_runner, make_loader, hook, StageTracer(events))
    assert events == expected_stages(
        flags.get("after_iter", False),
        flags.get("before_epoch", False),
        flags.get("after_epoch", True),
    )


def test_empty_cache_does_nothing_without_cuda(monkeypatch, make_runner, make_loader):
    calls = []
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: calls.append(1))
    run_two_epochs(make_runner, make_loader, EmptyCacheHook(True, True, True))
    assert calls == []


def test_closure_hook_runs_fn_at_its_stage(make_runner, make_loader):
    seen = []
    epoch_end = ClosureHook(
        "after_train_epoch", lambda runner: seen.append(("epoch", runner.epoch))
    )
    every_iter = ClosureHook(
        "after_iter", lambda runner: seen.append((runner.mode, runner.inner_iter))
    )
    runner = run_two_epochs(make_runner, make_loader, epoch_end, every_iter)
    per_epoch = [("train", 0), ("train", 1), ("epoch", None), ("val", 0), ("val", 1)]
    expected = []
    for epoch in range(2):
        expected += [(k, epoch) if k == "epoch" else (k, i) for k, i in per_epoch]
    assert seen == expected
    assert "after_val_iter" in every_iter.get_triggered_stages()
    assert "ClosureHook" in runner.get_hook_info()


def test_closure_hook_rejects_bad_arguments():
    with pytest.raises(AssertionError, match="not a hook stage"):
        ClosureHook("after_trian_epoch", print)
    with pytest.raises(AssertionError, match="must be callable"):
        HOOKS.build(dict(type="ClosureHook", fn_name="after_run", fn="print"))


MMCV_HOOKS_ALL = """
HOOKS Hook CheckpointHook ClosureHook LrUpdaterHook FixedLrUpdaterHook StepLrUpdaterHook
ExpLrUpdaterHook PolyLrUpdaterHook InvLrUpdaterHook CosineAnnealingLrUpdaterHook
FlatCosineAnnealingLrUpdaterHook CosineRestartLrUpdaterHook CyclicLrUpdaterHook
OneCycleLrUpdaterHook OptimizerHook Fp16OptimizerHook IterTimerHook DistSamplerSeedHook
EmptyCacheHook LoggerHook MlflowLoggerHook PaviLoggerHook TextLoggerHook TensorboardLoggerHook
NeptuneLoggerHook WandbLoggerHook DvcliveLoggerHook MomentumUpdaterHook StepMomentumUpdaterHook
CosineAnnealingMomentumUpdaterHook CyclicMomentumUpdaterHook OneCycleMomentumUpdaterHook
EMAHook EvalHook DistEvalHook ProfilerHook GradientCumulativeOptimizerHook SegmindLoggerHook
LinearAnnealingLrUpdaterHook LinearAnnealingMomentumUpdaterHook ClearMLLoggerHook
""".split()


def test_hooks_package_exports_mmcv_names_and_registers_them():
    import mmpar.runner.hooks as hooks

    assert set(MMCV_HOOKS_ALL) <= set(hooks.__all__)
    for name in MMCV_HOOKS_ALL:
        assert getattr(hooks, name) is not None
        if name not in ("HOOKS", "Hook", "LoggerHook", "LrUpdaterHook", "MomentumUpdaterHook"):
            assert HOOKS.get(name) is getattr(hooks, name), name


@pytest.mark.parametrize(
    "module, name",
    [
        ("base", "LoggerHook"),
        ("text", "TextLoggerHook"),
        ("tensorboard", "TensorboardLoggerHook"),
        ("mlflow", "MlflowLoggerHook"),
        ("wandb", "WandbLoggerHook"),
        ("dvclive", "DvcliveLoggerHook"),
        ("neptune", "NeptuneLoggerHook"),
        ("clearml", "ClearMLLoggerHook"),
        ("segmind", "SegmindLoggerHook"),
        ("pavi", "PaviLoggerHook"),
    ],
)
def test_logger_hooks_at_mmcv_submodule_paths(module, name):
    import importlib

    import mmpar.runner.hooks.logger as logger

    cls = getattr(importlib.import_module(f"mmpar.runner.hooks.logger.{module}"), name)
    assert getattr(logger, name) is cls
