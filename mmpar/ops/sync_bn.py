"""mmcv's ``SyncBatchNorm`` (``'MMSyncBN'``): PyTorch's :class:`torch.nn.SyncBatchNorm`."""

from __future__ import annotations

from typing import Any

from torch import nn

from mmpar.cnn import NORM_LAYERS

__all__ = ["SyncBatchNorm"]

_STATS_MODES = ("default", "N")


@NORM_LAYERS.register_module(name="MMSyncBN")
class SyncBatchNorm(nn.SyncBatchNorm):
    """Batch norm with statistics synchronised over the processes of ``group``.

    PyTorch's layer with mmcv's constructor. PyTorch combines the processes' statistics
    weighted by their sample counts, which is mmcv's ``stats_mode='N'``; mmcv's ``'default'``
    (every process weighs the same) gives the same result when the per-process batches are of
    equal size, the usual case. State-dict keys are the same as mmcv's.

    Args:
        num_features: Channels.
        eps: Added to the variance.
        momentum: Running-statistics momentum.
        affine: Learn a scale and shift.
        track_running_stats: Keep running statistics.
        group: Process group to synchronise over (None: all processes).
        stats_mode: ``'default'`` or ``'N'`` (see above).
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        group: Any | None = None,
        stats_mode: str = "default",
    ) -> None:
        assert stats_mode in _STATS_MODES, f"stats_mode must be one of {_STATS_MODES}"
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, process_group=group
        )
        self.group = group
        self.stats_mode = stats_mode
