"""Benchmark mmpar.ops' wrappers against calling torchvision's kernels directly, in one run.

Usage:
    python benchmarks/ops_vs_torchvision.py [--repeats 21] [--threads 1]

For each op mmpar.ops builds on torchvision (nms, batched_nms, roi_align, roi_pool,
deform_conv2d, modulated_deform_conv2d), both calls get the same inputs (CPU, float32, sizes
of a small detector) and are timed in alternating blocks, so load changes hit both alike.
Prints per op the median ms of each and the median of the per-round ratios (goal <= 1.1).
The wrappers do what mmcv's API promises on top of the kernel: NMS returns ``(dets, keep)``
with the scores appended, batched_nms applies mmcv's class offsets and split rule, RoIPool
converts boxes to mmcv's span, the deformable convolutions check their group arguments.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torchvision

from mmpar.ops import RoIAlign, RoIPool, batched_nms, deform_conv2d, modulated_deform_conv2d, nms


def _boxes(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    xy = torch.rand(n, 2, generator=g) * 400
    wh = torch.rand(n, 2, generator=g) * 100 + 4
    return torch.cat([xy, xy + wh], 1), torch.rand(n, generator=g)


def cases() -> dict[str, tuple[Callable[[], object], Callable[[], object], int]]:
    """Per op: (mmpar call, torchvision call, calls per timed block)."""
    g = torch.Generator().manual_seed(0)
    tv = torchvision.ops
    boxes, scores = _boxes(3000, g)
    idxs = torch.randint(0, 20, (3000,), generator=g)
    cfg = {"type": "nms", "iou_threshold": 0.5}
    feat = torch.rand(2, 64, 50, 68, generator=g)
    roi_boxes, _ = _boxes(256, g)
    rois = torch.cat([torch.randint(0, 2, (256, 1), generator=g).float(), roi_boxes], 1)
    align = RoIAlign(7, 1 / 8, 0, aligned=True)
    pool = RoIPool(7, 1 / 8)
    x = torch.rand(2, 32, 32, 32, generator=g)
    weight = torch.randn(32, 32, 3, 3, generator=g) * 0.1
    offset = torch.randn(2, 18, 32, 32, generator=g)
    mask = torch.rand(2, 9, 32, 32, generator=g)
    bias = torch.zeros(32)
    return {
        "nms (3000 boxes)": (
            lambda: nms(boxes, scores, 0.5),
            lambda: tv.nms(boxes, scores, 0.5),
            10,
        ),
        "batched_nms (3000 boxes, 20 classes)": (
            lambda: batched_nms(boxes, scores, idxs, cfg),
            lambda: tv.batched_nms(boxes, scores, idxs, 0.5),
            10,
        ),
        "RoIAlign (256 RoIs, 64x50x68, 7x7)": (
            lambda: align(feat, rois),
            lambda: tv.roi_align(feat, rois, (7, 7), 1 / 8, 0, True),
            5,
        ),
        "RoIPool (256 RoIs, 64x50x68, 7x7)": (
            lambda: pool(feat, rois),
            lambda: tv.roi_pool(feat, rois, (7, 7), 1 / 8),
            5,
        ),
        "deform_conv2d (2x32x32x32, 3x3)": (
            lambda: deform_conv2d(x, offset, weight, 1, 1),
            lambda: tv.deform_conv2d(x, offset, weight, padding=(1, 1)),
            3,
        ),
        "modulated_deform_conv2d (same, mask)": (
            lambda: modulated_deform_conv2d(x, offset, mask, weight, bias, 1, 1),
            lambda: tv.deform_conv2d(x, offset, weight, bias, padding=(1, 1), mask=mask),
            3,
        ),
    }


def _block(fn: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main() -> None:
    """Run every case and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21, help="timed rounds per op")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print("| op | mmpar.ops ms | torchvision ms | ratio (median of rounds) |")
    print("|---|---:|---:|---:|")
    with torch.no_grad():
        for name, (ours, theirs, calls) in cases().items():
            ours(), theirs()  # warm-up
            ours_t, theirs_t, ratios = [], [], []
            for r in range(args.repeats):
                # Alternate which goes first so neither always follows the other.
                pair = [(ours, ours_t), (theirs, theirs_t)]
                for fn, times in pair if r % 2 == 0 else pair[::-1]:
                    times.append(_block(fn, calls))
                ratios.append(ours_t[-1] / theirs_t[-1])
            print(
                f"| {name} | {statistics.median(ours_t) * 1e3:.3f} | "
                f"{statistics.median(theirs_t) * 1e3:.3f} | {statistics.median(ratios):.3f} |"
            )


if __name__ == "__main__":
    main()
