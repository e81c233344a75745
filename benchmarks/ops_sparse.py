"""Benchmark voxelization, dynamic scatter and sparse convolution at point-cloud sizes.

Usage:
    python benchmarks/ops_sparse.py [--repeats 11] [--threads 1]

Sizes: 16k points in a KITTI-like range (voxelization hard and dynamic, dynamic scatter); a
SubMConv3d 16->16 and a strided SparseConv3d on ~20k active voxels (forward, and forward +
backward). Prints the median ms per op. Where the Python running it also imports a real
mmcv-full (``import mmcv.ops`` with its compiled CPU kernels), voxelization is timed against
mmcv's kernel in the same run, alternating, with the median ratio (goal <= 1.5); mmcv-full has
no CPU dispatch for dynamic scatter or sparse convolution.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from mmpar.ops import SparseConv3d, SparseConvTensor, SubMConv3d, dynamic_scatter, voxelization

VOXEL = [0.16, 0.16, 4.0]
RANGE = [0.0, -39.68, -3.0, 69.12, 39.68, 1.0]


def _points(n: int, g: torch.Generator) -> torch.Tensor:
    lo, hi = torch.tensor(RANGE[:3]), torch.tensor(RANGE[3:])
    xyz = torch.rand(n, 3, generator=g) * (hi - lo) * 1.05 + lo
    return torch.cat([xyz, torch.rand(n, 1, generator=g)], 1)


def _sparse_input(active: int, channels: int, g: torch.Generator) -> SparseConvTensor:
    shape = [41, 400, 352]
    flat = torch.randperm(shape[0] * shape[1] * shape[2], generator=g)[:active]
    z = flat // (shape[1] * shape[2])
    y = flat // shape[2] % shape[1]
    x = flat % shape[2]
    indices = torch.stack([torch.zeros_like(z), z, y, x], 1).int()
    return SparseConvTensor(torch.randn(active, channels, generator=g), indices, shape, 1)


def cases() -> dict[str, tuple[Callable[[], object], Callable[[], object] | None]]:
    """Per op: (mmpar call, mmcv-full call or None)."""
    g = torch.Generator().manual_seed(0)
    points = _points(16384, g)
    coors = voxelization(points, VOXEL, RANGE, -1)
    feats = torch.randn(16384, 16, generator=g)
    x = _sparse_input(20000, 16, g)
    subm = SubMConv3d(16, 16, 3, indice_key="subm")
    down = SparseConv3d(16, 32, 3, stride=2, padding=1)
    feats_grad = x.features.clone().requires_grad_(True)

    def subm_train() -> None:
        y = SparseConvTensor(feats_grad, x.indices, x.spatial_shape, 1)
        subm(y).features.sum().backward()

    try:
        from mmcv.ops import voxelization as mmcv_voxelization
    except ImportError:
        mmcv_voxelization = None
    ref = mmcv_voxelization
    return {
        "voxelization hard (16k points, max 32/20000)": (
            lambda: voxelization(points, VOXEL, RANGE, 32, 20000),
            ref and (lambda: ref(points, VOXEL, RANGE, 32, 20000)),
        ),
        "voxelization dynamic (16k points)": (
            lambda: voxelization(points, VOXEL, RANGE, -1),
            ref and (lambda: ref(points, VOXEL, RANGE, -1)),
        ),
        "dynamic_scatter mean (16k points, 16 ch)": (
            lambda: dynamic_scatter(feats, coors, "mean"),
            None,
        ),
        "SubMConv3d 16->16 k3 (20k voxels), rulebook + forward": (
            lambda: subm(SparseConvTensor(x.features, x.indices, x.spatial_shape, 1)),
            None,
        ),
        "SubMConv3d 16->16 k3 (20k voxels), forward + backward": (subm_train, None),
        "SparseConv3d 16->32 k3 s2 (20k voxels), forward": (
            lambda: down(SparseConvTensor(x.features, x.indices, x.spatial_shape, 1)),
            None,
        ),
    }


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    """Time every case and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print("| op | mmpar ms | mmcv-full ms | ratio |\n|---|---|---|---|")
    for name, (ours, theirs) in cases().items():
        ours()
        if theirs:
            theirs()
        mine, ref, ratios = [], [], []
        for _ in range(args.repeats):
            mine.append(_time(ours))
            if theirs:
                ref.append(_time(theirs))
                ratios.append(mine[-1] / ref[-1])
        ref_ms = f"{statistics.median(ref):.2f}" if ref else "-"
        ratio = f"{statistics.median(ratios):.2f}" if ratios else "-"
        print(f"| {name} | {statistics.median(mine):.2f} | {ref_ms} | {ratio} |")


if __name__ == "__main__":
    main()
