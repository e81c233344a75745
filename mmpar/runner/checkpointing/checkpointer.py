"""The runner's checkpoint files: mmcv 1.x's ``save_checkpoint`` and ``load_checkpoint``.

Every file the runner writes also carries the exact-resume state
(:meth:`mmpar.runner.resume.runner_state.ResumeMixin.resume_state`) under ``mmpar_state`` and
the run's identity as ``meta['run_id']`` (:mod:`mmpar.runner.resume.run_identity`).
"""

from __future__ import annotations

import os
from abc import ABCMeta, abstractmethod
from typing import Any, Callable

from torch.optim import Optimizer

from mmpar.parallel import is_fully_sharded

from ..checkpoint import load_checkpoint, save_checkpoint, update_latest_link
from .fsdp_state import checkpoint_is_collective, load_full_optimizer_state
from .sharded import save_sharded_checkpoint


def numbered_checkpoint_saver(default_tmpl: str, counter: str) -> Callable[..., str]:
    """Make a runner's ``save_checkpoint`` that numbers files by ``counter`` (e.g. ``'epoch'``).

    The epoch and iteration runners differ only in the default file name and the counter;
    each keeps mmcv's signature with its own ``filename_tmpl`` default.
    """
    attr = f"_{counter}"

    def save_checkpoint(
        self: Any,
        out_dir: str,
        filename_tmpl: str = default_tmpl,
        save_optimizer: bool = True,
        meta: dict | None = None,
        create_symlink: bool = True,
    ) -> str:
        """Save ``out_dir/filename_tmpl.format(n)`` and point ``latest.pth`` at it.

        ``n`` is the 1-based number of the current epoch (EpochBasedRunner, default
        ``'epoch_{}.pth'``) or iteration (IterBasedRunner, ``'iter_{}.pth'``).

        Returns:
            The path written.
        """
        filename = filename_tmpl.format(getattr(self, attr) + 1)
        return self._save_checkpoint_file(out_dir, filename, save_optimizer, meta, create_symlink)

    save_checkpoint.__qualname__ = "save_checkpoint"
    return save_checkpoint


class CheckpointMixin(metaclass=ABCMeta):
    """BaseRunner's checkpoint files: write one (and ``latest.pth``), load weights from one.

    ``_load_optimizer_state`` puts a checkpoint's optimizer state(s) back (for resume).

    Needs from the runner: ``model``, ``optimizer``, ``meta``, ``logger``, ``_next_position``,
    ``_run_id`` and ``resume_state()``.
    """

    #: Write sharded checkpoint directories instead of ``.pth`` files (see
    #: :meth:`use_sharded_checkpoints`).
    sharded_checkpoints = False

    def use_sharded_checkpoints(self, sharded: bool = True) -> None:
        """Make every checkpoint this runner writes a sharded (DCP) directory, or a file again.

        ``CheckpointHook(sharded=True)`` (``checkpoint_config = dict(sharded=True)``) calls
        this; periodic, best and preemption checkpoints then all are directories, each rank
        writing its shards (see :mod:`mmpar.runner.checkpointing.sharded`).

        Raises:
            ValueError: ``sharded`` but the model is not sharded (FSDP): a sharded checkpoint
                of a replicated model would just be a full one split into files.
        """
        if sharded and not checkpoint_is_collective(self):
            raise ValueError(
                "sharded checkpoints (checkpoint_config.sharded=True) need a sharded model: set "
                "model_wrapper = dict(type='MMFullyShardedDataParallel') and launch with "
                f"torchrun, or drop sharded=True (the model is {type(self.model).__name__})"
            )
        self.sharded_checkpoints = sharded

    @abstractmethod
    def save_checkpoint(
        self,
        out_dir: str,
        filename_tmpl: str,
        save_optimizer: bool = True,
        meta: dict | None = None,
        create_symlink: bool = True,
    ) -> None:
        """Save a checkpoint into ``out_dir``."""

    def _save_checkpoint_file(
        self,
        out_dir: str,
        filename: str,
        save_optimizer: bool,
        meta: dict | None,
        create_symlink: bool,
    ) -> str:
        if meta is None:
            meta = {}
        elif not isinstance(meta, dict):
            raise TypeError(f"meta must be a dict or None, but got {type(meta).__name__}")
        meta = dict(meta)
        # Hook states first: a hook may refresh runner.meta when asked for its state
        # (Fp16OptimizerHook mirrors its scaler there, as mmcv did).
        extra_state = self.resume_state()
        if self.meta is not None:
            meta.update(self.meta)
        # mmcv 1.x meaning: epochs and iterations completed.
        meta.update(epoch=self._next_position["epoch"], iter=self._next_position["iter"])
        meta["run_id"] = self._run_id  # an added key: mmcv reads such meta unchanged
        filepath = os.path.join(out_dir, filename)
        optimizer = self.optimizer if save_optimizer else None
        # Sharded model: every rank calls this (collective), rank 0 writes (or renames).
        if self.sharded_checkpoints:
            save_sharded_checkpoint(self.model, filepath, optimizer, meta, extra_state=extra_state)
        else:
            save_checkpoint(self.model, filepath, optimizer, meta, extra_state=extra_state)
        if create_symlink and (self._rank == 0 or not checkpoint_is_collective(self)):
            update_latest_link(out_dir, filename)
        return filepath

    def load_checkpoint(
        self,
        filename: str,
        map_location: Any = "cpu",
        strict: bool = False,
        revise_keys: Any = ((r"^module\.", ""),),
        weights_only: bool = True,
    ) -> dict:
        """Load weights into the model (see :func:`mmpar.runner.load_checkpoint`)."""
        self.logger.info("load checkpoint from %s", filename)
        return load_checkpoint(
            self.model, filename, map_location, strict, self.logger, revise_keys, weights_only
        )

    def _load_optimizer_state(self, state: dict, source: str) -> None:
        if isinstance(self.optimizer, Optimizer):
            self._load_one_optimizer(self.optimizer, state, source)
            return
        missing = [k for k in self.optimizer if k not in state]  # type: ignore[union-attr]
        if missing:
            raise KeyError(f"{source} has no optimizer state for {missing}; it has {list(state)}")
        for name, optim in self.optimizer.items():  # type: ignore[union-attr]
            self._load_one_optimizer(optim, state[name], source)

    def _load_one_optimizer(self, optim: Optimizer, state: dict, source: str) -> None:
        if is_fully_sharded(self.model):  # every rank keeps its shard of the full state
            load_full_optimizer_state(self.model, optim, state, source)
        else:
            optim.load_state_dict(state)
