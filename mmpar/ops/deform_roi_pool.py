"""mmcv 1.x's ``mmcv.ops.deform_roi_pool``: RoIAlign whose bins move by learned offsets.

Each bin of a RoI is sampled as aligned RoIAlign samples it (RoI shifted by -0.5 pixel, no
minimum size, ``ceil(bin size)`` samples per axis unless ``sampling_ratio`` is set), after
moving the bin by ``gamma * (roi_w, roi_h) * offset[:, :, ph, pw]``. Sampling and averaging is
one sparse product (:mod:`mmpar.ops._bilinear`, shared with the rotated RoI ops).

The backward is that of mmcv's CUDA kernel (mmcv-full 1.7.2 has no CPU kernel): the input
gradient is the adjoint of the sampling; the offset gradient weighs the four taps of each
sample by the *unclamped* sample coordinate, as mmcv does, so near the border (within a pixel
outside the map, or past the last row / column) it differs from the derivative of the forward.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.autograd.function import once_differentiable
from torch.nn.modules.utils import _pair

from ._bilinear import (
    bilinear_columns,
    bilinear_corners,
    bin_sample_points,
    rows_times_pixels,
    sparse_rows,
)
from ._roi_checks import check_finite_boxes, check_rois

__all__ = [
    "DeformRoIPool",
    "DeformRoIPoolFunction",
    "DeformRoIPoolPack",
    "ModulatedDeformRoIPoolPack",
    "deform_roi_pool",
]


def _bin_samples(
    rois: Tensor,
    offset: Tensor | None,
    output_size: tuple[int, int],
    spatial_scale: float,
    sampling_ratio: int,
    gamma: float,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Sample coordinates of every bin, in the float operations of mmcv's kernel.

    Returns:
        ``(y, x, weight, roi_w, roi_h)``: coordinates ``(K * ph * pw, S)``, each sample's
        weight (``1 / count`` on the RoI's own grid, 0 on padding) and the RoIs' sizes ``(K,)``.
    """
    pooled_h, pooled_w = output_size
    count = rois.size(0)
    start_w = rois[:, 1] * spatial_scale - 0.5
    start_h = rois[:, 2] * spatial_scale - 0.5
    roi_w = (rois[:, 3] * spatial_scale - 0.5) - start_w
    roi_h = (rois[:, 4] * spatial_scale - 0.5) - start_h
    start_y, start_x = start_h, start_w
    if offset is not None:  # per bin: (K, ph, pw)
        start_x = start_w[:, None, None] + gamma * roi_w[:, None, None] * offset[:, 0]
        start_y = start_h[:, None, None] + gamma * roi_h[:, None, None] * offset[:, 1]
    y, x, weight = bin_sample_points(start_y, start_x, roi_h, roi_w, output_size, sampling_ratio)
    y, x = torch.broadcast_tensors(y, x)
    max_h, max_w = weight.shape[-2:]
    weight = weight.expand(count, pooled_h, pooled_w, max_h, max_w)
    samples = max_h * max_w
    return (
        y.reshape(-1, samples),
        x.reshape(-1, samples),
        weight.reshape(-1, samples),
        roi_w,
        roi_h,
    )


