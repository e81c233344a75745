"""mmcv-full's autograd Function classes called as downstream code calls them (``.apply``).

Also the pure-PyTorch steps of mmcv's diff_iou_rotated (its vertex sort is CUDA-only, so the
steps around it are stored: crossings, corners inside, candidate vertices, shoelace area).
Run: ``python -m scripts.mmcv_reference.autograd_functions`` in a Python with mmcv-full's
CPU build.
"""

from __future__ import annotations

import torch
from mmcv.ops import diff_iou_rotated
from mmcv.ops.nms import NMSop, SoftNMSop
from mmcv.ops.roi_align import RoIAlignFunction
from mmcv.ops.roi_align_rotated import RoIAlignRotatedFunction

from scripts.mmcv_reference import save_case

FAMILY = "autograd_functions"


def _roi_functions(g: torch.Generator) -> None:
    x = torch.randn(2, 3, 9, 8, generator=g, requires_grad=True)
    rois = torch.tensor([[0, 1.0, 1.2, 6.3, 5.1], [1, 0.5, 2.0, 7.0, 7.5], [0, 3, 3, 3.5, 8]])
    # mmcv's positional call, defaults after spatial_scale: sampling_ratio 0, 'avg', aligned.
    out = RoIAlignFunction.apply(x, rois, (2, 3), 0.8)
    grad_out = torch.randn(out.shape, generator=g)
    out.backward(grad_out)
    save_case(
        FAMILY,
        "roi_align_function",
        {"x": x, "rois": rois, "out": out, "grad_out": grad_out, "grad_x": x.grad},
    )
    x = torch.randn(1, 2, 8, 8, generator=g, requires_grad=True)
    rois = torch.tensor([[0, 4.0, 4.0, 5.0, 3.0, 0.4], [0, 3.0, 5.0, 4.0, 2.0, -1.0]])
    out = RoIAlignRotatedFunction.apply(x, rois, 2, 1.0, 2, True, True)
    grad_out = torch.randn(out.shape, generator=g)
    out.backward(grad_out)
    save_case(
        FAMILY,
        "roi_align_rotated_function",
        {"x": x, "rois": rois, "out": out, "grad_out": grad_out, "grad_x": x.grad},
    )


def _nms_functions(g: torch.Generator) -> None:
    xy = torch.rand(30, 2, generator=g) * 20
    boxes = torch.cat([xy, xy + torch.rand(30, 2, generator=g) * 10 + 1], 1)
    scores = torch.rand(30, generator=g)
    inds = NMSop.apply(boxes, scores, 0.4, 0, 0.2, 10)
    tensors = {"boxes": boxes, "scores": scores, "nms_inds": inds}
    for code in (0, 1, 2):
        dets, kept = SoftNMSop.apply(boxes, scores, 0.3, 0.5, 0.05, code, 0)
        # Only the kept rows: the rest of mmcv's (N, 5) buffer is uninitialised memory.
        tensors[f"soft_dets_{code}"] = dets[: kept.numel()]
        tensors[f"soft_inds_{code}"] = kept
    save_case(FAMILY, "nms_functions", tensors)


def _diff_iou_steps(g: torch.Generator) -> None:
    n = 20
    box1 = torch.cat(
        [torch.rand(1, n, 2, generator=g) * 4, torch.rand(1, n, 2, generator=g) * 3 + 0.5], -1
    )
    box1 = torch.cat([box1, torch.rand(1, n, 1, generator=g) * 6], -1).double()
    box2 = torch.cat(
        [torch.rand(1, n, 2, generator=g) * 4, torch.rand(1, n, 2, generator=g) * 3 + 0.5], -1
    )
    box2 = torch.cat([box2, torch.rand(1, n, 1, generator=g) * 6], -1).double()
    corners1 = diff_iou_rotated.box2corners(box1)
    corners2 = diff_iou_rotated.box2corners(box2)
    points, valid = diff_iou_rotated.box_intersection(corners1, corners2)
    c12, c21 = diff_iou_rotated.box_in_box(corners1, corners2)
    vertices, mask = diff_iou_rotated.build_vertices(corners1, corners2, c12, c21, points, valid)
    # An index list for calculate_area: the first three candidates, closed, then padding.
    idx = torch.tensor([0, 1, 2, 0, 8, 8, 8, 8, 8]).expand(1, n, 9).contiguous()
    area, polygon = diff_iou_rotated.calculate_area(idx, vertices)
    save_case(
        FAMILY,
        "diff_iou_steps",
        {
            "box1": box1,
            "box2": box2,
            "corners1": corners1,
            "corners2": corners2,
            "points": points,
            "valid": valid,
            "c12": c12,
            "c21": c21,
            "vertices": vertices,
            "mask": mask,
            "idx": idx,
            "area": area,
            "polygon": polygon,
        },
    )


def main() -> None:
    """Write this family's cases under tests/data/mmcv_reference/."""
    g = torch.Generator().manual_seed(0)
    _roi_functions(g)
    _nms_functions(g)
    _diff_iou_steps(g)


if __name__ == "__main__":
    main()
