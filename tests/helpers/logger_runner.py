"""A stand-in runner for logger-hook tests: drives hooks through epochs of given losses.

It keeps the log buffer, counters, optimizer and logger a real runner has, so the hooks write
their real text, JSON and TensorBoard output; ``ListHandler`` collects the logged lines.
"""

import json
import logging
import os

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

from mmpar.runner.hooks.evaluation import EvalHook
from mmpar.runner.log_buffer import LogBuffer

TIMESTAMP = "20240101_000000"


class ListHandler(logging.Handler):
    """Keeps every logged message in ``lines``."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


class FakeRunner:
    """Drives hooks in the epoch runner's order; counters advance after each iteration/epoch."""

    def __init__(self, hooks, work_dir, iters_per_epoch=5, max_epochs=2, meta=None, rank=0):
        self.hooks = hooks
        self.work_dir = str(work_dir)
        self.timestamp = TIMESTAMP
        self.meta = meta
        self.rank = rank
        self.world_size = 1
        self.model = nn.Linear(2, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)
        self.log_buffer = LogBuffer()
        self.data_loader = list(range(iters_per_epoch))
        self.max_epochs = max_epochs
        self.max_iters = max_epochs * iters_per_epoch
        self.epoch = self.iter = self.inner_iter = 0
        self.mode = "train"
        self.should_stop = False
        self.logger = logging.getLogger(f"test_hooks_logger.{id(self)}")
        self.logger.setLevel(logging.INFO)
        self.logger.propagate = False
        self.handler = ListHandler()
        self.logger.addHandler(self.handler)

    def current_lr(self):
        return [g["lr"] for g in self.optimizer.param_groups]

    def current_momentum(self):
        return [g["momentum"] for g in self.optimizer.param_groups]

    def save_checkpoint(self, out_dir, filename_tmpl, create_symlink=True, **kwargs):
        torch.save({"state_dict": self.model.state_dict()}, os.path.join(out_dir, filename_tmpl))

    def call(self, stage):
        for hook in self.hooks:
            getattr(hook, stage)(self)

    def train_epoch(self, losses):
        self.mode = "train"
        self.data_loader = list(range(len(losses)))
        self.call("before_train_epoch")
        for i, loss in enumerate(losses):
            self.inner_iter = i
            self.call("before_train_iter")
            self.log_buffer.update({"loss": loss, "acc_train": 1.0})
            self.log_buffer.update({"time": 0.5, "data_time": 0.125})
            self.call("after_train_iter")
            self.iter += 1
        self.call("after_train_epoch")
        self.epoch += 1

    def val_epoch(self, losses):
        self.mode = "val"
        self.data_loader = list(range(len(losses)))
        self.call("before_val_epoch")
        for i, loss in enumerate(losses):
            self.inner_iter = i
            self.call("before_val_iter")
            self.log_buffer.update({"val_loss": loss}, count=2)
            self.call("after_val_iter")
        self.call("after_val_epoch")

    def run(self, epochs):
        self.call("before_run")
        for losses in epochs:
            self.train_epoch(losses)
        self.call("after_run")


def read_json(work_dir):
    """The records of the JSON log a logger hook wrote for :class:`FakeRunner`."""
    with open(os.path.join(work_dir, f"{TIMESTAMP}.log.json")) as f:
        return [json.loads(line) for line in f]


class ToyDataset:
    """``evaluate`` returns a fixed sequence of accuracies, one per call."""

    def __init__(self, scores):
        self.scores = list(scores)
        self.calls = 0

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return torch.tensor([float(i)])

    def evaluate(self, results, logger=None):
        self.calls += 1
        return {"accuracy": self.scores[self.calls - 1]}


def eval_hook(scores, **kwargs):
    """An EvalHook whose dataset reports ``scores`` (one per evaluation) as accuracy."""
    loader = DataLoader(ToyDataset(scores), batch_size=2)
    return EvalHook(loader, test_fn=lambda model, dl: [0] * len(dl.dataset), **kwargs)


def read_tb(log_dir):
    """The scalars of the TensorBoard events under ``log_dir``: ``{tag: [(step, value)]}``."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    return {
        tag: [(e.step, pytest.approx(e.value)) for e in acc.Scalars(tag)]
        for tag in acc.Tags()["scalars"]
    }


# The tracker tests' training (tests/test_runner/hooks/logger/conftest.py): 12 samples, batch 4.
ITERS_PER_EPOCH = 3


def train_losses(records):
    """``{global step: loss}`` of the JSON log's train records (interval 1)."""
    return {
        (r["epoch"] - 1) * ITERS_PER_EPOCH + r["iter"]: r["loss"]
        for r in records
        if r["mode"] == "train"
    }


def val_losses(records):
    """The JSON log's val losses, one per val epoch."""
    return [r["val_loss"] for r in records if r["mode"] == "val"]
