"""The runner's own state for exact resume: ``state_dict()`` / ``load_state_dict()``.

A checkpoint holds mmcv 1.x's ``meta``, ``state_dict`` and ``optimizer``, plus ``mmpar_state``:
the position of the next batch (``epoch``, ``iter``, ``inner_iter``), the RNG states (the
writing rank's under ``rng``; in a distributed run every rank's under ``rng_per_rank``, in rank
order), the train sampler's ``state_dict`` and every stateful hook's, by hook key.
``load_state_dict()`` reads it into a ``ResumeState`` (``pending.py``); the run applies each
part once, where the uninterrupted run had it: hook states before ``before_run``, the sampler
state and batch position when the first train iterator is made, the RNG states right after.
"""

from __future__ import annotations

import logging
from typing import Any

from mmpar.utils.dist import gather_object, is_distributed

from ..utils import get_rng_state, set_rng_state
from .hook_states import collect_hook_states, load_hook_states
from .loader_position import find_resumable_sampler
from .pending import ResumeState

RESUME_STATE_VERSION = 1


class RunnerStateMixin:
    """BaseRunner's own state: ``state_dict()`` / ``load_state_dict()`` and applying it.

    The state is the checkpoint's ``mmpar_state``; the checkpoint files themselves belong to
    the runner's :class:`~mmpar.runner.checkpointing.checkpointer.Checkpointer`.

    The runner attributes it uses are declared below (BaseRunner sets them in ``__init__``).
    """

    # Declarations only (no values): what the mixin reads of BaseRunner, for the type checker.
    logger: logging.Logger
    _hooks: list  # of Hook: resume/ is below hooks/ in the layering, so not named here
    _epoch: int
    _iter: int
    _inner_iter: int
    _next_position: dict[str, int]  # the next batch's position, kept by the loop
    _train_loader: Any
    _run_guard: Any  # work_dir_guard.RunGuard: its own hooks' states are saved with the rest
    _resume: ResumeState
    _rank_rng_states: tuple[dict, list] | None
    _rank: int
    _world_size: int

    def state_dict(self) -> dict:
        """The runner's state a checkpoint stores under ``mmpar_state`` for exact resume.

        Taken after ``resume()`` but before training applied the resumed sampler and RNG
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
        state: dict[str, Any] = {
            "version": RESUME_STATE_VERSION,
            **self._next_position,
            "rng": self._own_rng_state(),
            "sampler": sampler_state,
            "hooks": collect_hook_states([*self._hooks, *self._run_guard.hooks]),
        }
        gathered = self._rank_rng_states
        if gathered is not None and gathered[0] == self._next_position:
            state["rng_per_rank"] = gathered[1]
        return state

    def load_state_dict(self, state: dict, source: str = "checkpoint") -> None:
        """Take a checkpoint's ``mmpar_state``: counters now, the rest when the run reaches it.

        Hook states go to the registered hooks now and again when ``run()`` starts (hooks
        registered later get theirs too); sampler and RNG states are applied when the first
        training epoch creates its iterator. A state holding only the counters (an mmcv 1.x
        checkpoint) resumes at their start with nothing else to apply.
        """
        position = {k: int(state.get(k, 0)) for k in ("epoch", "iter", "inner_iter")}
        self._resume = ResumeState.from_checkpoint(
            state, self._rank, self._world_size, self.logger, source
        )
        self._epoch, self._iter = position["epoch"], position["iter"]
        self._inner_iter = position["inner_iter"]
        self._next_position = position
        self._restore_hook_states(final=False)

    def _own_rng_state(self) -> dict:
        """This rank's RNG states now (the resumed ones while they are not applied yet)."""
        pending = self._resume.rng
        return pending if pending is not None else get_rng_state()

    def gather_rank_rng_states(self) -> None:
        """Collect every rank's RNG states on rank 0 for the checkpoints of this position.

        A collective: :meth:`Checkpointer.save` calls it on every rank before only rank 0
        goes on to write. Each rank's generators differ (``--diff-seed``; each process
        advances only its own GPU's), so a checkpoint holding the writer's states alone would
        give every rank the writer's random numbers after a resume. Nothing happens outside a
        distributed run.
        """
        if self._world_size <= 1 or not is_distributed():
            return
        states = gather_object(self._own_rng_state())
        self._rank_rng_states = (dict(self._next_position), states) if states else None

    def _restore_hook_states(self, final: bool) -> None:
        """Load the resumed hook states into the hooks; ``final``: hand them out for good.

        Called by ``resume()`` and again when ``run()`` starts, so hooks registered after
        ``resume()`` get theirs too; the final call warns about states no hook took.
        """
        states = self._resume.take_hook_states() if final else self._resume.hooks
        if states is not None:
            hooks = [*self._hooks, *self._run_guard.hooks]  # the guard's exist during run()
            load_hook_states(hooks, states, self.logger if final else None)

    def _restore_rng(self) -> None:
        """Restore the resumed RNG states, once the train iterators exist.

        Creating an iterator draws from torch's RNG (worker base seed), which the
        checkpointed run had done before the saved point, too.
        """
        rng = self._resume.take_rng()
        if rng is not None:
            set_rng_state(rng)
