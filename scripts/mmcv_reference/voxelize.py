"""Reference outputs of mmcv-full's CPU voxelization kernels (hard and dynamic).

Run from the repository root with a Python whose ``mmcv.ops`` is a real mmcv-full 1.7.2 build:
``python -m scripts.mmcv_reference.voxelize``. Writes tests/data/mmcv_reference/voxelize/.
"""

from __future__ import annotations

import torch
from mmcv.ops import voxelization

from scripts.mmcv_reference import save_case

FAMILY = "voxelize"
VOXEL = [0.3, 0.4, 0.5]
RANGE = [-1.0, -1.5, -1.0, 2.0, 2.5, 1.0]


def _points(n: int, seed: int, dtype: torch.dtype) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    lo, hi = torch.tensor(RANGE[:3]), torch.tensor(RANGE[3:])
    # Some points outside the range, and some exactly on voxel borders (multiples of the size).
    xyz = torch.rand(n, 3, generator=gen) * (hi - lo) * 1.2 + lo - 0.1 * (hi - lo)
    on_grid = torch.randint(0, 6, (n // 4, 3), generator=gen) * torch.tensor(VOXEL) + lo
    xyz[: n // 4] = on_grid
    feats = torch.rand(n, 2, generator=gen)
    return torch.cat([xyz, feats], 1).to(dtype)


def main() -> None:
    """Write one case per configuration."""
    configs = {
        "hard_roomy": (12, 20000, torch.float32, 0),
        "hard_few_points": (3, 20000, torch.float32, 1),
        "hard_few_voxels": (4, 25, torch.float32, 2),
        "hard_float64": (2, 40, torch.float64, 3),
    }
    for case, (max_points, max_voxels, dtype, seed) in configs.items():
        points = _points(600, seed, dtype)
        voxels, coors, num = voxelization(points, VOXEL, RANGE, max_points, max_voxels)
        save_case(FAMILY, case, {
            "points": points,
            "max_points": torch.tensor(max_points),
            "max_voxels": torch.tensor(max_voxels),
            # Clones: mmcv's outputs are slices of (max_voxels, ...) buffers, which torch.save
            # would store whole.
            "voxels": voxels.clone(),
            "coors": coors.clone(),
            "num_points": num.clone(),
        })  # fmt: skip
    points = _points(600, 4, torch.float32)
    save_case(FAMILY, "dynamic", {
        "points": points,
        "coors": voxelization(points, VOXEL, RANGE, -1),
    })  # fmt: skip


if __name__ == "__main__":
    main()
