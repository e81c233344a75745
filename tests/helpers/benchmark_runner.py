"""The setting of ``benchmarks/runner_overhead.py`` for tests of the per-iteration path.

A linear classifier in MMDataParallel on the CPU, an EpochBasedRunner with the optimizer,
checkpoint, iter-timer and text-logger hooks (no LR schedule), and a quiet logger.
"""

from __future__ import annotations

import logging

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from mmpar.parallel import MMDataParallel
from mmpar.runner import EpochBasedRunner


class Classifier(nn.Module):
    """``nn.Linear(8, 3)`` with an mmcv-style ``train_step`` (one ``.item()`` per step)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def train_step(self, data_batch, optimizer, **kwargs):
        x, y = data_batch
        loss = nn.functional.cross_entropy(self.fc(x), y)
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(x)}


def benchmark_runner(
    model: nn.Module, optimizer: torch.optim.Optimizer, work_dir: str, max_epochs: int
) -> EpochBasedRunner:
    """The benchmark's runner around ``model``; it saves once, after the last epoch."""
    logger = logging.getLogger(f"mmpar_test_benchmark_runner.{id(model)}")
    logger.setLevel(logging.WARNING)
    runner = EpochBasedRunner(
        MMDataParallel(model, device_ids=[-1]),
        optimizer=optimizer,
        work_dir=work_dir,
        logger=logger,
        max_epochs=max_epochs,
    )
    runner.register_training_hooks(
        lr_config=None,
        optimizer_config={},
        checkpoint_config=dict(interval=max_epochs),
        log_config=dict(interval=50, hooks=[dict(type="TextLoggerHook")]),
    )
    return runner


def batches(iters: int) -> DataLoader:
    """``iters`` batches of 4 random samples (seed the generator first for fixed data)."""
    data = TensorDataset(torch.randn(4 * iters, 8), torch.randint(0, 3, (4 * iters,)))
    return DataLoader(data, batch_size=4)
