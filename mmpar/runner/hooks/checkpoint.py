"""CheckpointHook: periodic checkpoints with rotation of the files it wrote."""

from __future__ import annotations

import os
import warnings
from typing import Any

import torch

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.fileio import FileClient as FileClient
from mmpar.runner.dist_utils import allreduce_params as allreduce_params
from mmpar.runner.dist_utils import master_only as master_only
from mmpar.utils.dist import is_distributed
from mmpar.utils.registry import ConfigArgumentError

from ..checkpointing.checkpointer import checkpointer_of
from ..runner_protocol import RunnerLike
from .hook import HOOKS, Hook


@HOOKS.register_module()
class CheckpointHook(Hook):
    """Save checkpoints every ``interval`` epochs or iterations (mmcv 1.x arguments).

    Checkpoints are written atomically by the runner's
    :class:`~mmpar.runner.checkpointing.checkpointer.Checkpointer` and ``latest.pth`` points
    at the newest. With ``max_keep_ckpts > 0`` older checkpoints are deleted, but only files
    this hook wrote (the list survives resume through :meth:`state_dict`) and never the
    checkpoint recorded as best (``runner.meta['hook_msgs']['best_ckpt']``). Only rank 0
    writes; with a sharded (FSDP) model every rank joins the save, and rank 0 deletes old
    ones.

    Args:
        interval: Save every ``interval`` epochs (``by_epoch``) or iterations; ``-1``: never
            periodically (only the last one, with ``save_last``).
        by_epoch: Count epochs (True) or iterations (False). With an epoch-based runner,
            ``by_epoch=False`` saves mid-epoch checkpoints that resume mid-epoch.
        save_optimizer: Include the optimizer state.
        out_dir: Root directory; checkpoints go to ``out_dir/<work_dir name>``. Default:
            ``runner.work_dir``.
        max_keep_ckpts: Keep at most this many periodic checkpoints (``-1``: all).
        save_last: Also save at the last epoch/iteration.
        sync_buffer: All-reduce (average) floating-point buffers across ranks before saving.
        file_client_args: Accepted for mmcv 1.x compatibility; only local paths are supported.
        **kwargs: ``filename_tmpl`` (default ``'epoch_{}.pth'``/``'iter_{}.pth'``),
            ``create_symlink`` (default True), ``meta``, and ``sharded`` (default False): with
            a sharded (FSDP) model, write every checkpoint of the run (periodic, best,
            preemption) as a ``torch.distributed.checkpoint`` directory of that name, each
            rank writing its shards (``Checkpointer.use_sharded``; a ValueError for other
            models).

    What it may use of the runner: :class:`~mmpar.runner.runner_protocol.RunnerLike`.
    """

    def __init__(
        self,
        interval: int = -1,
        by_epoch: bool = True,
        save_optimizer: bool = True,
        out_dir: str | None = None,
        max_keep_ckpts: int = -1,
        save_last: bool = True,
        sync_buffer: bool = False,
        file_client_args: dict | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(interval, bool) or not isinstance(interval, int):
            raise TypeError(f"interval must be an int, but got {type(interval).__name__}")
        if interval == 0 or interval < -1:
            raise ValueError(
                f"CheckpointHook: interval must be a positive int, or -1 to save only the last "
                f"checkpoint (with save_last=True), but got {interval}"
            )
        unknown = set(kwargs) - {"filename_tmpl", "create_symlink", "meta", "sharded"}
        if unknown:
            raise ConfigArgumentError(
                f"CheckpointHook got unknown arguments {sorted(unknown)}; extra arguments may be "
                "filename_tmpl, create_symlink, meta and sharded"
            )
        if not isinstance(kwargs.get("sharded", False), bool):
            raise TypeError(
                f"CheckpointHook: sharded must be True or False, got {kwargs['sharded']!r}"
            )
        if file_client_args is not None:
            warnings.warn(
                "CheckpointHook: file_client_args is ignored; mmpar writes to local paths only",
                stacklevel=2,
            )
        self.interval = interval
        self.by_epoch = by_epoch
        self.save_optimizer = save_optimizer
        self.out_dir = out_dir
        self.max_keep_ckpts = max_keep_ckpts
        self.save_last = save_last
        self.sync_buffer = sync_buffer
        self.args = kwargs
        self.written: list[str] = []  # file names this hook wrote, oldest first

    def before_run(self, runner: RunnerLike) -> None:
        """Resolve the output directory."""
        if self.out_dir is None:
            self.out_dir = runner.work_dir
        elif runner.work_dir is not None:
            self.out_dir = os.path.join(
                self.out_dir, os.path.basename(runner.work_dir.rstrip(os.sep))
            )
        if self.out_dir is None:
            raise ValueError("CheckpointHook needs out_dir or a runner with a work_dir")
        if self.sharded:
            checkpointer_of(runner).use_sharded()
        runner.logger.info("Checkpoints will be saved to %s", self.out_dir)

    def after_train_epoch(self, runner: RunnerLike) -> None:
        """Save at epoch intervals (``by_epoch=True``)."""
        if self.by_epoch and (
            self.every_n_epochs(runner, self.interval)
            or (self.save_last and self.is_last_epoch(runner))
        ):
            self._save_checkpoint(runner)

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Save at iteration intervals (``by_epoch=False``)."""
        if not self.by_epoch and (
            self.every_n_iters(runner, self.interval)
            or (self.save_last and self.is_last_iter(runner))
        ):
            self._save_checkpoint(runner)

    @property
    def sharded(self) -> bool:
        """Whether checkpoints are sharded directories (``sharded=True``)."""
        return bool(self.args.get("sharded", False))

    def _sync_buffers(self, runner: RunnerLike) -> None:
        if not is_distributed() or runner.world_size <= 1:
            return
        for buf in runner.model.buffers():
            if buf.is_floating_point():
                torch.distributed.all_reduce(buf)
                buf.div_(runner.world_size)

    def _save_checkpoint(self, runner: RunnerLike) -> None:
        if self.sync_buffer:
            self._sync_buffers(runner)
        checkpointer = checkpointer_of(runner)
        filename = checkpointer.numbered_name(self.args.get("filename_tmpl"), self.by_epoch)
        if runner.meta is not None and checkpointer.writes:
            # Before saving: the checkpoint's hook_msgs name it as the last checkpoint (a run
            # resumed from it then goes on exactly as the uninterrupted run would).
            runner.meta.setdefault("hook_msgs", {})["last_ckpt"] = os.path.join(
                self.out_dir, filename
            )
        checkpointer.save(
            self.out_dir,
            filename,
            save_optimizer=self.save_optimizer,
            meta=self.args.get("meta"),
            create_symlink=self.args.get("create_symlink", True),
            history=self.written,
            max_keep=self.max_keep_ckpts,
        )

    def state_dict(self) -> dict:
        """The names of the checkpoints this hook wrote (for rotation after resume)."""
        return {"written": list(self.written)} if self.written else {}

    def load_state_dict(self, state: dict) -> None:
        """Restore the list of written checkpoints."""
        self.written = list(state.get("written", []))
