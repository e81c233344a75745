"""Checkpointer: the one owner of a runner's checkpoint files.

Every decision about a runner's checkpoints is made here, once: the file names (numbered,
best, preempted), whether this rank writes (rank 0, or every rank for a sharded model), the
write strategy (a full ``.pth`` file, or a sharded directory written by every rank),
``latest.pth``, rotation (``max_keep_ckpts``), replacing the previous best or preemption
checkpoint, which checkpoint a resume reads (``'auto'``), and the run record
(``work_dir/last_run.json``). What goes *into* a checkpoint besides the model and optimizer is
the runner's own state (``runner.state_dict()``, see :mod:`mmpar.runner.resume.runner_state`).

The runner's mmcv methods ``save_checkpoint``, ``load_checkpoint`` and ``resume`` delegate
here; hooks save through :meth:`Checkpointer.save` (``checkpointer_of(runner).save(...)``).
"""

from __future__ import annotations

import os
from typing import Any, Callable

from torch.optim import Optimizer

from mmpar.parallel.utils import ModelLayout, model_layout
from mmpar.utils.dist import broadcast_object

from .atomic_file import remove_checkpoint, update_latest_link
from .format import load_checkpoint, load_local_checkpoint, write_checkpoint
from .fsdp_state import load_full_optimizer_state
from .run_identity import (
    checkpoint_run_id,
    choose_resume_checkpoint,
    new_run_id,
    write_run_record,
)
from .sharded import save_sharded_checkpoint
from .work_dir_paths import is_inside, resolve_recorded, to_recorded

#: Default names of numbered checkpoints, by whether they count epochs.
NUMBERED = {True: "epoch_{}.pth", False: "iter_{}.pth"}


def numbered_checkpoint_saver(default_tmpl: str, by_epoch: bool) -> Callable[..., str]:
    """Make a runner's mmcv ``save_checkpoint``: numbered by epoch (``by_epoch``) or iteration.

    The epoch and iteration runners differ only in the default file name and the counter;
    each keeps mmcv's signature with its own ``filename_tmpl`` default.
    """

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
            The path written (see :meth:`Checkpointer.write`).
        """
        checkpointer = self.checkpointer
        name = checkpointer.numbered_name(filename_tmpl, by_epoch)
        options = dict(save_optimizer=save_optimizer, meta=meta, create_symlink=create_symlink)
        return checkpointer.write(out_dir, name, **options)

    save_checkpoint.__qualname__ = "save_checkpoint"
    save_checkpoint._mmpar_saver = True  # type: ignore[attr-defined]  # see _own_save_checkpoint
    return save_checkpoint


def _own_save_checkpoint(runner: Any) -> bool:
    """Whether the runner has its own ``save_checkpoint`` (a project's runner class, a patch).

    mmcv's hooks save through ``runner.save_checkpoint``; a runner that overrides it (to add
    files or change names) must keep being called.
    """
    method = getattr(runner, "save_checkpoint", None)
    func = getattr(method, "__func__", method)
    # "is True": a mock's made-up attribute is not the mark.
    return method is not None and getattr(func, "_mmpar_saver", False) is not True


def _write_with_save_checkpoint(runner: Any, out_dir: str, filename: str, options: dict) -> str:
    """Write ``out_dir/filename`` through ``runner.save_checkpoint``, as mmcv's hooks did."""
    # Only the arguments that differ from mmcv's defaults: such runners may accept no
    # others (mmcv's EvalHook passed create_symlink alone).
    defaults = dict(save_optimizer=True, meta=None, create_symlink=True)
    kwargs = {k: v for k, v in options.items() if v != defaults[k]}
    # The runner formats the template with its counter: pass the finished name escaped.
    escaped = filename.replace("{", "{{").replace("}", "}}")
    runner.save_checkpoint(out_dir, filename_tmpl=escaped, **kwargs)
    return os.path.join(out_dir, filename)


