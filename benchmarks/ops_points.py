"""Time the point-cloud ops at realistic sizes (and against mmcv-full where it has CPU kernels).

Usage:
    python benchmarks/ops_points.py [--repeats 5] [--threads 1] [--only NAME]

Sizes of a PointNet++ / PartA2 style detector: 16k points, FPS to 4096 and 1024, ball query
and kNN on 1024 centres, 2000 rotated boxes for the BEV overlaps and NMS, 128 RoIs for the 3D
RoI pooling. Prints the median ms per op. When ``mmcv.ops`` imports (a CPU build of mmcv-full
1.7.2), the ops it has a CPU kernel for (``points_in_boxes_cpu``, ``boxes_iou_bev`` and
``nms_bev`` through ``box_iou_rotated`` / ``nms_rotated``) are also timed on mmcv, alternating
with ours, with the median of the per-round ratios (goal <= 1.5). mmcv's other point-cloud
ops are CUDA-only, so only our time is shown for them.
"""

from __future__ import annotations

import argparse
import importlib
import math
import statistics
import time
import warnings
from collections.abc import Callable

import torch

import mmpar.ops as ours


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _scene_boxes(n: int, g: torch.Generator) -> torch.Tensor:
    """``(n, 7)`` car-sized boxes spread over a 70 m x 80 m scene, some overlapping."""
    centre = torch.rand(n, 3, generator=g) * torch.tensor([70.0, 80.0, 2.0]) - torch.tensor(
        [0.0, 40.0, 1.0]
    )
    size = torch.tensor([3.9, 1.6, 1.56]) * (0.8 + 0.4 * torch.rand(n, 3, generator=g))
    angle = (torch.rand(n, 1, generator=g) * 2 - 1) * math.pi
    return torch.cat([centre, size, angle], 1)


def _xyxyr(boxes: torch.Tensor) -> torch.Tensor:
    half = boxes[:, 3:5] / 2
    return torch.cat([boxes[:, :2] - half, boxes[:, :2] + half, boxes[:, 6:7]], 1)


