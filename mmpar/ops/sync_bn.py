"""mmcv 1.x's ``mmcv.ops.sync_bn``: ``SyncBatchNorm`` with mmcv's ``group`` and ``stats_mode``.

It is registered in ``NORM_LAYERS`` as ``'MMSyncBN'``, as in mmcv.

It is a subclass of ``torch.nn.SyncBatchNorm`` (same parameters and buffers, recognised by
torch's and mmpar's SyncBN helpers) with its own forward, for two reasons: torch's refuses CPU
tensors once a process group exists, and mmcv's ``stats_mode='default'`` weights every rank
equally, which torch does not offer. In one process it is plain batch norm; across processes
the statistics are all-reduced with ``torch.distributed.nn`` (so gradients flow through the
reduction) on any device and backend.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor, nn

from mmpar.cnn.bricks.registry import NORM_LAYERS

from ._autograd import op_function

__all__ = ["SyncBatchNorm", "SyncBatchNormFunction", "synced_batch_norm"]


class _AllReduceSum(torch.autograd.Function):
    """Sum over the group; the gradient of every rank's input is the summed gradient.

    Each rank's output feeds that rank's loss, and the total loss is the sum over ranks, so
    the gradient of an input is the sum of the output gradients of all ranks.
    """

    @staticmethod
    def forward(ctx: Any, tensor: Tensor, group: Any) -> Tensor:
        ctx.group = group
        out = tensor.clone()
        dist.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        grad = grad.contiguous().clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


@NORM_LAYERS.register_module(name="MMSyncBN")
class SyncBatchNorm(nn.SyncBatchNorm):
    """Batch norm with statistics over all processes of a group.

    Args:
        num_features: Channels of the input (N, C, ...).
        eps: Added to the variance. Default: 1e-5.
        momentum: Running-statistics factor; None for a cumulative average. Default: 0.1.
        affine: Whether to learn ``weight`` and ``bias``. Default: True.
        track_running_stats: Whether to keep running statistics (else batch statistics are
            used in eval mode too). Default: True.
        group: The process group to synchronise over. Default: None (the whole world).
        stats_mode: ``'default'``: each rank's mean and variance count equally (a rank with
            an empty batch contributes zeros, as in mmcv); ``'N'``: each rank counts by its
            batch size, which is right when batches differ or are empty. Default:
            ``'default'``.
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        group: Any | None = None,
        stats_mode: str = "default",
    ) -> None:
        assert stats_mode in ["default", "N"], (
            f'stats_mode must be "default" or "N", got "{stats_mode}"'
        )
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, process_group=group
        )
        self.stats_mode = stats_mode
        self.group = group

    @property
    def group_size(self) -> int:
        """The number of processes the statistics are synchronised over (1 without a group)."""
        if not (dist.is_available() and dist.is_initialized()):
            return 1
        return dist.get_world_size(self.group)

    def reset_parameters(self) -> None:
        """Reset the running statistics; ``weight`` uniform in [0, 1) and ``bias`` zero.

        The uniform ``weight`` is mmcv's choice for this layer (torch's batch norm uses ones).
        """
        self.reset_running_stats()
        if self.affine:
            with torch.no_grad():
                self.weight.uniform_()
                self.bias.zero_()

    def forward(self, input: Tensor) -> Tensor:
        """Normalise ``input`` (N, C, ...).

        Training (or untracked) mode uses the batch statistics over the group, eval mode the
        running statistics.

        Raises:
            ValueError: ``input`` has fewer than 2 dimensions.
        """
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input, got {input.dim()}D input")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        batch_stats = self.training or not self.track_running_stats
        if not batch_stats or self.group_size == 1:
            # Eval with running statistics, or a group of one: plain batch norm, no all-reduce.
            return F.batch_norm(
                input,
                self.running_mean,
                self.running_var,
                self.weight,
                self.bias,
                batch_stats,
                factor,
                self.eps,
            )
        return self._synced_forward(input, factor)

    def _synced_forward(self, input: Tensor, factor: float) -> Tensor:
        return synced_batch_norm(
            input,
            self.running_mean if self.track_running_stats else None,
            self.running_var if self.track_running_stats else None,
            self.weight if self.affine else None,
            self.bias if self.affine else None,
            factor,
            self.eps,
            self.group if self.group is not None else dist.group.WORLD,
            self.group_size,
            self.stats_mode,
        )

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.num_features}, eps={self.eps}, "
            f"momentum={self.momentum}, affine={self.affine}, "
            f"track_running_stats={self.track_running_stats}, group_size={self.group_size}, "
            f"stats_mode={self.stats_mode})"
        )


