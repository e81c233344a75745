"""Every mmcv hooks name at mmcv's paths: the hooks package and the logger submodules."""

import pytest

from mmpar.runner.hooks import HOOKS

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