class Checkpointer:
    """Names, writes, rotates, reads and records a runner's checkpoints.

    Args:
        runner: The runner (:class:`~mmpar.runner.BaseRunner`): its ``model``, ``optimizer``,
            ``meta``, ``logger``, ``work_dir``, ``rank``, counters and ``state_dict()``.

    The runner's model is unwrapped once (:attr:`layout`), when the Checkpointer is made and
    again only when ``runner.model`` is replaced: every save and load uses that answer.

    Attributes:
        sharded: Checkpoints are sharded directories (see :meth:`use_sharded`).
        run_id: The run's identity (``runner.run_id``): new, or the resumed checkpoint's.
        resumed_from: The checkpoint :meth:`resume` read, or None.
    """

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self.sharded = False
        self.run_id = new_run_id()
        self.resumed_from: str | None = None
        self._layout: ModelLayout | None = None
        if getattr(runner, "model", None) is not None:
            self._layout = model_layout(runner.model)

    # ---------------------------------------------------------------------------- decisions
    @property
    def layout(self) -> ModelLayout:
        """The runner's model unwrapped (:func:`~mmpar.parallel.utils.model_layout`).

        Kept while ``runner.model`` is the same object of the same class (``fully_shard``
        changes a module's class in place); made anew when either changes.
        """
        model = getattr(self.runner, "model", None)
        layout = self._layout
        if layout is None or layout.model is not model or type(layout.model) is not type(model):
            layout = self._layout = model_layout(model)
        return layout

    @property
    def collective(self) -> bool:
        """Whether every rank joins each save: the model is sharded (FSDP)."""
        return self.layout.sharded

    @property
    def writes(self) -> bool:
        """Whether this rank takes part in writing: rank 0, or every rank when collective."""
        return getattr(self.runner, "rank", 0) == 0 or self.collective

    def use_sharded(self, sharded: bool = True) -> None:
        """Make every checkpoint a sharded (DCP) directory, or a file again.

        ``CheckpointHook(sharded=True)`` (``checkpoint_config = dict(sharded=True)``) calls
        this; periodic, best and preemption checkpoints then all are directories, each rank
        writing its shards (see :mod:`mmpar.runner.checkpointing.sharded`).

        Raises:
            ValueError: ``sharded`` but the model is not sharded (FSDP): a sharded checkpoint
                of a replicated model would just be a full one split into files.
        """
        if sharded and not self.collective:
            raise ValueError(
                "sharded checkpoints (checkpoint_config.sharded=True) need a sharded model: set "
                "model_wrapper = dict(type='MMFullyShardedDataParallel') and launch with "
                f"torchrun, or drop sharded=True (the model is {type(self.runner.model).__name__})"
            )
        self.sharded = sharded

    # ------------------------------------------------------------------------------- names
    def numbered_name(self, filename_tmpl: str | None = None, by_epoch: bool = True) -> str:
        """A numbered checkpoint's name: ``filename_tmpl`` formatted with the 1-based number.

        The number is the current epoch's (``by_epoch``) or iteration's; the default template
        is ``epoch_{}.pth`` / ``iter_{}.pth``.
        """
        number = self.runner.epoch + 1 if by_epoch else self.runner.iter + 1
        return (filename_tmpl or NUMBERED[by_epoch]).format(number)

    @staticmethod
    def best_name(metric: str, unit: str, number: int) -> str:
        """The best checkpoint's name: ``best_<metric>_<unit>_<number>.pth`` (mmcv's)."""
        return f"best_{metric}_{unit}_{number}.pth"

    @staticmethod
    def preempted_name(iters: int) -> str:
        """The preemption checkpoint's name after ``iters`` completed iterations."""
        return f"preempted_iter_{iters}.pth"

    # ----------------------------------------------------------------------------- writing
    def save(
        self,
        out_dir: str,
        filename: str,
        *,
        replaces: str | None = None,
        history: list[str] | None = None,
        max_keep: int = -1,
        every_rank: bool = True,
        **options: Any,
    ) -> str | None:
        """Save a checkpoint as a hook does; the one method every saving hook calls.

        Args:
            out_dir: The directory of the checkpoint.
            filename: Its name (see :meth:`numbered_name`, :meth:`best_name`,
                :meth:`preempted_name`).
            replaces: Path of a checkpoint this one replaces (the previous best or
                preemption checkpoint): deleted by rank 0 once the new one is on disk, if it
                lies in ``out_dir`` (a run never deletes outside the directory it writes to).
            history: The caller's names of its checkpoints in ``out_dir``, oldest first:
                ``filename`` is added before writing (so the checkpoint's hook state lists
                it), then rank 0 deletes the oldest beyond ``max_keep`` (never the best, never
                a name that leads outside ``out_dir``).
            max_keep: Checkpoints of ``history`` to keep; <= 0 keeps all.
            every_rank: The caller runs on every rank (periodic and preemption saves): every
                rank's RNG states are gathered first (a collective) and only the ranks that
                write go on. False: the caller already is a writing rank (a best checkpoint,
                decided where the metrics are).
            **options: :meth:`write`'s ``save_optimizer`` (default True), ``meta`` (extra
                metadata) and ``create_symlink`` (point ``latest.pth`` at it; default True).

        Returns:
            The path written, or None on a rank that does not write.
        """
        if every_rank:
            gather = getattr(self.runner, "gather_rank_rng_states", None)
            if gather is not None:  # every rank's RNG states into rank 0's checkpoint
                gather()
            if not self.writes:
                return None
        if history is not None:
            if filename in history:
                history.remove(filename)
            history.append(filename)
        if _own_save_checkpoint(self.runner):
            path = _write_with_save_checkpoint(self.runner, out_dir, filename, options)
        else:
            path = self.write(out_dir, filename, **options)
        if getattr(self.runner, "rank", 0) == 0:  # deleting files stays with rank 0
            if replaces and self._may_delete(replaces, out_dir, path):
                if remove_checkpoint(replaces):
                    self.runner.logger.info("removed the replaced checkpoint %s", replaces)
            if history is not None and max_keep > 0:
                self._rotate(out_dir, history, max_keep, filename)
        return path

    def _may_delete(self, old: str, out_dir: str, new: str) -> bool:
        """Whether ``old`` may be deleted after ``new`` was written to ``out_dir``."""
        if os.path.abspath(old) == os.path.abspath(new):
            return False
        if is_inside(old, out_dir):
            return True
        self.runner.logger.info(
            "%s is outside %s (recorded by a run in another work dir?): left alone", old, out_dir
        )
        return False

    def write(
        self,
        out_dir: str,
        filename: str,
        *,
        save_optimizer: bool = True,
        meta: dict | None = None,
        create_symlink: bool = True,
    ) -> str:
        """Write ``out_dir/filename`` from this rank (``runner.save_checkpoint`` calls this).

        A sharded model makes it collective: every rank calls it, rank 0 writes (or renames).

        Returns:
            The path written.

        Raises:
            TypeError: ``meta`` is not a dict or None.
        """
        runner = self.runner
        if meta is None:
            meta = {}
        elif not isinstance(meta, dict):
            raise TypeError(f"meta must be a dict or None, but got {type(meta).__name__}")
        meta = dict(meta)
        # The runner's state first: a hook may refresh runner.meta when asked for its state
        # (Fp16OptimizerHook mirrors its scaler there, as mmcv did).
        runner_state = runner.state_dict()
        if runner.meta is not None:
            meta.update(runner.meta)
        # mmcv 1.x meaning: epochs and iterations completed.
        meta.update(epoch=runner_state["epoch"], iter=runner_state["iter"])
        _record_relative(meta, runner.work_dir)
        meta["run_id"] = self.run_id  # an added key: mmcv reads such meta unchanged
        filepath = os.path.join(out_dir, filename)
        optimizer = runner.optimizer if save_optimizer else None
        if self.sharded:
            save_sharded_checkpoint(runner.model, filepath, optimizer, meta, runner_state)
        else:
            write_checkpoint(self.layout, filepath, optimizer, meta, runner_state)
        if create_symlink and (runner.rank == 0 or not self.collective):
            update_latest_link(out_dir, filename)
        return filepath

    def _rotate(self, out_dir: str, history: list[str], max_keep: int, current: str) -> None:
        best = ((self.runner.meta or {}).get("hook_msgs") or {}).get("best_ckpt")
        best_name = os.path.basename(best) if best else None
        while len(history) > max_keep:
            old = history.pop(0)
            old_path = os.path.join(out_dir, old)
            if old not in (current, best_name) and self._may_delete(
                old_path, out_dir, os.path.join(out_dir, current)
            ):
                remove_checkpoint(old_path)

    # ----------------------------------------------------------------------------- reading
    def load(self, filename: str, optimizer: Any = None, **load_args: Any) -> dict:
        """Load weights into the model; return the checkpoint.

        ``load_args``: :func:`~mmpar.runner.load_checkpoint`'s (``map_location``, ``strict``,
        ``revise_keys``, ``weights_only``). ``optimizer``: see ``load_checkpoint``.
        """
        runner = self.runner
        runner.logger.info("load checkpoint from %s", filename)
        return load_checkpoint(
            runner.model, filename, logger=runner.logger, optimizer=optimizer, **load_args
        )

    def resume(
        self, checkpoint: str, resume_optimizer: bool = True, **load_args: Any
    ) -> dict | None:
        """Continue the run of ``checkpoint``: weights, optimizer and the runner's state.

        Args:
            checkpoint: Path, or ``'auto'``: the newest loadable checkpoint of the run that last
                started in ``work_dir`` (see
                :func:`mmpar.runner.checkpointing.run_identity.choose_resume_checkpoint`); training
                starts from scratch when there is none.
            resume_optimizer: Also restore the optimizer state(s).
            **load_args: ``map_location`` (passed to ``torch.load``) and ``weights_only``
                (see :func:`mmpar.runner.load_checkpoint`).

        Returns:
            The checkpoint dict, or None when ``'auto'`` found nothing.

        The weights must fit the model exactly (``strict``): resuming continues the same run,
        and the runner takes the checkpoint's ``run_id`` (a checkpoint without one keeps the
        runner's new id). ``runner.load_state_dict`` says when each part of the state applies.

        Raises:
            MixedRunsError: ``'auto'`` found checkpoints of several runs and no record of
                which one to continue.
        """
        runner = self.runner
        optimizer = runner.optimizer if resume_optimizer else None
        if checkpoint == "auto":
            found = None
            if runner.work_dir:
                found = choose_resume_checkpoint(runner.work_dir, runner.logger)
            if found is None:
                return None
            checkpoint = found
            ckpt = self._load_found(checkpoint, optimizer, **load_args)
        else:
            ckpt = self.load(checkpoint, optimizer, strict=True, **load_args)
        if optimizer is not None and "optimizer" in ckpt:  # a file (a directory read it)
            self._load_optimizer_state(ckpt["optimizer"], checkpoint)
        meta = ckpt.get("meta") or {}
        self._adopt_run_id(ckpt, checkpoint)
        if runner.meta is None:
            runner.meta = {}
        runner.meta.setdefault("hook_msgs", {})
        hook_msgs = runner.meta["hook_msgs"]
        hook_msgs.update(meta.get("hook_msgs", {}))
        if "best_ckpt" in hook_msgs:  # recorded relative to the work dir
            hook_msgs["best_ckpt"] = resolve_recorded(hook_msgs["best_ckpt"], runner.work_dir)
        state = ckpt.get("mmpar_state")
        if not state:
            state = {"epoch": meta.get("epoch", 0), "iter": meta.get("iter", 0)}
            runner.logger.warning(
                "%s has no mmpar_state (an mmcv 1.x checkpoint?): resuming at the start of epoch "
                "%d / iter %d without RNG, sampler or hook state",
                checkpoint,
                int(state["epoch"]),
                int(state["iter"]),
            )
        runner.load_state_dict(state, source=checkpoint)
        runner.logger.info(
            "resumed from %s at epoch %d, iter %d", checkpoint, runner.epoch, runner.iter
        )
        return ckpt

    def _load_found(self, path: str, optimizer: Any, **load_args: Any) -> dict:
        """Load a checkpoint auto-resume found (and read) in ``work_dir``: a local one."""
        runner = self.runner
        runner.logger.info("load checkpoint from %s", path)
        return load_local_checkpoint(self.layout, path, optimizer, runner.logger, **load_args)

    def _load_optimizer_state(self, state: dict, source: str) -> None:
        optimizer = self.runner.optimizer
        if isinstance(optimizer, Optimizer):
            self._load_one_optimizer(optimizer, state, source)
            return
        missing = [k for k in optimizer if k not in state]
        if missing:
            raise KeyError(f"{source} has no optimizer state for {missing}; it has {list(state)}")
        for name, optim in optimizer.items():
            self._load_one_optimizer(optim, state[name], source)

    def _load_one_optimizer(self, optim: Optimizer, state: dict, source: str) -> None:
        if self.collective:  # every rank keeps its shard of the full state
            load_full_optimizer_state(self.runner.model, optim, state, source)
        else:
            optim.load_state_dict(state)

    # ------------------------------------------------------------------------- run record
    def _adopt_run_id(self, ckpt: dict, checkpoint: str) -> None:
        """Continue the run of the resumed checkpoint: take its ``run_id`` if it has one."""
        self.resumed_from = checkpoint
        run_id = checkpoint_run_id(ckpt)
        if run_id is None:
            self.runner.logger.info(
                "%s records no run id (saved by mmcv 1.x or an older mmpar): continuing it as "
                "run %s",
                checkpoint,
                self.run_id,
            )
        else:
            self.run_id = run_id

    def record_run_start(self) -> None:
        """Write ``work_dir/last_run.json`` on rank 0: this run is the one to auto-resume.

        All ranks take rank 0's run id first. That collective also keeps rank 0 from writing
        the record before every rank chose its checkpoint from the previous one.
        """
        runner = self.runner
        self.run_id = broadcast_object(self.run_id)
        if runner.work_dir is None or runner.rank != 0:
            return
        resumed = self.resumed_from
        write_run_record(runner.work_dir, self.run_id, runner.world_size, resumed)
        runner.logger.info(
            "run %s (%s)", self.run_id, f"resumed from {resumed}" if resumed else "fresh start"
        )


