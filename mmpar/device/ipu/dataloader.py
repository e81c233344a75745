"""mmcv 1.x's IPUDataLoader: importable; mmpar does not ship Graphcore IPU support."""

from __future__ import annotations

from typing import Any

from .._unsupported import backend_error

__all__ = ["IPUDataLoader"]


class IPUDataLoader:
    """mmcv's poptorch data loader; constructing it raises ``BackendNotSupportedError``.

    Args:
        dataset: As mmcv's.
        options: As mmcv's.
        batch_size: As mmcv's.
        shuffle: As mmcv's.
        num_workers: As mmcv's.
        drop_last: As mmcv's.
        persistent_workers: As mmcv's.
        auto_distributed_partitioning: As mmcv's.
        mode: As mmcv's.
        async_options: As mmcv's.
        rebatched_worker_size: As mmcv's.
        **kwargs: As mmcv's.
    """

    def __init__(
        self,
        dataset: Any,
        options: Any,
        batch_size: int = 1,
        shuffle: bool = False,
        num_workers: int = 0,
        drop_last: bool = True,
        persistent_workers: bool = True,
        auto_distributed_partitioning: bool = True,
        mode: str = "sync",
        async_options: Any = None,
        rebatched_worker_size: Any = None,
        **kwargs: Any,
    ) -> None:
        raise backend_error(
            "IPUDataLoader", "ipu", "torch.utils.data.DataLoader (mmpar's build_dataloader)"
        )
