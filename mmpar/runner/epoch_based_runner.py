"""EpochBasedRunner: train/val by epochs, with mid-epoch exact resume."""

from __future__ import annotations

import difflib
import warnings
from typing import Any

import torch

from .base_runner import BaseRunner
from .builder import RUNNERS

VALID_MODES = ("train", "val")


def check_workflow(data_loaders: Any, workflow: Any) -> None:
    """Validate ``workflow`` (``[('train', 2), ('val', 1)]``) against the data loaders.

    Raises:
        TypeError: ``data_loaders`` or ``workflow`` is not a list.
        ValueError: Lengths differ, a mode is unknown, or a count is not a positive int.
    """
    if not isinstance(data_loaders, (list, tuple)):
        raise TypeError(f"data_loaders must be a list, but got {type(data_loaders).__name__}")
    if not isinstance(workflow, (list, tuple)):
        raise TypeError(f"workflow must be a list of (mode, count), got {type(workflow).__name__}")
    if len(data_loaders) != len(workflow):
        raise ValueError(
            f"workflow has {len(workflow)} phases but {len(data_loaders)} data loaders were given; "
            "pass one data loader per workflow phase"
        )
    for phase in workflow:
        if not (isinstance(phase, (list, tuple)) and len(phase) == 2):
            raise ValueError(f"each workflow phase must be (mode, count), got {phase!r}")
        mode, count = phase
        if mode not in VALID_MODES:
            close = difflib.get_close_matches(str(mode), VALID_MODES, n=1, cutoff=0.5)
            hint = f" Did you mean: {close[0]}?" if close else ""
            raise ValueError(
                f"unknown workflow mode {mode!r} in {phase!r}; valid modes are "
                f"{list(VALID_MODES)}.{hint}"
            )
        if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
            raise ValueError(f"workflow phase {phase!r}: the count must be a positive int")


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
        start = (self._pending_resume or {}).get("inner_iter", 0)
        completed = True
        for i, data_batch in enumerate(self._train_iterator(data_loader), start=start):
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
        self,
        data_loaders: list,
        workflow: list,
        max_epochs: int | None = None,
        **kwargs: Any,
    ) -> None:
        """Run the workflow until ``max_epochs`` training epochs are done.

        Args:
            data_loaders: One loader per workflow phase.
            workflow: ``[(mode, epochs), ...]``, e.g. ``[('train', 2), ('val', 1)]``.
            max_epochs: Deprecated; set it in the constructor.
            **kwargs: Passed to ``train_step``/``val_step``.
        """
        check_workflow(data_loaders, workflow)
        self._run_limit("max_epochs", max_epochs)
        for (mode, _), loader in zip(workflow, data_loaders):
            if mode == "train":
                self._max_iters = self._max_epochs * len(loader)
                break
        self.logger.info("workflow: %s, max: %d epochs", workflow, self._max_epochs)
        self._begin_run()
        self.call_hook("before_run")
        try:
            while self._epoch < self._max_epochs and not self.should_stop:
                for (mode, epochs), loader in zip(workflow, data_loaders):
                    epoch_runner = getattr(self, mode)
                    for _ in range(epochs):
                        if self.should_stop or (
                            mode == "train" and self._epoch >= self._max_epochs
                        ):
                            break
                        epoch_runner(loader, **kwargs)
        finally:
            self.call_hook("after_run")

    def save_checkpoint(
        self,
        out_dir: str,
        filename_tmpl: str = "epoch_{}.pth",
        save_optimizer: bool = True,
        meta: dict | None = None,
        create_symlink: bool = True,
    ) -> str:
        """Save ``out_dir/filename_tmpl.format(epoch + 1)`` and point ``latest.pth`` at it.

        Returns:
            The path written.
        """
        filename = filename_tmpl.format(self._epoch + 1)
        return self._save_checkpoint_file(out_dir, filename, save_optimizer, meta, create_symlink)


@RUNNERS.register_module()
class Runner(EpochBasedRunner):
    """Deprecated alias of :class:`EpochBasedRunner` (mmcv 1.x)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            "Runner is deprecated, use EpochBasedRunner instead", DeprecationWarning, stacklevel=2
        )
        super().__init__(*args, **kwargs)


__all__ = ["EpochBasedRunner", "Runner", "check_workflow"]
