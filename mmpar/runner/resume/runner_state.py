"""Exact resume for the runners: ResumeState and the runner's ``resume()``.

A checkpoint holds mmcv 1.x's ``meta``, ``state_dict`` and ``optimizer``, plus ``mmpar_state``:
the position of the next batch (``epoch``, ``iter``, ``inner_iter``), the RNG states (the
writing rank's under ``rng``; in a distributed run every rank's under ``rng_per_rank``, in rank
order), the train sampler's ``state_dict`` and every stateful hook's, by hook key. ``resume()``
reads it into a :class:`ResumeState`; the run applies each part once, at the point where the
uninterrupted run had it: hook states before ``before_run``, the sampler state and batch
position when the first train iterator is made, the RNG states right after that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mmpar.utils.dist import broadcast_object, gather_object, is_distributed

from ..checkpointing.sharded import is_sharded_checkpoint, load_sharded_checkpoint
from ..hooks import Hook
from ..utils import get_rng_state, set_rng_state
from .loader_position import find_resumable_sampler
from .run_identity import checkpoint_run_id, choose_resume_checkpoint, write_run_record

RESUME_STATE_VERSION = 1


@dataclass
class ResumeState:
    """The parts of a checkpoint's ``mmpar_state`` still to be applied, each handed out once.

    Attributes:
        start_batch: Batches of the resumed epoch already trained, where the first train
            iterator starts; None once it has (or when there is nothing to resume).
        sampler: The train sampler's ``state_dict`` at the saved point; goes with
            ``start_batch``.
        rng: RNG states (:func:`mmpar.runner.utils.get_rng_state`); None once restored.
        hooks: ``state_dict`` of each stateful hook by hook key (class name, ``#1``, ``#2``
            for repeats); None once the run has handed them out for good.
    """

    start_batch: int | None = None
    sampler: dict | None = None
    rng: dict | None = None
    hooks: dict[str, dict] | None = None

    @classmethod
    def from_checkpoint(cls, state: dict) -> ResumeState:
        """Read the ``mmpar_state`` dict of a checkpoint."""
        return cls(
            start_batch=int(state["inner_iter"]),
            sampler=state.get("sampler"),
            rng=state.get("rng"),
            hooks=dict(state.get("hooks") or {}),
        )

    def take_loader_position(self) -> tuple[int, dict | None] | None:
        """Return ``(start_batch, sampler)`` the first time, None afterwards."""
        if self.start_batch is None:
            return None
        position = (self.start_batch, self.sampler)
        self.start_batch = self.sampler = None
        return position

    def take_rng(self) -> dict | None:
        """Return the RNG states the first time, None afterwards."""
        rng, self.rng = self.rng, None
        return rng

    def take_hook_states(self) -> dict[str, dict] | None:
        """Return the hook states the first time, None afterwards (``hooks`` peeks)."""
        hooks, self.hooks = self.hooks, None
        return hooks


def _hook_keys(hooks: list[Hook]) -> dict[str, Hook]:
    """Hooks by checkpoint key: class name, with ``#1``, ``#2`` for repeats."""
    counts: dict[str, int] = {}
    keyed = {}
    for hook in hooks:
        name = type(hook).__name__
        n = counts.get(name, 0)
        counts[name] = n + 1
        keyed[name if n == 0 else f"{name}#{n}"] = hook
    return keyed


