"""Reference outputs of mmcv-full's CPU kernels for the rotated-box family.

Run with a Python whose ``mmcv.ops`` is a CPU build of mmcv-full 1.7.2, from the repository
root: ``python -m scripts.mmcv_reference.rotated``. Writes
``tests/data/mmcv_reference/rotated/*.pt`` (read by tests/test_ops/test_rotated.py).
"""

from __future__ import annotations

import math

import torch

from scripts.mmcv_reference import save_case

FAMILY = "rotated"


def _rotated_boxes(generator: torch.Generator, count: int, extent: float) -> torch.Tensor:
    boxes = torch.rand(count, 5, generator=generator)
    boxes[:, :2] *= extent
    boxes[:, 2:4] = boxes[:, 2:4] * extent / 3 + 1
    boxes[:, 4] = (boxes[:, 4] - 0.5) * 2 * math.pi
    return boxes


def _rectangles_as_quadrilaterals(
    generator: torch.Generator, count: int, extent: float
) -> torch.Tensor:
    # mmcv's quadrilateral kernel tests a corner against the other box by projecting it on
    # two edges: exact for rectangles only (see mmpar.ops.box_iou_quadri). Both orientations.
    center = torch.rand(count, 1, 2, generator=generator) * extent
    side1 = (torch.rand(count, 1, 2, generator=generator) - 0.5) * extent / 2
    side2 = torch.stack([-side1[..., 1], side1[..., 0]], -1) * (
        (torch.rand(count, 1, 1, generator=generator) - 0.5) * 3
    )
    corners = torch.cat([center, center + side1, center + side1 + side2, center + side2], dim=1)
    return corners.flatten(1)


def iou_cases(generator: torch.Generator) -> None:
    """box_iou_rotated (both angle conventions, iou / iof, aligned) and box_iou_quadri."""
    from mmcv.ops import box_iou_quadri, box_iou_rotated

    boxes1 = _rotated_boxes(generator, 40, 30)
    boxes2 = _rotated_boxes(generator, 30, 30)
    boxes2[:5] = boxes1[:5]  # identical pairs
    tensors = {"boxes1": boxes1, "boxes2": boxes2}
    for mode in ("iou", "iof"):
        for clockwise in (True, False):
            key = f"{mode}_{'cw' if clockwise else 'ccw'}"
            tensors[key] = box_iou_rotated(boxes1, boxes2, mode, False, clockwise)
    tensors["aligned"] = box_iou_rotated(boxes1[:30], boxes2, "iou", True)
    save_case(FAMILY, "box_iou_rotated", tensors)

    quads1 = _rectangles_as_quadrilaterals(generator, 30, 30)
    quads2 = _rectangles_as_quadrilaterals(generator, 25, 30)
    save_case(
        FAMILY,
        "box_iou_quadri",
        {
            "boxes1": quads1,
            "boxes2": quads2,
            "iou": box_iou_quadri(quads1, quads2),
            "iof": box_iou_quadri(quads1, quads2, "iof"),
            "aligned": box_iou_quadri(quads1[:25], quads2, "iou", True),
        },
    )


def nms_cases(generator: torch.Generator) -> None:
    """nms_rotated at three thresholds and nms_quadri (the CPU kernels take no labels)."""
    from mmcv.ops import nms_quadri, nms_rotated

    boxes = _rotated_boxes(generator, 300, 100)
    scores = torch.rand(300, generator=generator)
    tensors = {"boxes": boxes, "scores": scores}
    for threshold in (0.1, 0.3, 0.6):
        dets, keep = nms_rotated(boxes, scores, threshold)
        tensors[f"keep_{threshold}"] = keep
        tensors[f"dets_{threshold}"] = dets
    save_case(FAMILY, "nms_rotated", tensors)

    quads = _rectangles_as_quadrilaterals(generator, 200, 100)
    scores = torch.rand(200, generator=generator)
    dets, keep = nms_quadri(quads, scores, 0.3)
    save_case(FAMILY, "nms_quadri", {"boxes": quads, "scores": scores, "dets": dets, "keep": keep})


def roi_align_rotated_cases(generator: torch.Generator) -> None:
    """roi_align_rotated forward and input gradient, every aligned / clockwise / sampling."""
    from mmcv.ops import roi_align_rotated

    features = torch.rand(2, 3, 12, 14, generator=generator, dtype=torch.float64)
    rois = torch.cat(
        [
            torch.tensor([[0.0], [1.0], [0.0], [1.0], [0.0], [1.0]], dtype=torch.float64),
            torch.rand(6, 2, generator=generator, dtype=torch.float64) * 28,
            torch.rand(6, 2, generator=generator, dtype=torch.float64) * 14 + 0.5,
            (torch.rand(6, 1, generator=generator, dtype=torch.float64) - 0.5) * 2 * math.pi,
        ],
        dim=1,
    )
    tensors = {"features": features, "rois": rois}
    for aligned in (True, False):
        for clockwise in (True, False):
            for sampling_ratio in (0, 2):
                key = f"{int(aligned)}{int(clockwise)}{sampling_ratio}"
                x = features.clone().requires_grad_(True)
                out = roi_align_rotated(x, rois, (3, 2), 0.5, sampling_ratio, aligned, clockwise)
                grad_out = torch.rand(out.shape, generator=generator, dtype=torch.float64)
                out.backward(grad_out)
                tensors[f"out_{key}"] = out
                tensors[f"grad_out_{key}"] = grad_out
                tensors[f"grad_{key}"] = x.grad
    save_case(FAMILY, "roi_align_rotated", tensors)


def feature_align_cases(generator: torch.Generator) -> None:
    """rotated_feature_align (1 and 5 points) and active_rotated_filter, with gradients."""
    from mmcv.ops import active_rotated_filter, rotated_feature_align

    features = torch.rand(2, 3, 8, 9, generator=generator)
    boxes = torch.rand(2, 8, 9, 5, generator=generator)
    boxes[..., :2] = boxes[..., :2] * 80 - 4
    boxes[..., 2:4] = boxes[..., 2:4] * 40 + 1
    boxes[..., 4] = (boxes[..., 4] - 0.5) * 2 * math.pi
    tensors = {"features": features, "boxes": boxes}
    for points in (1, 5):
        x = features.clone().requires_grad_(True)
        out = rotated_feature_align(x, boxes, 1 / 8, points)
        grad_out = torch.rand(out.shape, generator=generator)
        out.backward(grad_out)
        tensors[f"out_{points}"] = out
        tensors[f"grad_out_{points}"] = grad_out
        tensors[f"grad_{points}"] = x.grad
    save_case(FAMILY, "rotated_feature_align", tensors)

    weights = torch.rand(4, 2, 8, 3, 3, generator=generator)
    entries = 8 * 3 * 3
    indices = torch.stack([torch.randperm(entries, generator=generator) for _ in range(8)], -1)
    indices = (indices + 1).reshape(8, 3, 3, 8).int()
    x = weights.clone().requires_grad_(True)
    out = active_rotated_filter(x, indices)
    grad_out = torch.rand(out.shape, generator=generator)
    out.backward(grad_out)
    save_case(
        FAMILY,
        "active_rotated_filter",
        {
            "input": weights,
            "indices": indices,
            "out": out,
            "grad_out": grad_out,
            "grad": x.grad,
        },
    )


def main() -> None:
    """Generate every case of the family."""
    generator = torch.Generator().manual_seed(34)
    iou_cases(generator)
    nms_cases(generator)
    roi_align_rotated_cases(generator)
    feature_align_cases(generator)


if __name__ == "__main__":
    main()
