"""What loggers record while an EvalHook evaluates inside training, as in mmcv 1.7.2.

mmcv's EvalHook runs at ``after_train_epoch`` and leaves ``runner.mode == 'train'``; it puts
``eval_iter_num`` (the val loader's length) and the metrics into ``runner.log_buffer.output``
and sets it ready. The logger hooks (VERY_LOW, after it) then log with ``get_mode`` = 'val'
(no ``time`` in the output), ``get_epoch`` = ``runner.epoch + 1``, the text/JSON ``iter`` =
``eval_iter_num``, and trackers step at ``runner.iter + 1`` with ``val/<metric>`` tags.
"""

import json
import logging

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from mmpar.runner import EpochBasedRunner, EvalHook, LoggerHook


class _Val(Dataset):
    def __len__(self):
        return 3

    def __getitem__(self, i):
        return torch.ones(2)

    def evaluate(self, results, logger=None):
        return {"acc": 0.75}


class _Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, x):
        return self.fc(x)

    def train_step(self, data, optimizer, **kwargs):
        loss = self.fc(data).pow(2).mean()
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(data)}


class _Recorder(LoggerHook):
    """A tracker-style logger: records what a tracker would be sent."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.records = []

    def log(self, runner):
        self.records.append(
            dict(
                runner_mode=runner.mode,
                mode=self.get_mode(runner),
                epoch=self.get_epoch(runner),
                step=self.get_iter(runner),
                tags=self.get_loggable_tags(runner),
            )
        )


class _ModeSpy(EvalHook):
    def evaluate(self, runner, results):
        self.mode_during_eval = runner.mode
        return super().evaluate(runner, results)


def test_loggers_during_an_eval_hook_run(tmp_path):
    model = _Model()
    runner = EpochBasedRunner(
        model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        work_dir=str(tmp_path),
        logger=logging.getLogger("mmcv26_eval"),
        max_epochs=1,
    )
    runner.timestamp = "run"
    recorder = _Recorder(interval=1)
    eval_hook = _ModeSpy(
        DataLoader(_Val(), batch_size=1), test_fn=lambda m, loader: [0] * len(loader.dataset)
    )
    runner.register_training_hooks(
        None,
        optimizer_config={},
        log_config=dict(interval=1, hooks=[dict(type="TextLoggerHook")]),
    )
    runner.register_hook(eval_hook, priority="LOW")
    runner.register_hook(recorder, priority="VERY_LOW")
    runner.run([DataLoader(torch.ones(2, 2), batch_size=1)], [("train", 1)])

    assert eval_hook.mode_during_eval == "train"  # mmcv's EvalHook does not switch modes
    val = [r for r in recorder.records if r["mode"] == "val"]
    assert len(val) == 1 and val[0]["runner_mode"] == "train"
    assert val[0]["epoch"] == 1 and val[0]["step"] == 3  # runner.iter (2) + 1
    assert val[0]["tags"]["val/acc"] == 0.75
    assert not any(tag.startswith("train/") for tag in val[0]["tags"])

    with open(tmp_path / "run.log.json") as f:
        lines = [json.loads(line) for line in f if '"mode"' in line]
    assert [line["mode"] for line in lines] == ["train", "train", "val"]
    assert {k: lines[-1][k] for k in ("mode", "epoch", "iter", "acc")} == {
        "mode": "val",
        "epoch": 1,
        "iter": 3,  # eval_iter_num: the val loader's length
        "acc": 0.75,
    }
    assert "eval_iter_num" not in lines[-1] and "lr" in lines[-1]
    assert list(lines[-1])[:4] == ["mode", "epoch", "iter", "lr"]
