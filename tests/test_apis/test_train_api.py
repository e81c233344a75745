"""train_model in-process on real Digits data: hooks, validation, legacy keys, auto-resume."""

import inspect
import json
import os

import pytest
import torch

from mmpar import Config
from mmpar.apis import train_model, wrap_model
from mmpar.apis.train import _optimizer_hook_cfg
from mmpar.datasets import build_dataset
from mmpar.models import build_classifier
from mmpar.parallel import MMDataParallel
from mmpar.utils import set_random_seed

torch.set_num_threads(1)

CONFIG = """
model = dict(
    type='ImageClassifier',
    backbone=dict(type='LeNet', in_channels=1, input_size=8, padding=2),
    head=dict(type='LinearClsHead', num_classes=10, in_channels=84),
)
norm = dict(type='Normalize', mean=[127.5], std=[127.5], to_rgb=False)
train_pipeline = [
    norm,
    dict(type='ImageToTensor', keys=['img']),
    dict(type='ToTensor', keys=['gt_label']),
    dict(type='Collect', keys=['img', 'gt_label']),
]
test_pipeline = [norm, dict(type='ImageToTensor', keys=['img']), dict(type='Collect', keys=['img'])]
data = dict(
    samples_per_gpu=64,
    workers_per_gpu=0,
    train=dict(type='Digits', pipeline=train_pipeline),
    val=dict(type='Digits', test_mode=True, pipeline=test_pipeline),
)
optimizer = dict(type='Adam', lr=0.005)
optimizer_config = dict(grad_clip=None)
lr_config = dict(policy='fixed')
checkpoint_config = dict(interval=1)
log_config = dict(interval=5, hooks=[dict(type='TextLoggerHook')])
runner = dict(type='EpochBasedRunner', max_epochs=2)
evaluation = dict(interval=1, metric='accuracy')
workflow = [('train', 1)]
seed = 0
"""


def _cfg(work_dir, **changes):
    cfg = Config.fromstring(CONFIG, ".py")
    cfg.work_dir = str(work_dir)
    for key, value in changes.items():
        cfg[key] = value
    return cfg


def _train(cfg, validate=False, timestamp="run"):
    set_random_seed(cfg.seed)
    model = build_classifier(cfg.model)
    return train_model(
        model, build_dataset(cfg.data.train), cfg, validate=validate, timestamp=timestamp
    )


def _json_entries(path):
    with open(path) as f:
        return [e for e in map(json.loads, f) if "mode" in e]


def test_train_model_validates_checkpoints_and_logs(tmp_path):
    runner = _train(_cfg(tmp_path), validate=True)
    assert runner.epoch == 2
    names = [type(h).__name__ for h in runner.hooks]
    assert "EvalHook" in names and "DistSamplerSeedHook" in names
    assert names[1] == "NanGuardHook"  # opt-in on the runner, on by default in train_model
    # Evaluation (LOW) runs before the loggers (VERY_LOW) so its metrics are logged.
    assert names.index("EvalHook") < names.index("TextLoggerHook")
    assert isinstance(runner.model, MMDataParallel)
    assert {"epoch_1.pth", "epoch_2.pth", "latest.pth"} <= set(os.listdir(tmp_path))
    val = [e for e in _json_entries(tmp_path / "run.log.json") if e["mode"] == "val"]
    assert [e["epoch"] for e in val] == [1, 2]
    assert val[-1]["accuracy_top-1"] > 50.0  # 10 classes: chance is 10 %


def test_legacy_total_epochs_without_runner_warns_and_trains(tmp_path):
    cfg = _cfg(tmp_path, total_epochs=1)
    del cfg["runner"]
    with pytest.warns(UserWarning, match="no 'runner'"):
        runner = _train(cfg)
    assert runner.max_epochs == 1 and runner.epoch == 1


def test_missing_or_conflicting_schedule_is_an_error(tmp_path):
    cfg = _cfg(tmp_path)
    del cfg["runner"]
    with pytest.raises(KeyError, match="total_epochs"):
        _train(cfg)
    with pytest.raises(ValueError, match="total_epochs=3 disagrees with runner.max_epochs=2"):
        _train(_cfg(tmp_path, total_epochs=3))


