"""RoIAlign with mmcv's signature: average mode on torchvision's kernel, max mode as mmcv's.

``'avg'`` runs torchvision's kernel (the same Detectron algorithm); ``'max'``, which
torchvision lacks, follows mmcv's CPU kernel (``_roi_align_max``).
"""

from __future__ import annotations

import torchvision
from torch import Tensor, nn
from torch.nn.modules.utils import _pair

from mmpar.utils import deprecated_api_warning

from ._autograd import op_function
from ._roi_align_max import roi_align_max
from ._roi_checks import check_box_order, check_rois

__all__ = ["RoIAlign", "RoIAlignFunction", "roi_align"]


def roi_align(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    rois: Tensor,
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
    sampling_ratio: int = 0,
    pool_mode: str = "avg",
    aligned: bool = True,
) -> Tensor:
    """Average bilinear samples of each box's bins into a fixed-size feature map.

    Args:
        input: Features ``(N, C, H, W)``.
        rois: Boxes ``(K, 5)``: batch index, then ``x1, y1, x2, y2`` in input image pixels.
        output_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from box coordinates to feature-map coordinates (1 / stride).
        sampling_ratio: Samples per bin along each axis; 0 picks ``ceil(bin size)`` per box.
        pool_mode: ``'avg'`` (mean of the samples of a bin) or ``'max'`` (their maximum,
            -10000 for a bin whose samples are all below that, as mmcv).
        aligned: Shift boxes by -0.5 pixel so samples sit on pixel centres (True), or mmcv's
            legacy alignment (False, boxes at least one pixel wide).

    Returns:
        ``(K, C, h, w)`` pooled features.

    Raises:
        AssertionError: ``pool_mode`` is not ``'avg'`` or ``'max'``, or ``rois`` is not
            ``(K, 5)`` (as mmcv).
        IndexError: A batch index (``rois[:, 0]``) is outside ``[0, N)``.
        InvertedRoIError: With ``aligned=True``, a RoI with ``x2 < x1`` or ``y2 < y1`` (a
            ``ValueError`` that is also the ``RuntimeError`` of mmcv's assertion).
    """
    assert pool_mode in ("max", "avg"), f"pool_mode must be 'avg' or 'max', got {pool_mode!r}"
    check_rois("roi_align", rois, input.size(0))
    if aligned:
        # torchvision's kernel sizes a buffer from such a box and fails with a bare C++ error.
        check_box_order("roi_align", rois, float(spatial_scale), 0.5)
    if pool_mode == "max":
        return roi_align_max(
            input, rois, _pair(output_size), float(spatial_scale), int(sampling_ratio), aligned
        )
    return torchvision.ops.roi_align(
        input, rois, _pair(output_size), float(spatial_scale), int(sampling_ratio), aligned
    )


class RoIAlign(nn.Module):
    """RoIAlign pooling as a layer: :func:`roi_align` with fixed settings.

    Args:
        output_size: ``(h, w)`` of each output map (an int for square).
        spatial_scale: Factor from box coordinates to feature-map coordinates.
        sampling_ratio: Samples per bin along each axis; 0 for adaptive.
        pool_mode: ``'avg'`` or ``'max'`` (see :func:`roi_align`).
        aligned: Half-pixel-aligned sampling (True) or mmcv's legacy one (False).
        use_torchvision: Accepted for compatibility; both settings run torchvision's kernel.

    Raises:
        AssertionError: At ``forward``, ``pool_mode`` is not ``'avg'`` or ``'max'``, or ``rois``
            is not ``(K, 5)`` (as mmcv).
        IndexError: At ``forward``, a batch index (``rois[:, 0]``) is outside ``[0, N)``.
    """

    @deprecated_api_warning(
        {"out_size": "output_size", "sample_num": "sampling_ratio"}, cls_name="RoIAlign"
    )
    def __init__(
        self,
        output_size: int | tuple[int, int],
        spatial_scale: float = 1.0,
        sampling_ratio: int = 0,
        pool_mode: str = "avg",
        aligned: bool = True,
        use_torchvision: bool = False,
    ) -> None:
        super().__init__()
        self.output_size = _pair(output_size)
        self.spatial_scale = float(spatial_scale)
        self.sampling_ratio = int(sampling_ratio)
        self.pool_mode = pool_mode
        self.aligned = aligned
        self.use_torchvision = use_torchvision

    def forward(self, input: Tensor, rois: Tensor) -> Tensor:  # noqa: A002
        """Pool ``rois`` (``(K, 5)``: batch index, x1, y1, x2, y2) from ``input`` (NCHW).

        Args:
            input: Features ``(N, C, H, W)``.
            rois: Boxes ``(K, 5)``.

        Returns:
            ``(K, C, h, w)`` pooled features.
        """
        if self.pool_mode not in ("avg", "max"):
            return roi_align(input, rois, self.output_size, pool_mode=self.pool_mode)  # raises
        # The avg mode is the hot path of every two-stage detector: straight to the kernel.
        check_rois("RoIAlign", rois, input.size(0))
        if self.aligned:
            check_box_order("RoIAlign", rois, self.spatial_scale, 0.5)
        kernel = torchvision.ops.roi_align if self.pool_mode == "avg" else roi_align_max
        return kernel(
            input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(output_size={self.output_size}, "
            f"spatial_scale={self.spatial_scale}, sampling_ratio={self.sampling_ratio}, "
            f"pool_mode={self.pool_mode}, aligned={self.aligned}, "
            f"use_torchvision={self.use_torchvision})"
        )


RoIAlignFunction = op_function("RoIAlignFunction", roi_align, __name__)
