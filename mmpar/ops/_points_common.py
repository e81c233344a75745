"""Shared pieces of the point-cloud ops: input checks, point-in-box tests, first-k selection.

The geometry follows mmcv-full 1.7.2's kernels operation by operation (the same float
expressions in the same order), so thresholds such as "inside the box" or "inside the ball"
decide alike on the same float32 input.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
from torch import Tensor

__all__ = [
    "batch_counts",
    "box_frame",
    "check",
    "check_indices",
    "check_pair",
    "check_points",
    "chunk_ranges",
    "first_true_indices",
    "in_boxes_mask",
    "rz_cos_sin",
    "squared_distances",
]

# Elements of a (batch, rows, columns) temporary processed at once: bounds the memory of the
# pairwise steps (about 8 bytes per element at the peak) whatever the input size.
_CHUNK_ELEMENTS = 1 << 22


def check(condition: bool, op: str, what: str, exc: type[Exception] = ValueError) -> None:
    """Raise ``exc`` with a message naming ``op`` unless ``condition`` holds."""
    if not condition:
        raise exc(f"mmpar.ops.{op}: {what}")


def check_points(x: object, op: str, name: str, ndim: int, last: int | None = None) -> None:
    """Check that ``x`` is a floating tensor of ``ndim`` dims (and ``last`` entries per row).

    Raises:
        TypeError: When ``x`` is not a floating-point tensor.
        AssertionError: When its shape is wrong (mmcv asserts the shapes).
    """
    check(
        isinstance(x, Tensor),
        op,
        f"{name} must be a torch.Tensor, got {type(x).__name__}",
        TypeError,
    )
    assert isinstance(x, Tensor)
    check(
        x.is_floating_point(),
        op,
        f"{name} must be a floating-point tensor, got {x.dtype}",
        TypeError,
    )
    shape = tuple(x.shape)
    want = f"{ndim} dims" + (f" with last size {last}" if last is not None else "")
    check(
        x.dim() == ndim and (last is None or shape[-1] == last),
        op,
        f"{name} must have {want}, got shape {shape}",
        AssertionError,
    )


def check_pair(op: str, a: Tensor, b: Tensor, name_a: str, name_b: str) -> None:
    """Check that two inputs share their batch size (dim 0) and device.

    Raises:
        AssertionError: When they do not (mmcv asserts these where it checks them).
    """
    check(
        a.shape[0] == b.shape[0],
        op,
        f"{name_a} and {name_b} must have the same batch size, got {a.shape[0]} and {b.shape[0]}",
        AssertionError,
    )
    check(
        a.device == b.device,
        op,
        f"{name_a} and {name_b} must be on the same device, got {a.device} and {b.device}",
        AssertionError,
    )


def batch_counts(op: str, rows: dict[str, tuple[int, Tensor]]) -> list[list[int]]:
    """Check the per-sample counts of stacked inputs and return them as lists.

    Args:
        op: The op's name, for the messages.
        rows: For each counts argument's name: (the stacked input's rows, the counts).

    Raises:
        AssertionError: When a counts tensor is not 1-D int32 (as mmcv asserts).
        ValueError: When the counts are negative, differ in length, or do not sum to their
            input's rows.
    """
    lists = []
    for name, (total, cnt) in rows.items():
        check(
            isinstance(cnt, Tensor) and cnt.dtype == torch.int32 and cnt.dim() == 1,
            op,
            f"{name} must be a 1-D int32 tensor of per-sample counts",
            AssertionError,
        )
        values = cnt.tolist()
        check(
            min(values, default=0) >= 0 and sum(values) == total,
            op,
            f"{name} {values} must be >= 0 and sum to the {total} stacked rows",
        )
        lists.append(values)
    check(
        len({len(v) for v in lists}) <= 1,
        op,
        f"{' and '.join(rows)} must have one count per sample each, got {[len(v) for v in lists]}",
    )
    return lists


def check_indices(
    idx: object, size: int, op: str, name: str, allow_minus_one: bool = False
) -> Tensor:
    """Check an index tensor against ``[0, size)`` and return it as int64.

    One reduction (min and max) and one host sync: cheap next to the op itself.

    Raises:
        TypeError: When ``idx`` is not an integer tensor.
        IndexError: When an index falls outside ``[0, size)`` (``-1`` is allowed, meaning
            "no point", when ``allow_minus_one``).
    """
    check(
        isinstance(idx, Tensor),
        op,
        f"{name} must be a torch.Tensor, got {type(idx).__name__}",
        TypeError,
    )
    assert isinstance(idx, Tensor)
    check(
        not idx.is_floating_point() and not idx.is_complex() and idx.dtype != torch.bool,
        op,
        f"{name} must be an integer tensor (int32 or int64), got {idx.dtype}",
        TypeError,
    )
    idx = idx.long()
    if idx.numel():
        low, high = (int(v) for v in torch.aminmax(idx))
        floor = -1 if allow_minus_one else 0
        check(
            low >= floor and high < size,
            op,
            f"{name} holds indices in [{low}, {high}], outside [{floor}, {size}): each must "
            f"index the {size} points it selects from",
            IndexError,
        )
    return idx


def chunk_ranges(
    rows: int, per_row: int, budget: int = _CHUNK_ELEMENTS
) -> Iterator[tuple[int, int]]:
    """Split ``rows`` into ``(start, stop)`` ranges of about ``budget / per_row`` rows."""
    step = max(1, budget // max(per_row, 1))
    for start in range(0, rows, step):
        yield start, min(rows, start + step)


def squared_distances(centers: Tensor, points: Tensor) -> Tensor:
    """``(B, M, N)`` squared distances as mmcv's kernels compute them: dx*dx + dy*dy + dz*dz.

    Not ``torch.cdist`` (a matrix product underneath): summing the squared differences in
    this order gives the same float32 value as the kernels, so radius and nearest-neighbour
    decisions agree at the boundaries.
    """
    total = None
    for axis in range(centers.shape[-1]):
        diff = centers[..., axis].unsqueeze(2) - points[..., axis].unsqueeze(1)
        term = diff * diff
        total = term if total is None else total + term
    assert total is not None
    return total


def first_true_indices(mask: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """Positions of the first ``k`` true entries along the last axis, in order.

    Args:
        mask: ``(..., N)`` booleans.
        k: How many positions to return per row.

    Returns:
        ``(positions, count)``: ``(..., k)`` int64 positions (``-1`` past the row's last true
        entry) and the ``(...)`` number of true entries of each row.
    """
    n = mask.shape[-1]
    rank = mask.to(torch.int32).cumsum(-1, dtype=torch.int32)
    count = rank[..., -1] if n else mask.new_zeros(mask.shape[:-1], dtype=torch.int32)
    wanted = torch.arange(1, k + 1, device=mask.device, dtype=torch.int32)
    wanted = wanted.expand(*mask.shape[:-1], k).contiguous()
    # The rank is a running count, so the j-th true entry sits where it first reaches j.
    pos = torch.searchsorted(rank.contiguous(), wanted)
    pos = torch.where(pos < n, pos, torch.full_like(pos, -1))
    return pos, count.long()


def rz_cos_sin(rz: Tensor) -> tuple[Tensor, Tensor]:
    """``cos(-rz)``, ``sin(-rz)`` rounded from float64, as C's ``cosf``/``sinf`` give them."""
    wide = -rz.double()
    return torch.cos(wide).to(rz.dtype), torch.sin(wide).to(rz.dtype)


