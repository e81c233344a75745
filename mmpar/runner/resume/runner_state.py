"""The runner's own state for exact resume: ``state_dict()`` / ``load_state_dict()``.

A checkpoint holds mmcv 1.x's ``meta``, ``state_dict`` and ``optimizer``, plus ``mmpar_state``:
the position of the next batch (``epoch``, ``iter``, ``inner_iter``), the RNG states (the
writing rank's under ``rng``; in a distributed run every rank's under ``rng_per_rank``, in rank
order), the train sampler's ``state_dict`` and every stateful hook's, by hook key.
``load_state_dict()`` reads it into a :class:`ResumeState`; the run applies each part once, at
the point where the uninterrupted run had it: hook states before ``before_run``, the sampler
state and batch position when the first train iterator is made, the RNG states right after.
"""

from __future__ import annotations

from dataclasses import dataclass

from mmpar.utils.dist import gather_object, is_distributed

from ..hooks import Hook
from ..utils import get_rng_state, set_rng_state
from .loader_position import find_resumable_sampler

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
            # None: nothing to apply (an mmcv 1.x checkpoint holds only the counters)
            start_batch=int(state["inner_iter"]) if "inner_iter" in state else None,
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


class RunnerStateMixin:
    """BaseRunner's own state: ``state_dict()`` / ``load_state_dict()`` and applying it.

    The state is the checkpoint's ``mmpar_state``; the checkpoint files themselves belong to
    the runner's :class:`~mmpar.runner.checkpointing.checkpointer.Checkpointer`.

    Needs from the runner: ``logger``, ``_hooks``, the counters ``_epoch``/``_iter``/
    ``_inner_iter``, ``_next_position`` (the next batch's position, kept by the loop),
    ``_train_loader``, ``_resume``, ``_rank_rng_states`` and ``_rank`` / ``_world_size``.
    """

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

    def load_state_dict(self, state: dict, source: str = "checkpoint") -> None:
        """Take a checkpoint's ``mmpar_state``: counters now, the rest when the run reaches it.

        Hook states go to the registered hooks now and again when ``run()`` starts (hooks
        registered later get theirs too); sampler and RNG states are applied when the first
        training epoch creates its iterator. A state holding only the counters (an mmcv 1.x
        checkpoint) resumes at their start with nothing else to apply.
        """
        position = {k: int(state.get(k, 0)) for k in ("epoch", "iter", "inner_iter")}
        self._resume = ResumeState.from_checkpoint(state)
        self._resume.rng = self._rank_rng_of(state, source)
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
