"""DistributedSampler: a resumable per-rank shard of a shuffled epoch order."""

from __future__ import annotations

import math
from typing import Any, Iterator

import torch
from torch.utils.data import DistributedSampler as _TorchDistributedSampler

from ._common import ResumableSamplerMixin, resolve_replicas, resolve_seed


class DistributedSampler(ResumableSamplerMixin, _TorchDistributedSampler):
    """Shard a (shuffled) dataset order across ranks, resumable mid-epoch.

    mmcv 1.x semantics: epoch ``e`` shuffles with a ``torch.Generator`` seeded ``seed + e``;
    with ``round_up`` the order is padded to a multiple of ``num_replicas`` by repeating it
    from the start; rank ``r`` then takes ``order[r::num_replicas]``. With ``num_replicas=1``
    it is a plain (shuffled) sampler, used for non-distributed training too.

    It implements the sampler resume protocol (``docs/internals.md``): :meth:`set_start_index`
    makes the next iteration start at a position of this rank's list without touching the
    dataset. ``len()`` is always the full per-rank epoch length, also while a start index is
    pending, because the runner and the DataLoader derive the epoch length from it.

    Args:
        dataset: Any sized dataset; only ``len(dataset)`` is used (and ``set_epoch``, if any).
        num_replicas: Number of processes; default: world size of the process group, else 1.
        rank: Rank of this process; default: rank in the process group, else 0.
        shuffle: Shuffle every epoch (else the order is ``0 .. len(dataset) - 1``).
        seed: Shuffle seed, identical on all ranks. ``None`` means 0 (mmcv's
            ``sync_random_seed`` is not used: pass the same int on every rank).
        round_up: Pad so every rank yields ``ceil(len(dataset) / num_replicas)`` samples. If
            False, samples are not repeated and ranks may yield one sample fewer.

    Raises:
        ValueError: ``rank`` is negative or ``>= num_replicas``.
    """

    def __init__(
        self,
        dataset: Any,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int | None = 0,
        round_up: bool = True,
    ) -> None:
        owner = type(self).__name__
        num_replicas, rank = resolve_replicas(num_replicas, rank, owner)
        seed = resolve_seed(seed, owner)
        super().__init__(dataset, num_replicas=num_replicas, rank=rank, shuffle=shuffle, seed=seed)
        self.round_up = bool(round_up)
        size = len(dataset)
        if self.round_up:
            self.num_samples = math.ceil(size / num_replicas)
            self.total_size = self.num_samples * num_replicas
        else:
            self.num_samples = len(range(rank, size, num_replicas))
            self.total_size = size
        self.start_index = 0

    def _rank_indices(self) -> list[int]:
        """This rank's full index list for the current epoch."""
        size = len(self.dataset)
        if self.shuffle:
            generator = torch.Generator()
            generator.manual_seed(self.seed + self.epoch)
            indices = torch.randperm(size, generator=generator).tolist()
        else:
            indices = list(range(size))
        if self.round_up and size:
            # Repeat from the start so the list divides evenly across ranks.
            indices = (indices * math.ceil(self.total_size / size))[: self.total_size]
        return indices[self.rank : self.total_size : self.num_replicas]

    def __iter__(self) -> Iterator[int]:
        """Yield this rank's indices, from the pending start index (which is then reset)."""
        start, self.start_index = self.start_index, 0
        return iter(self._rank_indices()[start:])

    def __len__(self) -> int:
        """Samples this rank yields in a full epoch (a pending start index does not count)."""
        return self.num_samples
