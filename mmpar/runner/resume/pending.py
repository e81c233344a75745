"""ResumeState: the parts of a resumed checkpoint's runner state the run has yet to apply."""

from __future__ import annotations

import logging
from dataclasses import dataclass


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
    def from_checkpoint(
        cls,
        state: dict,
        rank: int = 0,
        world_size: int = 1,
        logger: logging.Logger | None = None,
        source: str = "checkpoint",
    ) -> ResumeState:
        """Read the ``mmpar_state`` dict of a checkpoint, taking rank ``rank``'s RNG states.

        Its own entry of ``rng_per_rank`` when the checkpoint was written by a run of this
        world size; otherwise the writer's ``rng`` for every rank, as checkpoints without
        per-rank states always were (with a warning on rank 0 when the world size changed).
        """
        rng = state.get("rng")
        per_rank = state.get("rng_per_rank")
        if per_rank is not None and len(per_rank) == world_size:
            rng = per_rank[rank]
        elif per_rank is not None and rank == 0 and logger is not None:
            logger.warning(
                "%s holds the RNG states of %d processes, this run has %d: every process "
                "continues from the writing process's states, so random draws (dropout, "
                "augmentation) do not repeat the interrupted run's exactly",
                source,
                len(per_rank),
                world_size,
            )
        return cls(
            # None: nothing to apply (an mmcv 1.x checkpoint holds only the counters)
            start_batch=int(state["inner_iter"]) if "inner_iter" in state else None,
            sampler=state.get("sampler"),
            rng=rng,
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
