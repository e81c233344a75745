"""Argument checks of the runners and hooks raise mmcv 1.7.2's exception types.

Each row is a call with a bad argument and the type mmcv 1.7.2 raises for it (read off its
source: ``assert`` → AssertionError, else the type it raises). mmpar keeps its own messages;
its error only has to be an instance of mmcv's type, so ``except AssertionError:`` in ported
code still catches it.
"""

import logging

import pytest
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from mmpar.runner import (
    EMAHook,
    EpochBasedRunner,
    EvalHook,
    IterBasedRunner,
    hooks,
)
from mmpar.runner.hooks import ClosureHook, TextLoggerHook
from mmpar.runner.hooks.lr_updater import (
    CosineAnnealingLrUpdaterHook,
    CosineRestartLrUpdaterHook,
    CyclicLrUpdaterHook,
    FixedLrUpdaterHook,
    FlatCosineAnnealingLrUpdaterHook,
    OneCycleLrUpdaterHook,
    StepLrUpdaterHook,
)
from mmpar.runner.hooks.momentum_updater import (
    CosineAnnealingMomentumUpdaterHook,
    CyclicMomentumUpdaterHook,
    OneCycleMomentumUpdaterHook,
    StepMomentumUpdaterHook,
)
from mmpar.runner.hooks.optimizer import (
    Fp16OptimizerHook,
    GradientCumulativeFp16OptimizerHook,
    GradientCumulativeOptimizerHook,
)

LOGGER = logging.getLogger("mmpar_test_arg_errors")


class _Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def train_step(self, data_batch, optimizer, **kwargs):
        return {"loss": self.fc(data_batch).sum(), "log_vars": {}, "num_samples": 1}


class _NoStep(nn.Module):
    pass


def _runner(cls=EpochBasedRunner, model=None, **kwargs):
    kwargs.setdefault("logger", LOGGER)
    return cls(_Model() if model is None else model, **kwargs)


