"""Argument checks, helpers and the resume protocol shared by the samplers (private)."""

from __future__ import annotations

import numbers
from typing import Any

from mmpar.utils.dist import get_dist_info


def check_int(value: Any, name: str, owner: str, minimum: int) -> int:
    """Return ``value`` as an ``int`` after checking it is an integer ``>= minimum``.

    Raises:
        TypeError: ``value`` is not an integer (bools are rejected too).
        ValueError: ``value`` is smaller than ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{owner}: {name} must be an int, got {type(value).__name__} {value!r}.")
    if value < minimum:
        raise ValueError(f"{owner}: {name} must be >= {minimum}, got {value}.")
    return int(value)


def resolve_replicas(num_replicas: int | None, rank: int | None, owner: str) -> tuple[int, int]:
    """Fill missing ``num_replicas``/``rank`` from the process group and validate both.

    Raises:
        ValueError: ``rank`` is negative or not smaller than ``num_replicas``, or
            ``num_replicas`` is smaller than 1.
    """
    default_rank, default_world = get_dist_info()
    num_replicas = default_world if num_replicas is None else num_replicas
    rank = default_rank if rank is None else rank
    num_replicas = check_int(num_replicas, "num_replicas", owner, 1)
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral):
        raise TypeError(f"{owner}: rank must be an int, got {type(rank).__name__} {rank!r}.")
    if not 0 <= rank < num_replicas:
        raise ValueError(
            f"{owner}: rank must be in [0, num_replicas - 1] = [0, {num_replicas - 1}], "
            f"got rank={rank}. Pass the rank of this process and the total number of processes."
        )
    return num_replicas, int(rank)


def resolve_seed(seed: int | None, owner: str) -> int:
    """Return ``seed`` as an ``int``; ``None`` means 0 (all ranks must agree on the seed)."""
    return 0 if seed is None else check_int(seed, "seed", owner, 0)


def forward_epoch(dataset: Any, epoch: int) -> None:
    """Tell the dataset the epoch if it wants to know (per-sample augmentation seeds)."""
    set_epoch = getattr(dataset, "set_epoch", None)
    if callable(set_epoch):
        set_epoch(epoch)


def check_state(state: Any, owner: str) -> dict:
    """Validate a sampler ``state_dict`` and return it.

    Raises:
        TypeError: ``state`` is not a dict.
        KeyError: one of ``epoch``, ``seed``, ``start_index`` is missing.
    """
    if not isinstance(state, dict):
        raise TypeError(f"{owner}.load_state_dict: expected a dict, got {type(state).__name__}.")
    missing = [key for key in ("epoch", "seed", "start_index") if key not in state]
    if missing:
        raise KeyError(
            f"{owner}.load_state_dict: state is missing {missing}; expected the dict returned "
            f"by {owner}.state_dict(), got keys {sorted(state)}."
        )
    return state


class ResumableSamplerMixin:
    """The sampler resume protocol (``docs/internals.md``), one state-dict layout for all samplers.

    A subclass sets ``dataset``, ``epoch``, ``seed`` and ``start_index``, defines ``__len__``
    (the items this rank yields per epoch) and names those items for error messages:
    ``_items`` ("samples" or "batches") and ``_consumed`` (how a runner counts them). A sampler
    without epochs (``InfiniteSampler``) overrides ``set_epoch`` and ``set_start_index``.
    """

    _items = "samples"
    _consumed = "inner_iter * batch_size"

    def set_epoch(self, epoch: int) -> None:
        """Select the epoch's order and forward it to ``dataset.set_epoch`` if defined.

        Args:
            epoch: Epoch number (>= 0); the order's generator is seeded ``seed + epoch``.
        """
        self.epoch = check_int(epoch, "epoch", f"{type(self).__name__}.set_epoch", 0)
        forward_epoch(self.dataset, self.epoch)

    def set_start_index(self, start_index: int) -> None:
        """Make the next iteration skip the first ``start_index`` items of this rank's epoch.

        Args:
            start_index: Items (samples, or batches for a batch sampler) already consumed
                this epoch, in ``[0, len(self)]``.

        Raises:
            ValueError: ``start_index`` is negative or larger than ``len(self)``.
        """
        owner = f"{type(self).__name__}.set_start_index"
        start_index = check_int(start_index, "start_index", owner, 0)
        if start_index > len(self):
            raise ValueError(
                f"{owner}: start_index={start_index} is beyond the {len(self)} {self._items} "
                f"this rank yields per epoch; pass the number of {self._items} already consumed "
                f"in the current epoch ({self._consumed})."
            )
        self.start_index = start_index

    def state_dict(self) -> dict[str, int]:
        """Return ``{'epoch', 'seed', 'start_index'}`` as plain ints."""
        return {"epoch": int(self.epoch), "seed": int(self.seed), "start_index": self.start_index}

    def load_state_dict(self, state: dict[str, int]) -> None:
        """Restore a :meth:`state_dict` (``set_epoch`` then ``set_start_index``)."""
        owner = type(self).__name__
        state = check_state(state, owner)
        self.seed = resolve_seed(state["seed"], owner)
        self.set_epoch(state["epoch"])
        self.set_start_index(state["start_index"])
