"""Data loaders as the runners iterate them: at a resumed batch, per epoch, or endlessly.

A sampler that implements the resume protocol (``state_dict``/``load_state_dict`` and
``set_start_index``, see ``docs/internals.md``) is positioned before its iterator exists, so
skipped samples are never loaded; other samplers are fast-forwarded by reading batches.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from operator import attrgetter
from typing import Any


def find_resumable_sampler(data_loader: Any) -> tuple[Any, bool]:
    """Return ``(sampler, counts_batches)`` for the loader's sampler that has ``state_dict``.

    A batch sampler implementing the resume protocol wins over the index sampler; torch's
    default ``BatchSampler`` has no ``state_dict`` and is passed over. ``(None, False)`` when
    neither implements it.
    """
    batch_sampler = getattr(data_loader, "batch_sampler", None)
    if batch_sampler is not None and hasattr(batch_sampler, "state_dict"):
        return batch_sampler, True
    sampler = getattr(data_loader, "sampler", None)
    if sampler is not None and hasattr(sampler, "state_dict"):
        return sampler, False
    return None, False


def set_loader_epoch(data_loader: Any, epoch: int) -> None:
    """Call ``set_epoch(epoch)`` on the loader's sampler, batch sampler or its inner sampler."""
    for obj in (
        getattr(data_loader, "sampler", None),
        getattr(data_loader, "batch_sampler", None),
        getattr(getattr(data_loader, "batch_sampler", None), "sampler", None),
    ):
        if obj is not None and hasattr(obj, "set_epoch"):
            obj.set_epoch(epoch)
            return


def start_loader_iter(
    data_loader: Any,
    start_batch: int = 0,
    sampler_state: dict | None = None,
    logger: logging.Logger | None = None,
) -> Iterator:
    """Create the loader's iterator positioned at batch ``start_batch`` of the current epoch.

    With a sampler that implements the resume protocol, its state is restored and
    ``set_start_index`` is called *before* the iterator exists. Other samplers get a warning
    and the batches are skipped by reading them.
    """
    sampler, counts_batches = find_resumable_sampler(data_loader)
    if start_batch <= 0:
        # At an epoch boundary the saved state is the finished epoch's; the sampler already
        # got the new epoch from set_epoch (DistSamplerSeedHook), which must not be undone.
        return iter(data_loader)
    if sampler is not None and sampler_state and hasattr(sampler, "load_state_dict"):
        sampler.load_state_dict(sampler_state)
    if sampler is not None and hasattr(sampler, "set_start_index"):
        if counts_batches:
            sampler.set_start_index(start_batch)
        else:
            batch_size = getattr(data_loader, "batch_size", None)
            if batch_size is None:
                batch_size = data_loader.batch_sampler.batch_size
            start = start_batch * batch_size
            try:
                sampler.set_start_index(start)
            except ValueError:
                # Saved after the epoch's last (partial) batch of a finite sampler: the whole
                # epoch is consumed, which is fewer samples than batches * batch_size.
                if start_batch < len(data_loader):
                    raise
                sampler.set_start_index(len(sampler))
        return iter(data_loader)
    (logger or logging.getLogger("mmpar")).warning(
        f"The train sampler ({type(getattr(data_loader, 'sampler', None)).__name__}) does not "
        "implement set_start_index/state_dict; skipping %d batches by loading them. Resume is "
        "exact only if its order is deterministic. Use mmpar.datasets.samplers for exact resume.",
        start_batch,
    )
    data_iter = iter(data_loader)
    for _ in range(start_batch):
        next(data_iter, None)
    return data_iter


class IterLoader:
    """Iterate a data loader forever; each restart begins a new epoch and calls ``set_epoch``.

    Args:
        dataloader: A torch DataLoader (or any re-iterable with a length).
        epoch: Epoch to start in.
        start: Batches of ``epoch`` already consumed (resume position).
        sampler_state: Sampler ``state_dict`` to restore before the first iterator is made.
        logger: Where resume warnings go.

    Raises:
        RuntimeError: The loader yields no batch at all.
    """

    def __init__(
        self,
        dataloader: Any,
        epoch: int = 0,
        start: int = 0,
        sampler_state: dict | None = None,
        logger: Any = None,
    ) -> None:
        self._dataloader = dataloader
        self._epoch = epoch
        self._consumed = start
        self._iter = start_loader_iter(dataloader, start, sampler_state, logger)

    epoch = property(attrgetter("_epoch"), doc="Epoch of the batches currently served.")
    consumed = property(
        attrgetter("_consumed"), doc="Batches of the current epoch served so far (next index)."
    )
    dataloader = property(attrgetter("_dataloader"), doc="The wrapped data loader.")

    @property
    def sampler(self) -> Any:
        """The wrapped loader's sampler (None if it has none)."""
        return getattr(self._dataloader, "sampler", None)

    @property
    def batch_sampler(self) -> Any:
        """The wrapped loader's batch sampler (None if it has none)."""
        return getattr(self._dataloader, "batch_sampler", None)

    def __next__(self) -> Any:
        try:
            data = next(self._iter)
        except StopIteration:
            self._epoch += 1
            self._consumed = 0
            set_loader_epoch(self._dataloader, self._epoch)
            self._iter = iter(self._dataloader)
            try:
                data = next(self._iter)
            except StopIteration:
                raise RuntimeError(
                    f"data loader over {type(getattr(self._dataloader, 'dataset', None)).__name__} "
                    "yields no batch; check the dataset length, batch size and drop_last"
                ) from None
        self._consumed += 1
        return data

    def __iter__(self) -> IterLoader:
        return self

    def __len__(self) -> int:
        return len(self._dataloader)


__all__ = ["IterLoader", "find_resumable_sampler", "set_loader_epoch", "start_loader_iter"]
