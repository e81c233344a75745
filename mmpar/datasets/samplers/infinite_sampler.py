"""InfiniteSampler: an endless, deterministic, resumable index stream per rank."""

from __future__ import annotations

import math
from typing import Any, Iterator

import torch
from torch.utils.data import Sampler

from ._common import ResumableSamplerMixin, check_int, resolve_replicas, resolve_seed


class InfiniteSampler(ResumableSamplerMixin, Sampler[int]):
    """Yield dataset indices forever, for iteration-based training.

    The global stream is the concatenation of "rounds": round ``k`` is a permutation of
    ``range(len(dataset))`` drawn from a ``torch.Generator`` seeded ``seed + k`` (or the
    identity when ``shuffle=False``). Rank ``r`` takes every ``num_replicas``-th element of
    the global stream starting at ``r``, so within a round the ranks see disjoint indices.

    Resume: :meth:`set_start_index` ``(i)`` makes the next iteration skip the first ``i``
    indices of this rank's stream (counted from the start of the stream, epochs play no
    role). The position is computed directly (round and offset); nothing is materialised
    for the skipped part. :meth:`set_epoch` is accepted for hook compatibility and only
    recorded. ``len()`` is this rank's share of one round, ``ceil(len(dataset) /
    num_replicas)``, which the IterBasedRunner uses for epoch bookkeeping.

    Args:
        dataset: Any non-empty sized dataset; only ``len(dataset)`` is used.
        shuffle: Shuffle each round (else every round is ``0 .. len(dataset) - 1``).
        seed: Seed of round 0, identical on all ranks; ``None`` means 0.
        num_replicas: Number of processes; default: world size of the process group, else 1.
        rank: Rank of this process; default: rank in the process group, else 0.

    Raises:
        ValueError: The dataset is empty, or ``rank`` is negative or ``>= num_replicas``.
    """

    def __init__(
        self,
        dataset: Any,
        shuffle: bool = True,
        seed: int | None = 0,
        num_replicas: int | None = None,
        rank: int | None = None,
    ) -> None:
        owner = type(self).__name__
        self.num_replicas, self.rank = resolve_replicas(num_replicas, rank, owner)
        self.seed = resolve_seed(seed, owner)
        self.dataset = dataset
        self.size = len(dataset)
        if self.size == 0:
            raise ValueError(f"{owner}: the dataset is empty; an infinite stream needs samples.")
        self.shuffle = bool(shuffle)
        self.epoch = 0
        self.start_index = 0

    def _round(self, k: int) -> list[int]:
        """The global order of round ``k``."""
        if not self.shuffle:
            return list(range(self.size))
        generator = torch.Generator()
        generator.manual_seed(self.seed + k)
        return torch.randperm(self.size, generator=generator).tolist()

    def _stream(self, start: int) -> Iterator[int]:
        """This rank's stream from its ``start``-th element on."""
        position = self.rank + start * self.num_replicas  # position in the global stream
        while True:
            k, offset = divmod(position, self.size)
            taken = self._round(k)[offset :: self.num_replicas]
            yield from taken
            position += len(taken) * self.num_replicas

    def __iter__(self) -> Iterator[int]:
        """Yield indices forever, from the pending start index (which is then reset)."""
        start, self.start_index = self.start_index, 0
        return self._stream(start)

    def __len__(self) -> int:
        """This rank's share of one round: ``ceil(len(dataset) / num_replicas)``."""
        return math.ceil(self.size / self.num_replicas)

    def set_epoch(self, epoch: int) -> None:
        """Record the epoch (the stream does not depend on it)."""
        self.epoch = check_int(epoch, "epoch", f"{type(self).__name__}.set_epoch", 0)

    def set_start_index(self, start_index: int) -> None:
        """Make the next iteration skip the first ``start_index`` indices of this rank's stream.

        Args:
            start_index: Indices this rank already consumed (``iter * batch_size``), >= 0.

        Raises:
            ValueError: ``start_index`` is negative.
        """
        owner = f"{type(self).__name__}.set_start_index"
        self.start_index = check_int(start_index, "start_index", owner, 0)
