"""SizeBucketBatchSampler: batches of similar-size samples, so collate pads less."""

from __future__ import annotations

import math
from typing import Any, Iterator, Sequence

import numpy as np
import torch
from torch.utils.data import Sampler

from ._common import ResumableSamplerMixin, check_int, resolve_replicas, resolve_seed


def _read_sizes(dataset: Any, sizes: Sequence | None, owner: str) -> torch.Tensor:
    """Return the sizes as a float64 tensor of shape ``(N,)`` (scalars) or ``(N, 2)`` (h, w).

    Raises:
        ValueError: No sizes are available, their count differs from ``len(dataset)``, or
            an entry is neither a number nor an ``(h, w)`` pair.
    """
    source = "sizes="
    if sizes is None:
        if callable(getattr(dataset, "get_sizes", None)):
            sizes, source = dataset.get_sizes(), f"{type(dataset).__name__}.get_sizes()"
        elif getattr(dataset, "sizes", None) is not None:
            sizes, source = dataset.sizes, f"{type(dataset).__name__}.sizes"
        else:
            raise ValueError(
                f"{owner}: no sample sizes. The dataset ({type(dataset).__name__}) must provide "
                f"get_sizes() (or a `sizes` attribute) returning one (h, w) pair or number per "
                f"sample, or pass sizes=[...] to {owner}."
            )
    sizes = list(sizes)
    if len(sizes) != len(dataset):
        raise ValueError(
            f"{owner}: {source} gave {len(sizes)} sizes for a dataset of {len(dataset)} "
            f"samples; give exactly one size per sample."
        )
    if not sizes:
        return torch.zeros(0, dtype=torch.float64)
    try:  # fast path: a well-formed list of numbers or of (h, w) pairs
        table = torch.as_tensor(np.asarray(sizes, dtype=np.float64))
        if table.dim() == 1 or (table.dim() == 2 and table.shape[1] == 2):
            return table
    except (TypeError, ValueError):
        pass
    # Slow path: name the first entry that is malformed.
    shapes = []
    for size in sizes:
        try:
            shapes.append(np.asarray(size, dtype=np.float64).shape)
        except (TypeError, ValueError):
            shapes.append(None)
    expected = shapes[0] if shapes[0] in ((), (2,)) else (2,)
    want = "a number like sample 0" if expected == () else "an (h, w) pair"
    for index, (size, shape) in enumerate(zip(sizes, shapes)):
        if shape != expected:
            raise ValueError(
                f"{owner}: size {size!r} of sample {index} (from {source}) should be {want}."
            )
    raise AssertionError("unreachable: sizes are well formed")  # pragma: no cover


