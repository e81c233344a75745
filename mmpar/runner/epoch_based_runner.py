"""EpochBasedRunner: train/val by epochs, with mid-epoch exact resume."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import torch

from .base_runner import BaseRunner
from .builder import RUNNERS
from .checkpoint import save_checkpoint as save_checkpoint  # mmcv's module imports it too
from .checkpointing.checkpointer import numbered_checkpoint_saver
from .resume.loader_position import start_loader_iter
from .utils import get_host_info as get_host_info  # mmcv's module imports it too


@RUNNERS.register_module()
class EpochBasedRunner(BaseRunner):
    """Train by epochs: one pass over the train loader per epoch (mmcv 1.x API).

    The loop, top to bottom: ``before_run`` → for each workflow phase and epoch:
    ``before_{mode}_epoch`` → per batch ``before_{mode}_iter``, ``train_step``/``val_step``,
    ``after_{mode}_iter`` → ``after_{mode}_epoch`` → ``after_run`` (always, also on errors).
    """

    def train(self, data_loader: Any, **kwargs: Any) -> None:
        """Run one training epoch (from the resumed batch on the first epoch after resume)."""
        self.model.train()
        self.mode = "train"
        self.data_loader = data_loader
        self._max_iters = self._max_epochs * len(data_loader)
        self.call_hook("before_train_epoch")
        start, data_iter = self._train_iterator(data_loader)
        completed = True
        for i, data_batch in enumerate(data_iter, start=start):
            self.data_batch = data_batch
            self._inner_iter = i
            self.call_hook("before_train_iter")
            self.run_iter(data_batch, train_mode=True, **kwargs)
            self._next_position = {
                "epoch": self._epoch,
                "iter": self._iter + 1,
                "inner_iter": i + 1,
            }
            self.call_hook("after_train_iter")
            self.data_batch = None
            self._iter += 1
            if self.should_stop:
                completed = i + 1 >= len(data_loader)
                break
        if completed:
            self._next_position = {"epoch": self._epoch + 1, "iter": self._iter, "inner_iter": 0}
        self.call_hook("after_train_epoch")
        self._epoch += 1

    def _train_iterator(self, data_loader: Any) -> tuple[int, Iterator]:
        """Return the train loader's first batch index and iterator: the resumed ones once."""
        self._train_loader = data_loader
        position = self._resume.take_loader_position()
        if position is None:
            return 0, iter(data_loader)
        start, sampler_state = position
        if start <= 0:
            # Saved at an epoch boundary, before the run created this epoch's iterator: restore
            # the RNG first, so that creating it draws what the uninterrupted run drew.
            self._restore_rng()
            return start, iter(data_loader)
        data_iter = start_loader_iter(data_loader, start, sampler_state, self.logger)
        self._restore_rng()
        return start, data_iter

    @torch.no_grad()
    def val(self, data_loader: Any, **kwargs: Any) -> None:
        """Run one validation epoch under ``torch.no_grad()``."""
        self.model.eval()
        self.mode = "val"
        self.data_loader = data_loader
        self.call_hook("before_val_epoch")
        for i, data_batch in enumerate(data_loader):
            self.data_batch = data_batch
            self._inner_iter = i
            self.call_hook("before_val_iter")
            self.run_iter(data_batch, train_mode=False, **kwargs)
            self.call_hook("after_val_iter")
            self.data_batch = None
        self.call_hook("after_val_epoch")

    def run(
        self, data_loaders: list, workflow: list, max_epochs: int | None = None, **kwargs: Any
    ) -> None:
        """Run ``workflow`` until ``max_epochs`` epochs are trained (see :meth:`BaseRunner.run`).

        A phase ``('train', 2)`` trains 2 epochs. ``max_epochs`` here is deprecated: set it in
        the constructor.
        """
        self._run_workflow(data_loaders, workflow, "max_epochs", max_epochs, kwargs)

    def _phase_loaders(self, data_loaders: list, workflow: list) -> list:
        """The loaders as given; ``max_iters`` follows from the train loader's length."""
        for (mode, _), loader in zip(workflow, data_loaders):
            if mode == "train":
                self._max_iters = self._max_epochs * len(loader)
                break
        return data_loaders

    def _train_steps_left(self) -> int:
        return self._max_epochs - self._epoch

    save_checkpoint = numbered_checkpoint_saver("epoch_{}.pth", by_epoch=True)


@RUNNERS.register_module()
class Runner(EpochBasedRunner):
    """Deprecated alias of :class:`EpochBasedRunner` (mmcv 1.x)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            "Runner is deprecated, use EpochBasedRunner instead", DeprecationWarning, stacklevel=2
        )
        super().__init__(*args, **kwargs)


__all__ = ["EpochBasedRunner", "Runner"]
