"""Fixtures for the runner tests: a toy model with train_step/val_step and tiny loaders."""

import logging
import signal

import pytest
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class ToyModel(nn.Module):
    """Linear regression with the mmcv model API."""

    def __init__(self, in_dim=4):
        super().__init__()
        self.linear = nn.Linear(in_dim, 1)

    def forward(self, x):
        return self.linear(x)

    def train_step(self, data_batch, optimizer, **kwargs):
        x, y = data_batch
        loss = ((self(x).squeeze(-1) - y) ** 2).mean()
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(x)}

    def val_step(self, data_batch, optimizer=None, **kwargs):
        x, y = data_batch
        loss = ((self(x).squeeze(-1) - y) ** 2).mean()
        return {"log_vars": {"val_loss": loss.item()}, "num_samples": len(x)}


class EpochRecordingSampler(torch.utils.data.Sampler):
    """Indices ``0..n-1`` in order; records every ``set_epoch`` call in ``epochs``."""

    def __init__(self, n):
        self.n, self.epochs = n, []

    def set_epoch(self, epoch):
        self.epochs.append(epoch)

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


@pytest.fixture
def epoch_recording_sampler():
    """The :class:`EpochRecordingSampler` class (test modules cannot import conftest)."""
    return EpochRecordingSampler


@pytest.fixture
def toy_model():
    torch.manual_seed(0)
    return ToyModel()


@pytest.fixture
def make_loader():
    def _make(n=12, batch_size=4, in_dim=4, **kwargs):
        g = torch.Generator().manual_seed(1)
        x = torch.randn(n, in_dim, generator=g)
        y = x.sum(1)
        return DataLoader(TensorDataset(x, y), batch_size=batch_size, **kwargs)

    return _make


@pytest.fixture
def test_logger():
    logger = logging.getLogger("mmpar_test_runner")
    logger.setLevel(logging.INFO)
    logger.propagate = True
    return logger


@pytest.fixture
def make_runner(toy_model, tmp_path, test_logger):
    from mmpar.runner import EpochBasedRunner, IterBasedRunner

    def _make(kind="epoch", model=None, lr=0.01, **kwargs):
        model = toy_model if model is None else model
        kwargs.setdefault("optimizer", torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9))
        kwargs.setdefault("work_dir", str(tmp_path / "work"))
        kwargs.setdefault("logger", test_logger)
        cls = EpochBasedRunner if kind == "epoch" else IterBasedRunner
        return cls(model, **kwargs)

    return _make


@pytest.fixture
def keep_handlers():
    """Put SIGTERM/SIGUSR1/SIGINT handlers back whatever a test did (SIG_DFL would kill pytest)."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGUSR1, signal.SIGINT)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)