def cases(mmcv_ops: object | None) -> dict[str, tuple[Callable[[], object], Callable | None]]:
    """Per op: (our call, mmcv-full's CPU call or None)."""
    g = torch.Generator().manual_seed(0)
    pts = torch.rand(1, 16384, 3, generator=g)
    pts4k = pts[:, :4096].contiguous()
    centres = pts[:, :1024].contiguous()
    feats = torch.rand(1, 64, 16384, generator=g)
    feats4k = torch.rand(1, 128, 4096, generator=g)
    dist4k = torch.cdist(pts4k, pts4k) ** 2
    idx = ours.ball_query(0, 0.1, 32, pts, centres)
    nn_dist, nn_idx = ours.three_nn(pts, pts4k)
    weight = 1 / (nn_dist + 1e-8)
    weight = weight / weight.sum(2, keepdim=True)
    scores = torch.rand(1, 1024, 16, 8, generator=g)
    point_feats = torch.rand(1, 4096, 8, 64, generator=g)
    knn_idx = ours.knn(16, pts4k, centres).transpose(1, 2).long().contiguous()
    boxes = _scene_boxes(2000, g)
    box_scores = torch.rand(2000, generator=g)
    bev = _xyxyr(boxes)
    rois = _scene_boxes(128, g)
    roi_pts = torch.cat(
        [
            torch.rand(16384, 2, generator=g) * torch.tensor([70.0, 80.0])
            - torch.tensor([0.0, 40.0]),
            torch.rand(16384, 1, generator=g) * 2 - 1,
        ],
        1,
    )
    roi_feats = torch.rand(16384, 16, generator=g)
    box_pts = roi_pts.unsqueeze(0)
    some_boxes = _scene_boxes(100, g).unsqueeze(0)
    group = ours.QueryAndGroup(0.1, 32)
    roiaware = ours.RoIAwarePool3d(14, 128, "max")
    roipoint = ours.RoIPointPool3d(512)
    table: dict[str, tuple[Callable[[], object], Callable | None]] = {
        "furthest_point_sample 16384 -> 4096": (
            lambda: ours.furthest_point_sample(pts, 4096),
            None,
        ),
        "furthest_point_sample 4096 -> 1024": (
            lambda: ours.furthest_point_sample(pts4k, 1024),
            None,
        ),
        "furthest_point_sample_with_dist 4096 -> 1024": (
            lambda: ours.furthest_point_sample_with_dist(dist4k, 1024),
            None,
        ),
        "ball_query 16384 pts, 1024 centres, 32": (
            lambda: ours.ball_query(0, 0.1, 32, pts, centres),
            None,
        ),
        "knn k=16, 16384 pts, 1024 centres": (lambda: ours.knn(16, pts, centres), None),
        "three_nn 16384 -> 4096": (lambda: ours.three_nn(pts, pts4k), None),
        "three_interpolate 128 ch, 4096 -> 16384": (
            lambda: ours.three_interpolate(feats4k, nn_idx, weight),
            None,
        ),
        "gather_points 64 ch, 16384 -> 4096": (
            lambda: ours.gather_points(feats, nn_idx[:, :4096, 0].contiguous()),
            None,
        ),
        "grouping_operation 64 ch, 1024 x 32": (lambda: ours.grouping_operation(feats, idx), None),
        "QueryAndGroup 64 ch, 1024 x 32": (lambda: group(pts, centres, feats), None),
        "chamfer_distance 2 x 2048 vs 2048": (
            lambda: ours.chamfer_distance(
                pts[:, :4096, :2].reshape(2, 2048, 2), pts[:, 4096:8192, :2].reshape(2, 2048, 2)
            ),
            None,
        ),
        "assign_score_withk 1024 x 16, M=8, 64 out": (
            lambda: ours.assign_score_withk(scores, point_feats, point_feats, knn_idx),
            None,
        ),
        "points_in_boxes_all 16384 pts, 100 boxes": (
            lambda: ours.points_in_boxes_all(box_pts, some_boxes),
            None,
        ),
        "points_in_boxes_part 16384 pts, 100 boxes": (
            lambda: ours.points_in_boxes_part(box_pts, some_boxes),
            None,
        ),
        "points_in_boxes_cpu 16384 pts, 100 boxes": (
            lambda: ours.points_in_boxes_cpu(box_pts, some_boxes),
            None if mmcv_ops is None else lambda: mmcv_ops.points_in_boxes_cpu(box_pts, some_boxes),
        ),
        "boxes_overlap_bev 2000 x 2000": (lambda: ours.boxes_overlap_bev(boxes, boxes), None),
        "boxes_iou3d 2000 x 2000": (lambda: ours.boxes_iou3d(boxes, boxes), None),
        "boxes_iou_bev 2000 x 2000": (
            lambda: ours.boxes_iou_bev(bev, bev),
            None if mmcv_ops is None else lambda: mmcv_ops.boxes_iou_bev(bev, bev),
        ),
        "nms3d 2000 boxes, 0.1": (lambda: ours.nms3d(boxes, box_scores, 0.1), None),
        "nms3d_normal 2000 boxes, 0.1": (lambda: ours.nms3d_normal(boxes, box_scores, 0.1), None),
        "nms_bev 2000 boxes, 0.1": (
            lambda: ours.nms_bev(bev, box_scores, 0.1),
            None if mmcv_ops is None else lambda: mmcv_ops.nms_bev(bev, box_scores, 0.1),
        ),
        "RoIAwarePool3d 128 RoIs, 14^3, 16384 pts, 16 ch": (
            lambda: roiaware(rois, roi_pts, roi_feats),
            None,
        ),
        "RoIPointPool3d 128 boxes, 512 samples, 16384 pts": (
            lambda: roipoint(box_pts, roi_feats.unsqueeze(0), rois.unsqueeze(0)),
            None,
        ),
    }
    return table


def main() -> None:
    """Run the benchmark and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", default=None, help="run the ops whose name contains this")
    parser.add_argument(
        "--mmcv-module",
        default="mmcv.ops",
        help="module with mmcv's points_in_boxes_cpu, boxes_iou_bev and nms_bev (mmcv.ops)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        mmcv_ops = importlib.import_module(args.mmcv_module)
    except ImportError:
        mmcv_ops = None
    print("| op | mmpar ms | mmcv-full CPU ms | ratio |\n|---|---:|---:|---:|")
    for name, (mine, theirs) in cases(mmcv_ops).items():
        if args.only and args.only not in name:
            continue
        mine()  # warm up
        if theirs is not None:
            theirs()
        ours_ms, theirs_ms, ratios = [], [], []
        for _ in range(args.repeats):
            ours_ms.append(_time(mine))
            if theirs is not None:
                theirs_ms.append(_time(theirs))
                ratios.append(ours_ms[-1] / theirs_ms[-1])
        mmcv_cell = f"{statistics.median(theirs_ms):.1f}" if theirs_ms else "CUDA only"
        ratio_cell = f"**{statistics.median(ratios):.2f}**" if ratios else "-"
        print(
            f"| {name} | {statistics.median(ours_ms):.1f} | {mmcv_cell} | {ratio_cell} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
