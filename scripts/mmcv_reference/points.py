"""Reference outputs of mmcv-full's CPU kernels for the point-cloud family (tests/test_ops).

``points_in_boxes_cpu`` (mmcv's one point-cloud CPU kernel) and the deprecated BEV functions
``boxes_iou_bev`` / ``nms_bev`` (which mmcv runs on its ``box_iou_rotated`` / ``nms_rotated``
CPU kernels). Run from the repository root with a CPU build of mmcv-full 1.7.2:
``python -m scripts.mmcv_reference.points``.

The committed data (2026-11-28) came from these same functions run with ``ops`` a module that
mirrors mmcv's three Python wrappers over mmcv-full 1.7.2's own CPU kernels
(``csrc/pytorch/cpu/points_in_boxes.cpp``, ``box_iou_rotated.cpp``, ``nms_rotated.cpp``)
compiled alone with ``torch.utils.cpp_extension``, as the full build was not finished; a full
build runs the same kernel code.
"""

from __future__ import annotations

import math
import warnings

import torch

from scripts.mmcv_reference import save_case

FAMILY = "points"


def _boxes3d(gen: torch.Generator, batch: int, num: int) -> torch.Tensor:
    centre = torch.rand(batch, num, 3, generator=gen) * torch.tensor([8.0, 8.0, 2.0]) - 4
    size = torch.rand(batch, num, 3, generator=gen) * 2.5 + 0.5
    rz = (torch.rand(batch, num, 1, generator=gen) * 2 - 1) * math.pi
    return torch.cat([centre, size, rz], -1)


def _points(gen: torch.Generator, boxes: torch.Tensor, num: int) -> torch.Tensor:
    """Random points, plus points exactly at each box's bottom and top (inclusive bounds)."""
    batch = boxes.shape[0]
    pts = torch.rand(batch, num, 3, generator=gen) * torch.tensor([10.0, 10.0, 5.0]) - 5
    bottom = boxes[..., :3].clone()
    top = boxes[..., :3].clone()
    top[..., 2] = top[..., 2] + boxes[..., 5]
    return torch.cat([pts, bottom, top], 1)


def points_in_boxes(ops: object) -> None:
    """``points_in_boxes_cpu`` on random boxes and points, some on the boxes' z bounds."""
    gen = torch.Generator().manual_seed(0)
    boxes = _boxes3d(gen, 2, 12)
    points = _points(gen, boxes, 400)
    out = ops.points_in_boxes_cpu(points, boxes)
    save_case(FAMILY, "points_in_boxes_cpu", {"points": points, "boxes": boxes, "out": out})


def _bev_boxes(gen: torch.Generator, num: int, spread: float) -> torch.Tensor:
    x1y1 = torch.rand(num, 2, generator=gen) * spread
    wh = torch.rand(num, 2, generator=gen) * 3 + 0.5
    ry = (torch.rand(num, 1, generator=gen) * 2 - 1) * math.pi
    return torch.cat([x1y1, x1y1 + wh, ry], 1)


def bev(ops: object) -> None:
    """``boxes_iou_bev`` (with identical pairs) and ``nms_bev`` at three thresholds."""
    gen = torch.Generator().manual_seed(1)
    boxes_a = _bev_boxes(gen, 30, 6.0)
    boxes_b = torch.cat([_bev_boxes(gen, 35, 6.0), boxes_a[:5]])  # 5 identical pairs
    iou = ops.boxes_iou_bev(boxes_a, boxes_b)
    save_case(FAMILY, "boxes_iou_bev", {"boxes_a": boxes_a, "boxes_b": boxes_b, "iou": iou})
    boxes = _bev_boxes(gen, 150, 12.0)
    scores = torch.rand(150, generator=gen)
    case = {"boxes": boxes, "scores": scores}
    for thr in (0.1, 0.3, 0.7):
        case[f"keep_{thr}"] = ops.nms_bev(boxes, scores, thr)
    case["keep_pre_post"] = ops.nms_bev(boxes, scores, 0.3, pre_max_size=100, post_max_size=20)
    save_case(FAMILY, "nms_bev", case)


def main() -> None:
    """Write every case of the family."""
    from mmcv import ops

    warnings.simplefilter("ignore", DeprecationWarning)
    points_in_boxes(ops)
    bev(ops)


if __name__ == "__main__":
    main()
