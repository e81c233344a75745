"""register_training_hooks called as mmcv 1.x projects call it builds mmcv 1.7.2's hook list.

The expected lists are data read off mmcv 1.7.2's ``BaseRunner.register_training_hooks``
(register_lr/momentum/optimizer/checkpoint/timer/logger/custom, in that order, at VERY_HIGH 10,
HIGH 30, ABOVE_NORMAL 40, NORMAL 50, LOW 70, VERY_LOW 90, custom NORMAL by default, stable
insertion among equal priorities), not computed by mmpar.
"""

import pytest

# mmdet 2.x's train_detector call: lr_config, optimizer_config, checkpoint_config, log_config,
# momentum_config, custom_hooks_config (timer_config left at its default).
MMDET_STYLE_CALL = (
    (
        dict(policy="step", warmup="linear", warmup_iters=2, warmup_ratio=0.001, step=[1]),
        dict(grad_clip=None),
        dict(interval=1),
        dict(interval=50, hooks=[dict(type="TextLoggerHook"), dict(type="TensorboardLoggerHook")]),
        None,
    ),
    dict(custom_hooks_config=[dict(type="EMAHook"), dict(type="EmptyCacheHook", priority=20)]),
)

# (class name, priority) in the order mmcv 1.7.2 leaves them in ``runner.hooks``.
MMCV_EPOCH_LIST = [
    ("StepLrUpdaterHook", 10),
    ("EmptyCacheHook", 20),
    ("OptimizerHook", 40),
    ("CheckpointHook", 50),
    ("EMAHook", 50),
    ("IterTimerHook", 70),
    ("TextLoggerHook", 90),
    ("TensorboardLoggerHook", 90),
]

# mmcls/mmseg-style call with a momentum schedule and a cyclic LR, on an IterBasedRunner.
MMSEG_STYLE_CALL = (
    (
        dict(policy="cyclic", target_ratio=(10, 1e-4), cyclic_times=1, step_ratio_up=0.4),
        dict(type="GradientCumulativeOptimizerHook", cumulative_iters=2),
        dict(interval=4),
        dict(interval=1, hooks=[dict(type="TextLoggerHook")]),
        dict(policy="cyclic", target_ratio=(0.85 / 0.95, 1), cyclic_times=1, step_ratio_up=0.4),
    ),
    dict(),
)

MMCV_ITER_LIST = [
    ("CyclicLrUpdaterHook", 10),
    ("CyclicMomentumUpdaterHook", 30),
    ("GradientCumulativeOptimizerHook", 40),
    ("CheckpointHook", 50),
    ("IterTimerHook", 70),
    ("TextLoggerHook", 90),
]


@pytest.mark.parametrize(
    "kind, call, expected",
    [("epoch", MMDET_STYLE_CALL, MMCV_EPOCH_LIST), ("iter", MMSEG_STYLE_CALL, MMCV_ITER_LIST)],
)
def test_training_hook_list_is_mmcvs(make_runner, tmp_path, kind, call, expected):
    args, kwargs = call
    runner = make_runner(kind, **({"max_epochs": 1} if kind == "epoch" else {"max_iters": 4}))
    runner.register_training_hooks(*args, **kwargs)
    assert [(type(h).__name__, h.priority) for h in runner.hooks] == expected
    assert "NanGuardHook" not in runner.get_hook_info()


def test_nan_guard_opt_in_is_the_only_addition(make_runner):
    args, kwargs = MMDET_STYLE_CALL
    runner = make_runner(max_epochs=1)
    runner.register_training_hooks(*args, **kwargs, nan_guard_config=True)
    got = [(type(h).__name__, h.priority) for h in runner.hooks]
    assert got == MMCV_EPOCH_LIST[:1] + [("NanGuardHook", 10)] + MMCV_EPOCH_LIST[1:]