class _Dataset(torch.utils.data.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return torch.zeros(2)

    def evaluate(self, results, logger=None):
        return {"acc": 1.0}


def _loader():
    return DataLoader(_Dataset(), batch_size=1)


CASES = [
    # base_runner.__init__
    ("batch_processor not callable", lambda: _runner(batch_processor=1), TypeError),
    ("batch_processor and train_step", lambda: _runner(batch_processor=print), RuntimeError),
    ("model without train_step", lambda: _runner(model=_NoStep()), AssertionError),
    ("optimizer not an Optimizer", lambda: _runner(optimizer="sgd"), TypeError),
    ("optimizer dict of non-optimizers", lambda: _runner(optimizer={"a": 1}), TypeError),
    ("logger not a Logger", lambda: _runner(logger="log"), TypeError),
    ("meta not a dict", lambda: _runner(meta=[1]), TypeError),
    ("work_dir not a str", lambda: _runner(work_dir=1), TypeError),
    ("max_epochs and max_iters", lambda: _runner(max_epochs=1, max_iters=1), ValueError),
    # register_* of base_runner
    ("register_hook of a non-Hook", lambda: _runner().register_hook(object()), AssertionError),
    ("lr_config without policy", lambda: _runner().register_lr_hook(dict(step=1)), AssertionError),
    (
        "momentum_config without policy",
        lambda: _runner().register_momentum_hook(dict(step=1)),
        AssertionError,
    ),
    # run() of both runners
    (
        "epoch run: loaders not a list",
        lambda: _runner(max_epochs=1).run(_loader(), [("train", 1)]),
        AssertionError,
    ),
    (
        "epoch run: workflow not tuples",
        lambda: _runner(max_epochs=1).run([_loader()], ["train"]),
        AssertionError,
    ),
    (
        "epoch run: lengths differ",
        lambda: _runner(max_epochs=1).run([_loader(), _loader()], [("train", 1)]),
        AssertionError,
    ),
    (
        "epoch run: no max_epochs",
        lambda: _runner().run([_loader()], [("train", 1)]),
        AssertionError,
    ),
    (
        "epoch run: unknown mode",
        lambda: _runner(max_epochs=1).run([_loader()], [("trian", 1)]),
        ValueError,
    ),
    (
        "epoch run: mode not a str",
        lambda: _runner(max_epochs=1).run([_loader()], [(1, 1)]),
        TypeError,
    ),
    (
        "iter run: loaders not a list",
        lambda: _runner(IterBasedRunner, max_iters=1).run(_loader(), [("train", 1)]),
        AssertionError,
    ),
    (
        "iter run: workflow not tuples",
        lambda: _runner(IterBasedRunner, max_iters=1).run([_loader()], ["train"]),
        AssertionError,
    ),
    (
        "iter run: lengths differ",
        lambda: _runner(IterBasedRunner, max_iters=1).run([_loader()] * 2, [("train", 1)]),
        AssertionError,
    ),
    (
        "iter run: no max_iters",
        lambda: _runner(IterBasedRunner).run([_loader()], [("train", 1)]),
        AssertionError,
    ),
    (
        "iter run: unknown mode",
        lambda: _runner(IterBasedRunner, max_iters=1).run([_loader()], [("trian", 1)]),
        ValueError,
    ),
    # ClosureHook
    ("closure: unknown stage", lambda: ClosureHook("before_nothing", print), AssertionError),
    ("closure: not callable", lambda: ClosureHook("after_run", 1), AssertionError),
    # EMAHook
    ("ema: interval 0", lambda: EMAHook(interval=0), AssertionError),
    ("ema: interval float", lambda: EMAHook(interval=1.5), AssertionError),
    ("ema: momentum 1", lambda: EMAHook(momentum=1), AssertionError),
    # EvalHook
    ("eval: not a DataLoader", lambda: EvalHook([1, 2]), TypeError),
    ("eval: interval 0", lambda: EvalHook(_loader(), interval=0), ValueError),
    ("eval: by_epoch not bool", lambda: EvalHook(_loader(), by_epoch=1), AssertionError),
    ("eval: start < 0", lambda: EvalHook(_loader(), start=-1), ValueError),
    ("eval: save_best not str", lambda: EvalHook(_loader(), save_best=1), AssertionError),
    ("eval: unknown rule", lambda: EvalHook(_loader(), save_best="acc", rule="max"), KeyError),
    (
        "eval: greater_keys not str",
        lambda: EvalHook(_loader(), save_best="acc", greater_keys=[1]),
        AssertionError,
    ),
    (
        "eval: rule cannot be inferred",
        lambda: EvalHook(_loader(), save_best="xyz"),
        ValueError,
    ),
    # LR updaters
    ("lr: unknown warmup", lambda: FixedLrUpdaterHook(warmup="cubic"), ValueError),
    (
        "lr: warmup_iters 0",
        lambda: FixedLrUpdaterHook(warmup="linear", warmup_iters=0),
        AssertionError,
    ),
    (
        "lr: warmup_ratio 0",
        lambda: FixedLrUpdaterHook(warmup="linear", warmup_iters=2, warmup_ratio=0),
        AssertionError,
    ),
    ("lr: step -10", lambda: StepLrUpdaterHook(step=-10), AssertionError),
    ("lr: step list with 0", lambda: StepLrUpdaterHook(step=[0, 2]), AssertionError),
    ("lr: step list of floats", lambda: StepLrUpdaterHook(step=[1.5]), AssertionError),
    ("lr: step a str", lambda: StepLrUpdaterHook(step="3"), TypeError),
    ("lr: cosine min_lr and ratio", lambda: CosineAnnealingLrUpdaterHook(), AssertionError),
    (
        "lr: flat cosine min_lr and ratio",
        lambda: FlatCosineAnnealingLrUpdaterHook(min_lr=0, min_lr_ratio=0.1),
        AssertionError,
    ),
    (
        "lr: flat cosine start_percent",
        lambda: FlatCosineAnnealingLrUpdaterHook(min_lr=0, start_percent=2),
        ValueError,
    ),
    (
        "lr: restart lengths differ",
        lambda: CosineRestartLrUpdaterHook(periods=[1, 2], restart_weights=[1], min_lr=0),
        AssertionError,
    ),
    (
        "lr: restart min_lr and ratio",
        lambda: CosineRestartLrUpdaterHook(periods=[1]),
        AssertionError,
    ),
    ("lr: cyclic target_ratio str", lambda: CyclicLrUpdaterHook(target_ratio="x"), ValueError),
    (
        "lr: cyclic target_ratio 3",
        lambda: CyclicLrUpdaterHook(target_ratio=(1.0, 2.0, 3.0)),
        AssertionError,
    ),
    ("lr: cyclic step_ratio_up 1", lambda: CyclicLrUpdaterHook(step_ratio_up=1.0), AssertionError),
    ("lr: cyclic gamma 0", lambda: CyclicLrUpdaterHook(gamma=0), AssertionError),
    (
        "lr: cyclic anneal_strategy",
        lambda: CyclicLrUpdaterHook(anneal_strategy="exp"),
        ValueError,
    ),
    ("lr: cyclic by_epoch", lambda: CyclicLrUpdaterHook(by_epoch=True), AssertionError),
    (
        "lr: one cycle by_epoch",
        lambda: OneCycleLrUpdaterHook(max_lr=0.1, by_epoch=True),
        AssertionError,
    ),
    ("lr: one cycle max_lr str", lambda: OneCycleLrUpdaterHook(max_lr="x"), ValueError),
    (
        "lr: one cycle total_steps float",
        lambda: OneCycleLrUpdaterHook(max_lr=0.1, total_steps=1.5),
        ValueError,
    ),
    (
        "lr: one cycle pct_start 2",
        lambda: OneCycleLrUpdaterHook(max_lr=0.1, pct_start=2.0),
        ValueError,
    ),
    (
        "lr: one cycle anneal_strategy",
        lambda: OneCycleLrUpdaterHook(max_lr=0.1, anneal_strategy="exp"),
        ValueError,
    ),
    # momentum updaters
    ("momentum: unknown warmup", lambda: StepMomentumUpdaterHook(step=1, warmup="x"), ValueError),
    (
        "momentum: warmup_iters 0",
        lambda: StepMomentumUpdaterHook(step=1, warmup="linear", warmup_iters=0),
        AssertionError,
    ),
    ("momentum: step -1", lambda: StepMomentumUpdaterHook(step=-1), AssertionError),
    ("momentum: step a str", lambda: StepMomentumUpdaterHook(step="1"), TypeError),
    (
        "momentum: cosine min and ratio",
        lambda: CosineAnnealingMomentumUpdaterHook(),
        AssertionError,
    ),
    (
        "momentum: cyclic target_ratio str",
        lambda: CyclicMomentumUpdaterHook(target_ratio="x"),
        ValueError,
    ),
    (
        "momentum: cyclic step_ratio_up 1",
        lambda: CyclicMomentumUpdaterHook(step_ratio_up=1.0),
        AssertionError,
    ),
    (
        "momentum: cyclic by_epoch",
        lambda: CyclicMomentumUpdaterHook(by_epoch=True),
        AssertionError,
    ),
    (
        "momentum: one cycle by_epoch",
        lambda: OneCycleMomentumUpdaterHook(by_epoch=True),
        AssertionError,
    ),
    (
        "momentum: one cycle base_momentum str",
        lambda: OneCycleMomentumUpdaterHook(base_momentum="x"),
        ValueError,
    ),
    (
        "momentum: one cycle pct_start 2",
        lambda: OneCycleMomentumUpdaterHook(pct_start=2.0),
        ValueError,
    ),
    # optimizer hooks
    (
        "cumulative_iters str",
        lambda: GradientCumulativeOptimizerHook(cumulative_iters="x"),
        AssertionError,
    ),
    (
        "cumulative_iters 0",
        lambda: GradientCumulativeOptimizerHook(cumulative_iters=0),
        AssertionError,
    ),
    ("fp16 loss_scale str", lambda: Fp16OptimizerHook(loss_scale="static"), ValueError),
    (
        "fp16 cumulative loss_scale str",
        lambda: GradientCumulativeFp16OptimizerHook(cumulative_iters=2, loss_scale="x"),
        ValueError,
    ),
    # loggers
    (
        "text logger: file_client_args without out_dir",
        lambda: TextLoggerHook(file_client_args={}),
        ValueError,
    ),
    ("text logger: out_dir int", lambda: TextLoggerHook(out_dir=1), TypeError),
    # profiler
    ("profiler: by_epoch not bool", lambda: hooks.ProfilerHook(by_epoch=1), AssertionError),
    ("profiler: profile_iters 0", lambda: hooks.ProfilerHook(profile_iters=0), ValueError),
    ("profiler: activities str", lambda: hooks.ProfilerHook(activities="cpu"), ValueError),
    ("profiler: unknown activity", lambda: hooks.ProfilerHook(activities=["tpu"]), ValueError),
    (
        "profiler: bad on_trace_ready",
        lambda: hooks.ProfilerHook(on_trace_ready=1),
        ValueError,
    ),
]


@pytest.mark.parametrize("call, mmcv_type", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_argument_raises_mmcvs_type(call, mmcv_type, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a runner given work_dir creates it
    with pytest.raises(mmcv_type):
        call()
