"""Checks shared by the ops that take RoIs as ``(K, 5)`` rows: batch index, then a box."""

from __future__ import annotations

from torch import Tensor

__all__ = ["InvertedRoIError", "check_box_order", "check_finite_boxes", "check_rois"]


def check_rois(op: str, rois: Tensor, batch_size: int, columns: int = 5) -> None:
    """Check the shape of ``rois`` and that every batch index names an image of the batch.

    mmcv's kernels read the batch index as ``int(rois[k, 0])`` and index the features with
    it unchecked, so an index out of range returns whatever memory holds. One reduction over
    the index column (one device sync) rejects that instead, with the ``IndexError`` that
    PyTorch raises for an out-of-range index (mmcv itself raises nothing to match).

    Args:
        op: The op's name, for the message.
        rois: The RoIs, ``(K, columns)``, the batch index first.
        batch_size: The number of images in the features.
        columns: Columns per RoI.

    Raises:
        AssertionError: ``rois`` is not ``(K, columns)`` (mmcv asserts this shape).
        IndexError: A batch index (as an int, truncated like mmcv's kernels do) is outside
            ``[0, batch_size)``, or is NaN; the error names the first bad row and index.
    """
    if rois.dim() != 2 or rois.size(1) != columns:
        raise AssertionError(
            f"{op}: rois must have shape (K, {columns}) (batch index, then the box), got "
            f"{tuple(rois.shape)}"
        )
    if rois.size(0) == 0:
        return
    index = rois[:, 0]
    # int() truncates toward zero: -0.5 is image 0, as in the kernels; NaN compares false.
    bad = ~((index > -1) & (index < batch_size))
    if bool(bad.any()):
        row = int(bad.nonzero()[0, 0])
        raise IndexError(
            f"{op}: rois[{row}] has batch index {float(index[row])!r}, but the features hold "
            f"{batch_size} image(s) (valid: 0 to {batch_size - 1}); fix the first column of "
            "rois"
        )


def check_finite_boxes(op: str, rois: Tensor) -> None:
    """Raise ``ValueError`` naming the first RoI whose box (columns 1 on) is NaN or infinite.

    For ops whose work grows with the box size (adaptive sampling grids), where a non-finite
    box would otherwise fail deep inside or allocate without bound.
    """
    if rois.size(0) == 0:
        return
    bad = ~rois[:, 1:].isfinite().all(dim=1)
    if bool(bad.any()):
        row = int(bad.nonzero()[0, 0])
        raise ValueError(
            f"{op}: rois[{row}] = {rois[row].tolist()} has a NaN or infinite coordinate; "
            "pass finite boxes"
        )


class InvertedRoIError(ValueError, RuntimeError):
    """A RoI whose ``x2 < x1`` or ``y2 < y1`` where the op does not allow it.

    A ``ValueError`` (bad input) that is also the ``RuntimeError`` mmcv's kernels raise
    through their failed assertion, so ported ``except RuntimeError:`` code still catches it.
    """


def check_box_order(op: str, rois: Tensor, spatial_scale: float, offset: float) -> None:
    """Raise :class:`InvertedRoIError` naming the first RoI of negative width or height.

    The width and height are computed as mmcv's kernels do (``x2 * scale - offset`` minus
    ``x1 * scale - offset``, in the RoIs' dtype), so exactly the boxes their assertion stops
    are refused; a NaN coordinate fails the assertion too.

    Args:
        op: The op's name, for the message.
        rois: ``(K, 5)`` RoIs: batch index, then ``x1, y1, x2, y2``.
        spatial_scale: The op's box-to-feature scale.
        offset: The op's pixel shift (0.5 with ``aligned=True``).
    """
    if rois.size(0) == 0:
        return
    start = rois[:, 1:3] * spatial_scale - offset
    size = (rois[:, 3:5] * spatial_scale - offset) - start
    bad = ~(size >= 0).all(dim=1)
    if bool(bad.any()):
        row = int(bad.nonzero()[0, 0])
        raise InvertedRoIError(
            f"{op}: rois[{row}] = {rois[row].tolist()} has x2 < x1 or y2 < y1 (or a NaN), "
            "which aligned=True does not allow (mmcv's kernel asserts it); give each box as "
            "x1, y1, x2, y2 with x2 >= x1 and y2 >= y1, or pass aligned=False (boxes then "
            "count as at least 1 pixel)"
        )
