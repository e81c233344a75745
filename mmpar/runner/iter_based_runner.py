"""IterBasedRunner: train/val by iterations over endlessly restarted data loaders."""

from __future__ import annotations

from typing import Any

import torch

from .base_runner import BaseRunner
from .builder import RUNNERS
from .checkpoint import save_checkpoint as save_checkpoint  # mmcv's module imports it too
from .checkpointing.checkpointer import numbered_checkpoint_saver
from .hooks import IterTimerHook as IterTimerHook  # mmcv's module imports it too
from .resume.loader_position import IterLoader as IterLoader
from .utils import get_host_info as get_host_info  # mmcv's module imports it too


@RUNNERS.register_module()
class IterBasedRunner(BaseRunner):
    """Train by iterations; data loaders restart transparently at epoch ends (mmcv 1.x API).

    The loop: ``before_run`` → ``before_epoch`` → repeat the workflow phases
    (``[('train', 1000), ('val', 100)]`` = 1000 train then 100 val iterations) until
    ``max_iters`` → ``after_epoch`` → ``after_run`` (always, also on errors). ``inner_iter``
    counts iterations within the current workflow phase, as in mmcv. Hooks built by
    ``register_training_hooks`` default to ``by_epoch=False``.
    """

    _config_by_epoch = False

    def train(self, data_loader: IterLoader, **kwargs: Any) -> None:
        """Run one training iteration."""
        self.model.train()
        self.mode = "train"
        self.data_loader = data_loader
        data_batch = next(data_loader)
        self._epoch = data_loader.epoch
        self.data_batch = data_batch
        self.call_hook("before_train_iter")
        self.run_iter(data_batch, train_mode=True, **kwargs)
        self._next_position = {
            "epoch": data_loader.epoch,
            "iter": self._iter + 1,
            "inner_iter": data_loader.consumed,
        }
        self.call_hook("after_train_iter")
        self.data_batch = None
        self._inner_iter += 1
        self._iter += 1

    @torch.no_grad()
    def val(self, data_loader: IterLoader, **kwargs: Any) -> None:
        """Run one validation iteration under ``torch.no_grad()``."""
        self.model.eval()
        self.mode = "val"
        self.data_loader = data_loader
        data_batch = next(data_loader)
        self.data_batch = data_batch
        self.call_hook("before_val_iter")
        self.run_iter(data_batch, train_mode=False, **kwargs)
        self.call_hook("after_val_iter")
        self.data_batch = None
        self._inner_iter += 1

    def _val_step(self, data_batch: Any, kwargs: dict) -> Any:
        # mmcv's IterBasedRunner passes no optimizer: val_step(self, data_batch, **kwargs) works.
        return self.model.val_step(data_batch, **kwargs)

    def run(
        self, data_loaders: list, workflow: list, max_iters: int | None = None, **kwargs: Any
    ) -> None:
        """Run ``workflow`` until ``max_iters`` iterations are trained (see :meth:`BaseRunner.run`).

        A phase ``('train', 1000)`` trains 1000 iterations. ``max_iters`` here is deprecated:
        set it in the constructor.
        """
        self._run_workflow(data_loaders, workflow, "max_iters", max_iters, kwargs)

    def _phase_loaders(self, data_loaders: list, workflow: list) -> list[IterLoader]:
        """Endless loaders; the train one starts at the resumed batch, then the RNG is restored."""
        train_index = next((i for i, (mode, _) in enumerate(workflow) if mode == "train"), None)
        loaders = []
        for i, loader in enumerate(data_loaders):
            if i == train_index:
                self._train_loader = loader
                start, sampler_state = self._resume.take_loader_position() or (0, None)
                loaders.append(IterLoader(loader, self._epoch, start, sampler_state, self.logger))
            else:
                loaders.append(IterLoader(loader))
        # Iterators exist now; creating them drew from torch's RNG as in the saved run.
        self._restore_rng()
        return loaders

    def _run_phases(self, loaders: list, workflow: list, kwargs: dict) -> None:
        # mmcv calls before_epoch/after_epoch once, around all iterations.
        self.call_hook("before_epoch")
        super()._run_phases(loaders, workflow, kwargs)
        self.call_hook("after_epoch")

    def _begin_phase(self) -> None:
        self._inner_iter = 0

    def _train_steps_left(self) -> int:
        return self._max_iters - self._iter

    save_checkpoint = numbered_checkpoint_saver("iter_{}.pth", by_epoch=False)
