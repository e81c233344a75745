"""Dataset wrappers: concatenate datasets or repeat one (epoch and size aware)."""

from __future__ import annotations

import bisect
from typing import Any, Sequence

from torch.utils.data import ConcatDataset as _TorchConcatDataset
from torch.utils.data import Dataset

from mmpar.utils.misc import check_int_arg

from .registry import DATASETS


def _split(idx: Any) -> tuple[int, Any]:
    """``idx`` or ``(idx, epoch)`` → ``(idx, epoch or None)``."""
    if isinstance(idx, tuple):
        return int(idx[0]), int(idx[1])
    return idx, None


def _get_item(dataset: Dataset, idx: int, key: int, epoch: Any) -> Any:
    # BaseDataset accepts an RNG key so that each wrapped position gets its own augmentation.
    prepare = getattr(dataset, "prepare_data", None)
    if callable(prepare):
        return prepare(idx, rng_key=(key,), epoch=epoch)
    return dataset[idx if epoch is None else (idx, epoch)]


def _set_epoch(dataset: Dataset, epoch: int) -> None:
    set_epoch = getattr(dataset, "set_epoch", None)
    if callable(set_epoch):
        set_epoch(epoch)


def _sizes(dataset: Dataset) -> list:
    get_sizes = getattr(dataset, "get_sizes", None)
    if not callable(get_sizes):
        raise AttributeError(f"{type(dataset).__name__} has no get_sizes()")
    return list(get_sizes())


@DATASETS.register_module()
class ConcatDataset(_TorchConcatDataset):
    """Concatenate datasets; ``CLASSES`` come from the first one.

    Args:
        datasets: The datasets.
    """

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        super().__init__(datasets)
        self.CLASSES = getattr(datasets[0], "CLASSES", None)

    def __getitem__(self, idx: int | tuple[int, int]) -> Any:
        idx, epoch = _split(idx)
        if idx < 0:
            idx += len(self)
        if not 0 <= idx < len(self):
            raise IndexError(f"index {idx} out of range for ConcatDataset of length {len(self)}")
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        local = idx - (self.cumulative_sizes[which - 1] if which else 0)
        return _get_item(self.datasets[which], local, idx, epoch)

    def set_epoch(self, epoch: int) -> None:
        """Forward the epoch to every dataset."""
        for dataset in self.datasets:
            _set_epoch(dataset, epoch)

    def get_sizes(self) -> list:
        """Sizes of all samples, in order."""
        return [s for d in self.datasets for s in _sizes(d)]


@DATASETS.register_module()
class RepeatDataset:
    """Repeat a dataset ``times`` times (cheap long epochs for small datasets).

    Repeated copies of a sample get different augmentations (their RNG key is the wrapper index).

    Args:
        dataset: The dataset.
        times: Repeat count (≥ 1).
    """

    def __init__(self, dataset: Dataset, times: int) -> None:
        check_int_arg(times, "times", "RepeatDataset")
        self.dataset = dataset
        self.times = times
        self.CLASSES = getattr(dataset, "CLASSES", None)
        self._ori_len = len(dataset)

    def __getitem__(self, idx: int | tuple[int, int]) -> Any:
        idx, epoch = _split(idx)
        if not 0 <= idx < len(self):
            raise IndexError(f"index {idx} out of range for RepeatDataset of length {len(self)}")
        return _get_item(self.dataset, idx % self._ori_len, idx, epoch)

    def __len__(self) -> int:
        return self.times * self._ori_len

    def set_epoch(self, epoch: int) -> None:
        """Forward the epoch to the wrapped dataset."""
        _set_epoch(self.dataset, epoch)

    def get_sizes(self) -> list:
        """Sizes of all samples, in order."""
        return _sizes(self.dataset) * self.times

    def get_cat_ids(self, idx: int) -> list[int]:
        """Category ids of sample ``idx``."""
        return self.dataset.get_cat_ids(idx % self._ori_len)
