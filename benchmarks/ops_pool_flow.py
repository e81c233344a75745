"""Time Correlation, DeformRoIPool and PrRoIPool at realistic sizes (CUDA-only in mmcv-full).

Usage:
    python benchmarks/ops_pool_flow.py [--repeats 5] [--threads 1]

Sizes: PWC-Net's cost volume at its 1/4 level (2 images, 32 channels, 64 x 128, 81
displacements), and a two-stage detector's RoI head (512 RoIs, 256 channels, 7 x 7 bins on a
1/16-scale 50 x 68 map of an 800 x 1088 image). Prints the median ms of forward and of forward
plus backward per op. mmcv-full 1.7.2 has no CPU kernel for any of them, so there is nothing
of mmcv's to time on the CPU.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import torch
from timing import median_ms  # benchmarks/timing.py, beside this script

from mmpar.ops import Correlation, DeformRoIPoolPack, PrRoIPool, RoIAlign, deform_roi_pool


def _rois(count: int, g: torch.Generator) -> torch.Tensor:
    """``(count, 5)`` boxes of 32 to 512 pixels on two 800 x 1088 images."""
    size = 32 * 2 ** (torch.rand(count, 2, generator=g) * 4)
    corner = torch.rand(count, 2, generator=g) * (torch.tensor([1088.0, 800.0]) - size)
    batch = torch.randint(0, 2, (count, 1), generator=g).float()
    return torch.cat([batch, corner, corner + size], 1)


def cases() -> dict[str, Callable[[], object]]:
    """Per case name, a call to time."""
    g = torch.Generator().manual_seed(0)
    flow1 = torch.randn(2, 32, 64, 128, generator=g, requires_grad=True)
    flow2 = torch.randn(2, 32, 64, 128, generator=g, requires_grad=True)
    correlation = Correlation(max_displacement=4)
    feats = torch.randn(2, 256, 50, 68, generator=g, requires_grad=True)
    rois = _rois(512, g)
    deform = DeformRoIPoolPack(7, 256, spatial_scale=1 / 16, sampling_ratio=2)
    with torch.no_grad():  # offsets as after some training, not the zero initialisation
        deform.offset_fc[-1].weight.normal_(0, 1e-3, generator=g)
    offset = (torch.randn(512, 2, 7, 7, generator=g) * 0.1).requires_grad_()
    prroi = PrRoIPool(7, spatial_scale=1 / 16)
    # For scale: torchvision's RoIAlign on the same RoIs (DeformRoIPool without offsets).
    align = RoIAlign(7, spatial_scale=1 / 16, sampling_ratio=2)
    roi_rows = rois.clone().requires_grad_()

    def both(fn: Callable[[], torch.Tensor]) -> Callable[[], object]:
        return lambda: fn().sum().backward()

    return {
        "Correlation 2x32x64x128, r=4, forward": lambda: correlation(flow1, flow2),
        "Correlation 2x32x64x128, r=4, forward + backward": both(lambda: correlation(flow1, flow2)),
        "RoIAlign (torchvision) 512 RoIs, 256 ch, 7x7, forward + backward": both(
            lambda: align(feats, rois)
        ),
        "deform_roi_pool 512 RoIs, 256 ch, 7x7, forward + backward (input, offset)": both(
            lambda: deform_roi_pool(feats, rois, offset, 7, 1 / 16, 2)
        ),
        "DeformRoIPoolPack 512 RoIs, 256 ch, 7x7, forward": lambda: deform(feats, rois),
        "DeformRoIPoolPack 512 RoIs, 256 ch, 7x7, forward + backward": both(
            lambda: deform(feats, rois)
        ),
        "PrRoIPool 512 RoIs, 256 ch, 7x7, forward": lambda: prroi(feats, rois),
        "PrRoIPool 512 RoIs, 256 ch, 7x7, forward + backward (features, RoIs)": both(
            lambda: prroi(feats, roi_rows)
        ),
    }


def main() -> None:
    """Print a Markdown table of median times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print("| op | mmpar ms | mmcv-full CPU ms |")
    print("|---|---:|---:|")
    for name, call in cases().items():
        # The RoIAlign row is for scale (mmcv-full's CPU RoIAlign: benchmarks/ops_vs_mmcv_full.py).
        theirs = "-" if name.startswith("RoIAlign") else "CUDA only"
        print(f"| {name} | {median_ms(call, args.repeats):.1f} | {theirs} |", flush=True)


if __name__ == "__main__":
    main()