def in_boxes_mask(points: Tensor, boxes: Tensor) -> Tensor:
    """Which points are in which 3D boxes, as mmcv's ``check_pt_in_box3d`` decides it.

    A point is in a box when it is within the box's height (bounds included) and strictly
    inside its rotated footprint. Computed over chunks of points, in place, so the
    temporaries stay small.

    Args:
        points: ``(B, N, 3)`` points ``(x, y, z)``.
        boxes: ``(B, T, 7)`` boxes ``(x, y, z, x_size, y_size, z_size, rz)``, ``z`` the bottom
            centre (LiDAR/depth coordinates).

    Returns:
        ``(B, N, T)`` booleans.
    """
    batch, n = points.shape[:2]
    out = torch.empty(batch, n, boxes.shape[1], dtype=torch.bool, device=points.device)
    cx, cy, cz, dx, dy, dz = (boxes[..., i].unsqueeze(1) for i in range(6))
    cosa, sina = (v.unsqueeze(1) for v in rz_cos_sin(boxes[..., 6]))
    half_x, half_y, half_z = dx / 2, dy / 2, dz / 2
    centre_z = cz + half_z
    # Chunks of about 64k pairs: each temporary stays in cache.
    for start, stop in chunk_ranges(n, batch * boxes.shape[1], budget=1 << 16):
        x, y, z = (points[:, start:stop, i].unsqueeze(2) for i in range(3))
        inside = out[:, start:stop]
        torch.le((z - centre_z).abs_(), half_z, out=inside)
        shift_x, shift_y = x - cx, y - cy
        # local_x = sx * cos + sy * (-sin), local_y = sx * sin + sy * cos, as the kernel; and
        # -h < v < h is |v| < h.
        local = shift_x * cosa
        local -= shift_y * sina
        inside &= local.abs_() < half_x
        local = shift_x.mul_(sina)
        local += shift_y.mul_(cosa)
        inside &= local.abs_() < half_y
    return out


def box_frame(points: Tensor, boxes: Tensor) -> tuple[Tensor, Tensor]:
    """Points in their boxes' frames, pair by pair: ``(P, 3)`` points and ``(P, 7)`` boxes.

    Returns:
        ``(local_x, local_y)``, each ``(P,)``: x and y relative to the box centre, rotated by
        ``-rz`` with the kernel's float expressions.
    """
    cosa, sina = rz_cos_sin(boxes[:, 6])
    shift_x, shift_y = points[:, 0] - boxes[:, 0], points[:, 1] - boxes[:, 1]
    return shift_x * cosa - shift_y * sina, shift_x * sina + shift_y * cosa