def synced_batch_norm(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None,
    bias: Tensor | None,
    momentum: float,
    eps: float,
    group: Any,
    group_size: int,
    stats_mode: str,
) -> Tensor:
    """Batch norm of ``input`` (N, C, ...) with the batch statistics of a process group.

    Updates ``running_mean`` and ``running_var`` (when given) by ``momentum``. With a group
    of one (or no process group), the statistics are this process's.

    Args:
        input: The features.
        running_mean: (C,) running mean, updated in place; None for none.
        running_var: (C,) running (unbiased) variance, updated in place; None for none.
        weight: (C,) scale, or None.
        bias: (C,) shift, or None.
        momentum: The running statistics' update factor.
        eps: Added to the variance.
        group: The process group.
        group_size: The number of processes in ``group``.
        stats_mode: ``'default'`` or ``'N'``, as :class:`SyncBatchNorm`.

    Returns:
        The normalised features, shaped and typed as ``input``.
    """
    synced = group_size > 1 and dist.is_available() and dist.is_initialized()
    world = group_size if synced else 1

    def reduce(tensor: Tensor) -> Tensor:
        return _AllReduceSum.apply(tensor, group) if synced else tensor

    batch = input.size(0)
    x = input.flatten(2)  # (N, C, L)
    if x.dtype in (torch.float16, torch.bfloat16):
        x = x.float()  # statistics in float32 at least, as mmcv's kernel
    channels = x.size(1)
    # 'default': every rank's statistic has weight 1 (divided by the group size);
    # 'N': weight = the rank's batch size (divided by the total batch).
    rank_weight = float(batch) if stats_mode == "N" else 1.0
    has_data = 1.0 if batch > 0 else 0.0
    local_mean = x.mean((0, 2)) if batch > 0 else x.new_zeros(channels)
    # Reduced with the mean: the batch flag (weighted) and the element count.
    extra = x.new_tensor([has_data * rank_weight, batch * x.size(2)])
    reduced = reduce(torch.cat([local_mean * rank_weight, extra]))
    total = reduced[channels].detach()
    count = int(reduced[channels + 1])
    divisor = total.clamp(min=1) if stats_mode == "N" else float(world)
    mean = reduced[:channels] / divisor

    centred = x - mean.view(1, -1, 1)
    local_var = centred.pow(2).mean((0, 2)) if batch > 0 else x.new_zeros(channels)
    var = reduce(local_var * rank_weight) / divisor

    inv_std = torch.rsqrt(var + eps)
    out = centred * inv_std.view(1, -1, 1)
    if weight is not None:
        out = out * weight.view(1, -1, 1)
    if bias is not None:
        out = out + bias.view(1, -1, 1)
    if running_mean is not None and running_var is not None and bool(total > 0):
        with torch.no_grad():
            # The element count of the whole group (mmcv uses its local count times the
            # group size, so its ranks disagree when batches differ).
            unbiased = var * count / (count - 1) if count > 1 else var
            running_mean.mul_(1 - momentum).add_(mean.detach(), alpha=momentum)
            running_var.mul_(1 - momentum).add_(unbiased.detach(), alpha=momentum)
    return out.to(input.dtype).view_as(input)


SyncBatchNormFunction = op_function(
    "SyncBatchNormFunction",
    synced_batch_norm,
    __name__,
    doc="""mmcv's autograd function of :class:`SyncBatchNorm`'s training step.

    ``apply(input, running_mean, running_var, weight, bias, momentum, eps, group, group_size,
    stats_mode)`` normalises with the group's batch statistics and updates the running ones,
    as :func:`synced_batch_norm`; the gradients are those of that computation.
    """,
)