class ResumeMixin:
    """BaseRunner's exact resume: ``resume()``, and the state checkpoints carry for it.

    Needs from the runner: ``model``, ``optimizer``, ``meta``, ``logger``, ``work_dir``,
    ``_hooks``, the counters ``_epoch``/``_iter``/``_inner_iter``, ``_next_position`` (the
    next batch's position, kept by the loop), ``_train_loader``, ``_resume``, the run identity
    ``_run_id`` / ``_resumed_from``, ``_rank`` / ``_world_size``, and ``load_checkpoint()`` /
    ``_load_optimizer_state()`` (:mod:`mmpar.runner.checkpointing.checkpointer`).
    """

    def resume_state(self) -> dict:
        """Return the exact-resume state stored under ``mmpar_state`` in checkpoints.

        Saved after ``resume()`` but before training applied the resumed sampler and RNG
        states (e.g. a best checkpoint of an evaluation in ``before_run``), it holds those.
        """
        pending = self._resume
        sampler_state = None
        if pending.start_batch is not None:  # not applied yet: the saved state still holds
            sampler_state = pending.sampler
        elif self._train_loader is not None:
            sampler, _ = find_resumable_sampler(self._train_loader)
            if sampler is not None:
                sampler_state = sampler.state_dict()
        hooks = {}
        for key, hook in _hook_keys(self._hooks).items():
            state = hook.state_dict()
            if state:
                hooks[key] = state
        state = {
            "version": RESUME_STATE_VERSION,
            **self._next_position,
            "rng": self._own_rng_state(),
            "sampler": sampler_state,
            "hooks": hooks,
        }
        gathered = self._rank_rng_states
        if gathered is not None and gathered[0] == self._next_position:
            state["rng_per_rank"] = gathered[1]
        return state

    def _own_rng_state(self) -> dict:
        """This rank's RNG states now (the resumed ones while they are not applied yet)."""
        pending = self._resume.rng
        return pending if pending is not None else get_rng_state()

    def gather_rank_rng_states(self) -> None:
        """Collect every rank's RNG states on rank 0 for the checkpoints of this position.

        A collective: every rank calls it where a checkpoint is about to be saved, before only
        rank 0 goes on to write it (the checkpoint and preemption hooks do). Each rank's
        generators differ (``--diff-seed``; each process advances only its own GPU's), so a
        checkpoint holding the writer's states alone would give every rank the writer's
        random numbers after a resume. Nothing happens outside a distributed run.
        """
        if self._world_size <= 1 or not is_distributed():
            return
        states = gather_object(self._own_rng_state())
        self._rank_rng_states = (dict(self._next_position), states) if states else None

    def resume(
        self,
        checkpoint: str,
        resume_optimizer: bool = True,
        map_location: Any = "cpu",
        weights_only: bool = True,
    ) -> dict | None:
        """Restore model, optimizer, counters, RNG, sampler and hook states from a checkpoint.

        Args:
            checkpoint: Path, or ``'auto'``: the newest loadable checkpoint of the run that last
                started in ``work_dir`` (see
                :func:`mmpar.runner.resume.run_identity.choose_resume_checkpoint`); training starts
                from scratch when there is none.
            resume_optimizer: Also restore the optimizer state(s).
            map_location: Passed to ``torch.load``.
            weights_only: See :func:`mmpar.runner.load_checkpoint`.

        Returns:
            The checkpoint dict, or None when ``'auto'`` found nothing.

        The weights must fit the model exactly (``strict``): resuming continues the same run,
        and the runner takes the checkpoint's ``run_id`` (a checkpoint without one keeps the
        runner's new id). Hook states are handed to the registered hooks now and again when
        ``run()`` starts, so hooks registered after ``resume()`` get theirs too. Sampler and
        RNG states are applied when the first training epoch creates its iterator.

        Raises:
            MixedRunsError: ``'auto'`` found checkpoints of several runs and no record of
                which one to continue.
        """
        if checkpoint == "auto":
            found = choose_resume_checkpoint(self.work_dir, self.logger) if self.work_dir else None
            if found is None:
                return None
            checkpoint = found
        if is_sharded_checkpoint(checkpoint):  # weights and optimizer state in one read
            self.logger.info("load checkpoint from %s", checkpoint)
            optimizer = self.optimizer if resume_optimizer else None
            ckpt = load_sharded_checkpoint(self.model, checkpoint, optimizer, True, self.logger)
        else:
            ckpt = self.load_checkpoint(
                checkpoint, map_location=map_location, strict=True, weights_only=weights_only
            )
        meta = ckpt.get("meta") or {}
        self._adopt_run_id(ckpt, checkpoint)
        state = ckpt.get("mmpar_state")
        if state:
            position = {k: int(state[k]) for k in ("epoch", "iter", "inner_iter")}
            self._resume = ResumeState.from_checkpoint(state)
            self._resume.rng = self._rank_rng_of(state, checkpoint)
        else:
            position = {"epoch": int(meta.get("epoch", 0)), "iter": int(meta.get("iter", 0))}
            position["inner_iter"] = 0
            self._resume = ResumeState()
            self.logger.warning(
                "%s has no mmpar_state (an mmcv 1.x checkpoint?): resuming at the start of epoch "
                "%d / iter %d without RNG, sampler or hook state",
                checkpoint,
                position["epoch"],
                position["iter"],
            )
        self._epoch, self._iter = position["epoch"], position["iter"]
        self._inner_iter = position["inner_iter"]
        self._next_position = dict(position)
        if self.meta is None:
            self.meta = {}
        self.meta.setdefault("hook_msgs", {})
        self.meta["hook_msgs"].update(meta.get("hook_msgs", {}))
        if resume_optimizer and "optimizer" in ckpt and self.optimizer is not None:
            self._load_optimizer_state(ckpt["optimizer"], checkpoint)
        self._restore_hook_states(final=False)
        self.logger.info(
            "resumed from %s at epoch %d, iter %d", checkpoint, self._epoch, self._iter
        )
        return ckpt

    def _rank_rng_of(self, state: dict, checkpoint: str) -> dict | None:
        """This rank's RNG states in a checkpoint's ``mmpar_state``.

        Its own entry of ``rng_per_rank`` when the checkpoint was written by a run of this
        world size; otherwise the writer's ``rng`` for every rank, as checkpoints without
        per-rank states always were (with a warning when the world size changed).
        """
        per_rank = state.get("rng_per_rank")
        if per_rank is None:
            return state.get("rng")
        if len(per_rank) == self._world_size:
            return per_rank[self._rank]
        if self._rank == 0:
            self.logger.warning(
                "%s holds the RNG states of %d processes, this run has %d: every process "
                "continues from the writing process's states, so random draws (dropout, "
                "augmentation) do not repeat the interrupted run's exactly",
                checkpoint,
                len(per_rank),
                self._world_size,
            )
        return state.get("rng")

    def _adopt_run_id(self, ckpt: dict, checkpoint: str) -> None:
        """Continue the run of the resumed checkpoint: take its ``run_id`` if it has one."""
        self._resumed_from = checkpoint
        run_id = checkpoint_run_id(ckpt)
        if run_id is None:
            self.logger.info(
                "%s records no run id (saved by mmcv 1.x or an older mmpar): continuing it as "
                "run %s",
                checkpoint,
                self._run_id,
            )
        else:
            self._run_id = run_id

    def _record_run_start(self) -> None:
        """Write ``work_dir/last_run.json`` on rank 0: this run is the one to auto-resume.

        All ranks take rank 0's run id first. That collective also keeps rank 0 from writing
        the record before every rank chose its checkpoint from the previous one.
        """
        self._run_id = broadcast_object(self._run_id)
        if self.work_dir is None or self._rank != 0:
            return
        write_run_record(self.work_dir, self._run_id, self._world_size, self._resumed_from)
        self.logger.info(
            "run %s (%s)",
            self._run_id,
            f"resumed from {self._resumed_from}" if self._resumed_from else "fresh start",
        )

    def _restore_hook_states(self, final: bool) -> None:
        """Load the resumed hook states into the hooks; ``final``: hand them out for good.

        Called by ``resume()`` and again when ``run()`` starts, so hooks registered after
        ``resume()`` get theirs too; the final call warns about states no hook took.
        """
        states = self._resume.take_hook_states() if final else self._resume.hooks
        if states is None:
            return
        keyed = _hook_keys(self._hooks)
        for key, state in states.items():
            if key in keyed:
                keyed[key].load_state_dict(state)
        if final:
            unused = sorted(set(states) - set(keyed))
            if unused:
                self.logger.warning(
                    "checkpoint has state for hooks that are not registered: %s", unused
                )

    def _restore_rng(self) -> None:
        """Restore the resumed RNG states, once the train iterators exist.

        Creating an iterator draws from torch's RNG (worker base seed), which the
        checkpointed run had done before the saved point, too.
        """
        rng = self._resume.take_rng()
        if rng is not None:
            set_rng_state(rng)