def _sample_matrices(
    features: Tensor, rois: Tensor, y: Tensor, x: Tensor, weight: Tensor, with_offset: bool
) -> tuple[Tensor, Tensor | None, Tensor | None]:
    """Sparse ``(K*ph*pw, B*H*W)`` matrices: the pooling, and mmcv's offset-gradient weights.

    The offset-gradient matrices hold, per sample, the four taps weighted as mmcv's backward
    weighs them (the x one by ``y - y_low`` and ``y_high - y`` with ``y`` unclamped, the y one
    likewise in ``x``); their products with the pixels, dotted with the output gradient, are
    the offset gradients before the ``gamma * roi size`` factor.
    """
    batch_size, _, height, width = features.shape
    rows, samples = y.shape
    bins = rows // max(rois.size(0), 1)
    corners = bilinear_corners(height, width, y, x)
    y_low, x_low, y_high, x_high, ly, lx, inside = corners
    batch = rois[:, 0].long().repeat_interleave(bins)[:, None]
    columns = bilinear_columns(batch, height, width, corners).reshape(rows, samples * 4)
    scale = (weight * inside.to(weight.dtype))[..., None]
    size = batch_size * height * width

    def matrix(values: list[Tensor]) -> Tensor:
        stacked = (torch.stack(values, dim=-1) * scale).reshape(rows, samples * 4)
        return sparse_rows(columns, stacked.to(features.dtype), size)

    pool = matrix([(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx])
    if not with_offset:
        return pool, None, None
    below = y - y_low.to(y.dtype)  # mmcv's (y - y_low), y unclamped
    above = y_high.to(y.dtype) - y
    left = x - x_low.to(x.dtype)
    right = x_high.to(x.dtype) - x
    grad_x = matrix([-above, above, -below, below])
    grad_y = matrix([-right, -left, right, left])
    return pool, grad_x, grad_y


class DeformRoIPoolFunction(torch.autograd.Function):
    """Deformable RoI pooling with mmcv's argument order (``deform_roi_pool`` is its apply).

    Raises:
        AssertionError: ``rois`` is not ``(K, 5)`` (as mmcv).
        IndexError: A batch index (``rois[:, 0]``) is outside ``[0, N)``.
        ValueError: A NaN or infinite box, or ``offset`` not ``(K, 2, h, w)``.
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx,
        input: Tensor,  # noqa: A002 (mmcv's argument name)
        rois: Tensor,
        offset: Tensor | None,
        output_size: tuple[int, ...],
        spatial_scale: float = 1.0,
        sampling_ratio: int = 0,
        gamma: float = 0.1,
    ) -> Tensor:
        """Pooled features ``(K, C, ph, pw)``; see :class:`DeformRoIPool`."""
        ctx.output_size = _pair(output_size)
        ctx.spatial_scale = float(spatial_scale)
        ctx.sampling_ratio = int(sampling_ratio)
        ctx.gamma = float(gamma)
        assert rois.size(1) == 5, "RoI must be (idx, x1, y1, x2, y2)!"
        check_rois("deform_roi_pool", rois, input.size(0))
        check_finite_boxes("deform_roi_pool", rois)
        pooled_h, pooled_w = ctx.output_size
        if offset is not None and offset.numel() == 0:
            offset = None  # mmcv passes an empty tensor for "no offset"
        if offset is not None and offset.shape != (rois.size(0), 2, pooled_h, pooled_w):
            raise ValueError(
                f"deform_roi_pool: offset must be (K, 2, {pooled_h}, {pooled_w}) for "
                f"{rois.size(0)} RoIs, got {tuple(offset.shape)}"
            )
        rois = rois.to(input.dtype)
        y, x, weight, roi_w, roi_h = _bin_samples(
            rois,
            None if offset is None else offset.to(input.dtype),
            ctx.output_size,
            ctx.spatial_scale,
            ctx.sampling_ratio,
            ctx.gamma,
        )
        pool, grad_x, grad_y = _sample_matrices(
            input, rois, y, x, weight, offset is not None and ctx.needs_input_grad[2]
        )
        ctx.matrices = (pool, grad_x, grad_y)
        ctx.roi_size = (roi_w, roi_h)
        ctx.has_offset = offset is not None
        ctx.offset_dtype = None if offset is None else offset.dtype
        ctx.save_for_backward(input)
        pooled = rows_times_pixels(pool, input)
        count, channels = rois.size(0), input.size(1)
        return pooled.view(count, pooled_h, pooled_w, channels).permute(0, 3, 1, 2).contiguous()

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output: Tensor) -> tuple:  # type: ignore[override]
        """Gradients of the input (the adjoint) and of the offset (mmcv's kernel's formula)."""
        (input,) = ctx.saved_tensors
        pool, grad_x, grad_y = ctx.matrices
        count, channels, pooled_h, pooled_w = grad_output.shape
        grad_rows = grad_output.permute(0, 2, 3, 1).reshape(-1, channels)
        grad_input = None
        if ctx.needs_input_grad[0]:
            batch_size, _, height, width = input.shape
            flat = torch.sparse.mm(pool.t().to(grad_rows.dtype), grad_rows)
            grad_input = flat.view(batch_size, height, width, channels).permute(0, 3, 1, 2)
            grad_input = grad_input.contiguous()
        grad_offset = None
        if ctx.has_offset and ctx.needs_input_grad[2]:
            roi_w, roi_h = ctx.roi_size
            along_x = (rows_times_pixels(grad_x, input) * grad_rows).sum(1)
            along_y = (rows_times_pixels(grad_y, input) * grad_rows).sum(1)
            grad_offset = torch.stack(
                [
                    ctx.gamma * roi_w[:, None, None] * along_x.view(count, pooled_h, pooled_w),
                    ctx.gamma * roi_h[:, None, None] * along_y.view(count, pooled_h, pooled_w),
                ],
                dim=1,
            ).to(ctx.offset_dtype)
        return grad_input, None, grad_offset, None, None, None, None


deform_roi_pool = DeformRoIPoolFunction.apply


class DeformRoIPool(nn.Module):
    """Deformable RoI pooling: RoIAlign (aligned) whose bins move by ``offset``.

    Args:
        output_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from RoI to feature-map coordinates (1 / stride).
        sampling_ratio: Samples per bin along each axis; 0 for ``ceil(bin size)`` per RoI.
        gamma: Scale of the offsets: a bin moves by ``gamma * roi size * offset``.

    Raises:
        AssertionError: At ``forward``, ``rois`` is not ``(K, 5)`` (as mmcv).
        IndexError: At ``forward``, a batch index is outside ``[0, N)``.
        ValueError: At ``forward``, a NaN or infinite box, or a badly shaped ``offset``.
    """

    def __init__(
        self,
        output_size: int | tuple[int, ...],
        spatial_scale: float = 1.0,
        sampling_ratio: int = 0,
        gamma: float = 0.1,
    ) -> None:
        super().__init__()
        self.output_size = _pair(output_size)
        self.spatial_scale = float(spatial_scale)
        self.sampling_ratio = int(sampling_ratio)
        self.gamma = float(gamma)

    def forward(
        self,
        input: Tensor,  # noqa: A002 (mmcv's argument name)
        rois: Tensor,
        offset: Tensor | None = None,
    ) -> Tensor:
        """Pool ``rois`` from ``input``, each bin moved by ``offset``.

        Args:
            input: Features ``(N, C, H, W)``.
            rois: ``(K, 5)``: batch index, ``x1, y1, x2, y2`` in input-image pixels.
            offset: ``(K, 2, h, w)`` bin offsets (x then y) in units of RoI size, or None.

        Returns:
            ``(K, C, h, w)``.
        """
        return deform_roi_pool(
            input,
            rois,
            offset,
            self.output_size,
            self.spatial_scale,
            self.sampling_ratio,
            self.gamma,
        )


def _offset_head(in_features: int, hidden: int, out_features: int) -> nn.Sequential:
    """The offset branch: three linear layers, the last zero-initialised (no offset at first)."""
    head = nn.Sequential(
        nn.Linear(in_features, hidden),
        nn.ReLU(inplace=True),
        nn.Linear(hidden, hidden),
        nn.ReLU(inplace=True),
        nn.Linear(hidden, out_features),
    )
    head[-1].weight.data.zero_()
    head[-1].bias.data.zero_()
    return head


class _OffsetPredictingPool(DeformRoIPool):
    """The two packs' shared part: a first, offset-free pooling feeds the offset branch.

    A private base, so that, as in mmcv, neither pack is an instance of the other.
    """

    def __init__(
        self,
        output_size: int | tuple[int, ...],
        output_channels: int,
        deform_fc_channels: int = 1024,
        spatial_scale: float = 1.0,
        sampling_ratio: int = 0,
        gamma: float = 0.1,
    ) -> None:
        super().__init__(output_size, spatial_scale, sampling_ratio, gamma)
        self.output_channels = output_channels
        self.deform_fc_channels = deform_fc_channels
        bins = self.output_size[0] * self.output_size[1]
        self.offset_fc = _offset_head(bins * output_channels, deform_fc_channels, bins * 2)

    def _first_pass(self, input: Tensor, rois: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
        """The offset-free pooling, flattened per RoI, and the offsets predicted from it."""
        assert input.size(1) == self.output_channels
        flat = super().forward(input, rois).view(rois.size(0), -1)
        offset = self.offset_fc(flat).view(rois.size(0), 2, *self.output_size)
        return flat, offset


class DeformRoIPoolPack(_OffsetPredictingPool):
    """DeformRoIPool that predicts its own offsets from a first, offset-free pooling.

    Args:
        output_size: ``(h, w)`` of each output map.
        output_channels: Channels of the input features (checked in forward).
        deform_fc_channels: Width of the offset branch's hidden layers.
        spatial_scale: Factor from RoI to feature-map coordinates.
        sampling_ratio: Samples per bin along each axis; 0 for adaptive.
        gamma: Scale of the offsets.

    Raises:
        AssertionError: At ``forward``, ``input`` does not have ``output_channels`` channels,
            or ``rois`` is not ``(K, 5)``.
        IndexError: At ``forward``, a batch index is outside ``[0, N)``.
        ValueError: At ``forward``, a NaN or infinite box.
    """

    def forward(self, input: Tensor, rois: Tensor) -> Tensor:  # type: ignore[override]  # noqa: A002
        """Pool, predict offsets from the result, pool again with them: ``(K, C, h, w)``."""
        _, offset = self._first_pass(input, rois)
        return super().forward(input, rois, offset)


class ModulatedDeformRoIPoolPack(_OffsetPredictingPool):
    """DeformRoIPoolPack that also predicts a per-bin mask in ``(0, 1)`` multiplied in.

    Args: as :class:`DeformRoIPoolPack`.

    Raises:
        AssertionError: At ``forward``, ``input`` does not have ``output_channels`` channels,
            or ``rois`` is not ``(K, 5)``.
        IndexError: At ``forward``, a batch index is outside ``[0, N)``.
        ValueError: At ``forward``, a NaN or infinite box.
    """

    def __init__(
        self,
        output_size: int | tuple[int, ...],
        output_channels: int,
        deform_fc_channels: int = 1024,
        spatial_scale: float = 1.0,
        sampling_ratio: int = 0,
        gamma: float = 0.1,
    ) -> None:
        super().__init__(
            output_size, output_channels, deform_fc_channels, spatial_scale, sampling_ratio, gamma
        )
        bins = self.output_size[0] * self.output_size[1]
        self.mask_fc = nn.Sequential(
            nn.Linear(bins * output_channels, deform_fc_channels),
            nn.ReLU(inplace=True),
            nn.Linear(deform_fc_channels, bins),
            nn.Sigmoid(),
        )
        self.mask_fc[2].weight.data.zero_()
        self.mask_fc[2].bias.data.zero_()

    def forward(self, input: Tensor, rois: Tensor) -> Tensor:  # type: ignore[override]  # noqa: A002
        """Pool, predict offsets and mask, pool with the offsets, times the mask."""
        flat, offset = self._first_pass(input, rois)
        mask = self.mask_fc(flat).view(rois.size(0), 1, *self.output_size)
        return super().forward(input, rois, offset) * mask