def _record_relative(meta: dict, work_dir: str | None) -> None:
    """Record the best checkpoint's path in ``meta`` relative to ``work_dir`` (a copy).

    ``runner.meta`` keeps the full path, as mmcv's does; the checkpoint gets a path that stays
    right when the work dir is copied or moved (see :mod:`.work_dir_paths`).
    """
    msgs = meta.get("hook_msgs")
    if isinstance(msgs, dict) and isinstance(msgs.get("best_ckpt"), str):
        meta["hook_msgs"] = dict(msgs, best_ckpt=to_recorded(msgs["best_ckpt"], work_dir))


class _SaveCheckpointWriter(Checkpointer):
    """The Checkpointer of a runner of mmcv's duck type that has none.

    It writes through the runner's own ``save_checkpoint``, as mmcv's hooks did.
    """

    def write(self, out_dir: str, filename: str, **options: Any) -> str:
        return _write_with_save_checkpoint(self.runner, out_dir, filename, options)


def checkpointer_of(runner: Any) -> Checkpointer:
    """The runner's :class:`Checkpointer` (``runner.checkpointer``).

    A runner of mmcv's duck type without one (a custom runner, a test double) gets one that
    writes through ``runner.save_checkpoint``.
    """
    found = getattr(runner, "checkpointer", None)
    return found if found is not None else _SaveCheckpointWriter(runner)
