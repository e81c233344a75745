"""Time the rotated-box ops at realistic sizes, and against mmcv-full's CPU kernels if present.

Usage:
    python benchmarks/ops_rotated.py [--repeats 5] [--threads 1]

Run with a Python where ``import mmcv.ops`` is a CPU build of mmcv-full 1.7.2 to get the
ratio against its kernels in the same run (the same inputs, each op timed right after ours);
otherwise prints mmpar's times only. Sizes: 2,000 rotated boxes in a 1024 x 1024 image
(DOTA-like: sides 8-100 px) for box_iou_rotated and nms_rotated, packed into 300 x 300 for a
crowded NMS, and as quadrilaterals for box_iou_quadri; 512 RoIs on a 256-channel 128 x 128
map for roi_align_rotated (7 x 7, sampling 2); one anchor per pixel of that map for
rotated_feature_align (5 points); S2ANet's 3 x 3 filters with 8 orientations for
active_rotated_filter.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import torch
from timing import median_ms  # benchmarks/timing.py, beside this script

import mmpar.ops as ours
from mmpar.ops._polygon import rotated_box_corners


def cases(ops: object) -> dict[str, Callable[[], object]]:
    """Per op: a call of ``ops``' version (mmpar.ops or mmcv.ops) on fixed inputs."""
    g = torch.Generator().manual_seed(0)
    boxes = torch.rand(2000, 5, generator=g)
    boxes[:, :2] *= 1024
    boxes[:, 2:4] = boxes[:, 2:4] * 92 + 8
    boxes[:, 4] = (boxes[:, 4] - 0.5) * math.pi
    scores = torch.rand(2000, generator=g)
    # Proposals crowd around objects: the same boxes packed into a 300 x 300 region.
    clustered = boxes * torch.tensor([300 / 1024, 300 / 1024, 0.6, 0.6, 1])
    features = torch.rand(2, 256, 128, 128, generator=g)
    # One refined anchor per feature pixel (R3Det), in image pixels (stride 8).
    anchors = torch.rand(2, 128, 128, 5, generator=g) * torch.tensor([1024, 1024, 100, 100, 3.0])
    quads = rotated_box_corners(boxes).flatten(1)
    rois = torch.cat(
        [
            torch.randint(0, 2, (512, 1), generator=g).float(),
            torch.rand(512, 2, generator=g) * 1024,
            torch.rand(512, 2, generator=g) * 92 + 8,
            (torch.rand(512, 1, generator=g) - 0.5) * math.pi,
        ],
        1,
    )
    weights = torch.rand(64, 32, 8, 3, 3, generator=g)
    indices = torch.stack([torch.randperm(72, generator=g) for _ in range(8)], -1)
    indices = (indices + 1).reshape(8, 3, 3, 8).int()
    return {
        "box_iou_rotated 2k x 2k": lambda: ops.box_iou_rotated(boxes, boxes),
        "nms_rotated 2k (thr 0.1)": lambda: ops.nms_rotated(boxes, scores, 0.1),
        "nms_rotated 2k clustered": lambda: ops.nms_rotated(clustered, scores, 0.3),
        "box_iou_quadri 2k x 2k": lambda: ops.box_iou_quadri(quads, quads),
        "roi_align_rotated 512 RoIs": lambda: ops.roi_align_rotated(
            features, rois, (7, 7), 1 / 8, 2, True, False
        ),
        "rotated_feature_align 5 pts": lambda: ops.rotated_feature_align(
            features, anchors, 1 / 8, 5
        ),
        "active_rotated_filter 64x32": lambda: ops.active_rotated_filter(weights, indices),
    }


def main() -> None:
    """Print per op mmpar's median ms, mmcv-full's and the ratio when mmcv-full imports."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    try:
        import mmcv.ops as reference
    except ImportError:
        reference = None
    theirs = cases(reference) if reference is not None else {}
    for name, call in cases(ours).items():
        mine = median_ms(call, args.repeats)
        if name in theirs:
            base = median_ms(theirs[name], args.repeats)
            print(
                f"{name:30s} mmpar {mine:9.1f} ms  mmcv-full {base:9.1f} ms  "
                f"ratio {mine / base:5.2f}"
            )
        else:
            print(f"{name:30s} mmpar {mine:9.1f} ms")


if __name__ == "__main__":
    main()