def test_auto_resume_continues_to_the_same_weights(tmp_path):
    reference = _train(_cfg(tmp_path / "ref"))
    first = _cfg(tmp_path / "resumed")
    first.runner.max_epochs = 1
    _train(first, timestamp="first")
    second = _cfg(tmp_path / "resumed", auto_resume=True)
    runner = _train(second, timestamp="second")
    assert runner.epoch == 2
    train_lines = [
        e for e in _json_entries(tmp_path / "resumed" / "second.log.json") if e["mode"] == "train"
    ]
    assert {e["epoch"] for e in train_lines} == {2}  # epoch 1 was not trained again
    want = reference.model.module.state_dict()
    for key, value in runner.model.module.state_dict().items():
        assert torch.equal(value, want[key]), key


def test_auto_resume_in_an_empty_work_dir_starts_from_scratch(tmp_path):
    cfg = _cfg(tmp_path, auto_resume=True)
    cfg.runner.max_epochs = 1
    assert _train(cfg).epoch == 1


def test_fp16_turns_the_optimizer_hook_into_fp16():
    cfg = Config(
        dict(optimizer_config=dict(grad_clip=dict(max_norm=1.0)), fp16=dict(loss_scale="dynamic"))
    )
    assert _optimizer_hook_cfg(cfg) == dict(
        type="Fp16OptimizerHook", grad_clip=dict(max_norm=1.0), loss_scale="dynamic"
    )
    cfg = Config(dict(optimizer_config=dict(type="GradientCumulativeOptimizerHook"), fp16={}))
    with pytest.raises(ValueError, match="fp16"):
        _optimizer_hook_cfg(cfg)
    assert _optimizer_hook_cfg(Config(dict(optimizer_config=dict(grad_clip=None)))) == dict(
        grad_clip=None
    )


def test_wrap_model_on_cpu_is_mmdataparallel_without_devices():
    model = torch.nn.Linear(2, 2)
    wrapped = wrap_model(model, distributed=False)
    assert isinstance(wrapped, MMDataParallel) and wrapped.module is model


class _CudaRecorder:
    """Stands in for ``torch.cuda`` and the wrappers: records which device each call names."""

    def __init__(self, monkeypatch, current: int):
        import mmpar.apis.train as train_mod

        self.calls = []
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: current)
        record = self.calls.append
        monkeypatch.setattr(torch.cuda, "set_device", lambda d: record(("set_device", d)))
        monkeypatch.setattr(
            torch.nn.Module, "cuda", lambda m, d=None: self.calls.append(("cuda", d)) or m
        )
        for name in ("MMDataParallel", "MMDistributedDataParallel"):
            monkeypatch.setattr(
                train_mod, name, lambda m, device_ids, n=name, **kw: (n, device_ids)
            )


def test_wrap_model_distributed_uses_the_current_device_not_local_rank(monkeypatch):
    # One visible GPU per process: init_dist selected LOCAL_RANK % 1 == 0, LOCAL_RANK is 1.
    monkeypatch.setenv("LOCAL_RANK", "1")
    cuda = _CudaRecorder(monkeypatch, current=0)
    wrapped = wrap_model(torch.nn.Linear(2, 2), distributed=True)
    assert wrapped == ("MMDistributedDataParallel", [0])
    assert cuda.calls == [("cuda", 0)]


def test_wrap_model_single_process_selects_the_gpu_id(monkeypatch):
    cuda = _CudaRecorder(monkeypatch, current=0)
    wrapped = wrap_model(torch.nn.Linear(2, 2), distributed=False, gpu_ids=[3])
    assert wrapped == ("MMDataParallel", [3])
    assert cuda.calls == [("set_device", 3), ("cuda", 3)]


def test_train_model_keeps_mmcv_argument_order():
    params = inspect.signature(train_model).parameters
    mmcv = dict(distributed=False, validate=False, timestamp=None, meta=None)
    assert list(params)[:7] == ["model", "dataset", "cfg", *mmcv]
    assert {name: params[name].default for name in mmcv} == mmcv


def test_train_model_takes_mmcv_positional_arguments(tmp_path):
    cfg = _cfg(tmp_path)
    set_random_seed(cfg.seed)
    model = build_classifier(cfg.model)
    runner = train_model(model, build_dataset(cfg.data.train), cfg, False, False, "pos", None)
    assert runner.epoch == 2 and runner.timestamp == "pos"