class SizeBucketBatchSampler(ResumableSamplerMixin, Sampler[list[int]]):
    """Yield batches of indices whose samples have similar sizes, to cut collate padding.

    Per epoch, with one ``torch.Generator`` seeded ``seed + epoch`` (the same on all ranks):

    1. shuffle all indices;
    2. cut them into mega-chunks of ``batch_size * bucket_size_multiplier * num_replicas``;
    3. sort each mega-chunk by size and cut it into batches of ``batch_size``. Scalar sizes
       are sorted directly. ``(h, w)`` pairs are sorted in two passes: by height into
       ``~sqrt(batches)`` strips, then each strip by width, so a batch is close in *both*
       sides (sorting by area alone keeps mixed aspect ratios together, which still pads
       nearly as much as random batching);
    4. shuffle the order of all batches;
    5. deal the batches round-robin to ranks, rank ``r`` taking ``batches[r::num_replicas]``,
       after padding the list by repeating batches from its start so every rank gets the same
       count (``drop_last=True`` instead drops the incomplete batch and the remainder).

    The order depends only on ``seed + epoch``. Larger ``bucket_size_multiplier`` means less
    padding and less randomness in which samples share a batch. Implements the sampler resume
    protocol (``docs/internals.md``) with the start index counting *batches*. ``len()`` is the
    number of batches per rank per epoch. Use it as ``DataLoader(dataset, batch_sampler=...)``.

    Args:
        dataset: Sized dataset; sizes come from ``sizes``, ``dataset.get_sizes()`` or
            ``dataset.sizes`` (one number or ``(h, w)`` per sample). Never indexed.
        batch_size: Samples per batch (per rank, i.e. ``samples_per_gpu``).
        sizes: Explicit sizes, overriding the dataset's.
        bucket_size_multiplier: Batches per rank in one sorted mega-chunk.
        shuffle: Shuffle indices and batch order (if False, only the sort is applied).
        seed: Seed identical on all ranks; ``None`` means 0.
        drop_last: Drop the incomplete batch and the batches that do not divide evenly across
            ranks, instead of padding.
        num_replicas: Number of processes; default: world size of the process group, else 1.
        rank: Rank of this process; default: rank in the process group, else 0.

    Raises:
        ValueError: Sizes are missing or malformed, or an argument is out of range.
    """

    _items = "batches"
    _consumed = "inner_iter"

    def __init__(
        self,
        dataset: Any,
        batch_size: int,
        sizes: Sequence | None = None,
        bucket_size_multiplier: int = 100,
        shuffle: bool = True,
        seed: int | None = 0,
        drop_last: bool = False,
        num_replicas: int | None = None,
        rank: int | None = None,
    ) -> None:
        owner = type(self).__name__
        self.num_replicas, self.rank = resolve_replicas(num_replicas, rank, owner)
        self.batch_size = check_int(batch_size, "batch_size", owner, 1)
        self.bucket_size_multiplier = check_int(
            bucket_size_multiplier, "bucket_size_multiplier", owner, 1
        )
        self.seed = resolve_seed(seed, owner)
        self.dataset = dataset
        self.sizes = _read_sizes(dataset, sizes, owner)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.epoch = 0
        self.start_index = 0

    @property
    def num_batches(self) -> int:
        """Batches in the whole epoch across all ranks, after padding or dropping."""
        size = len(self.sizes)
        if self.drop_last:
            full = size // self.batch_size
            return full - full % self.num_replicas
        made = math.ceil(size / self.batch_size)
        return math.ceil(made / self.num_replicas) * self.num_replicas

    def __len__(self) -> int:
        """Batches this rank yields per epoch (a pending start index does not count)."""
        return self.num_batches // self.num_replicas

    def _sorted_batches(self, chunk: torch.Tensor) -> list[list[int]]:
        """Sort one mega-chunk of indices by size and cut it into batches."""
        sizes = self.sizes[chunk]
        if sizes.dim() == 1:
            ordered = [chunk[torch.sort(sizes, stable=True).indices]]
        else:
            # Strips by height, each sorted by width: batches close in both sides.
            by_height = chunk[torch.sort(sizes[:, 0], stable=True).indices]
            batches_in_chunk = math.ceil(len(chunk) / self.batch_size)
            strips = max(1, round(math.sqrt(batches_in_chunk)))
            strip_len = math.ceil(batches_in_chunk / strips) * self.batch_size
            ordered = []
            for strip in torch.split(by_height, strip_len):
                widths = self.sizes[strip, 1]
                ordered.append(strip[torch.sort(widths, stable=True).indices])
        return [batch.tolist() for part in ordered for batch in torch.split(part, self.batch_size)]

    def _all_batches(self) -> list[list[int]]:
        """The epoch's batches for all ranks, before dealing them out."""
        size = len(self.sizes)
        generator = torch.Generator()
        generator.manual_seed(self.seed + self.epoch)
        order = torch.randperm(size, generator=generator) if self.shuffle else torch.arange(size)
        chunk_len = self.batch_size * self.bucket_size_multiplier * self.num_replicas
        batches = []
        for chunk in torch.split(order, chunk_len):
            batches.extend(self._sorted_batches(chunk))
        if self.drop_last:
            batches = [batch for batch in batches if len(batch) == self.batch_size]
        if self.shuffle:
            batches = [batches[i] for i in torch.randperm(len(batches), generator=generator)]
        total = self.num_batches
        if len(batches) < total:  # pad by repeating from the start (cyclically if needed)
            batches = [batches[i % len(batches)] for i in range(total)]
        return batches[:total]

    def __iter__(self) -> Iterator[list[int]]:
        """Yield this rank's batches, from the pending start index (which is then reset)."""
        start, self.start_index = self.start_index, 0
        mine = self._all_batches()[self.rank :: self.num_replicas]
        return iter(mine[start:])
