"""Voxelization (hard and dynamic) against a per-point loop that follows mmcv-full's CPU kernel."""

import math

import pytest
import torch
from helpers.mmcv_reference import load_reference, reference_cases

from mmpar.ops import Voxelization, voxelization

VOXEL = [0.5, 0.5, 1.0]
RANGE = [0.0, -1.0, -1.0, 3.0, 2.0, 1.0]


def _points(n=400, seed=0, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    xyz = torch.rand(n, 3, generator=gen) * torch.tensor([4.0, 4.0, 3.0]) - torch.tensor(
        [0.5, 1.5, 1.5]
    )
    return torch.cat([xyz, torch.rand(n, 1, generator=gen)], 1).to(dtype)


def _loop_voxelize(points, voxel, bounds, max_points, max_voxels):
    """mmcv's CPU kernel, one point at a time (float32 arithmetic as in its C++)."""
    grid = [round(float(torch.tensor(bounds[3 + i] - bounds[i]) / voxel[i])) for i in range(3)]
    coors, voxels, counts, seen = [], [], [], {}
    point_coors = []
    for p in points:
        c = [
            math.floor(float((p[j] - torch.tensor(bounds[j])) / torch.tensor(voxel[j])))
            for j in range(3)
        ]
        if any(c[j] < 0 or c[j] >= grid[j] for j in range(3)):
            point_coors.append([-1, -1, -1])
            continue
        zyx = c[::-1]
        point_coors.append(zyx)
        key = tuple(zyx)
        if key not in seen:
            if len(coors) >= max_voxels:
                continue
            seen[key] = len(coors)
            coors.append(zyx)
            voxels.append([])
        v = seen[key]
        if len(voxels[v]) < max_points:
            voxels[v].append(p)
    out = torch.zeros(len(coors), max_points, points.size(1), dtype=points.dtype)
    for v, pts in enumerate(voxels):
        counts.append(len(pts))
        for i, p in enumerate(pts):
            out[v, i] = p
    return (
        out,
        torch.tensor(coors, dtype=torch.int32).reshape(-1, 3),
        torch.tensor(counts, dtype=torch.int32),
        torch.tensor(point_coors, dtype=torch.int32),
    )


@pytest.mark.parametrize(
    ("max_points", "max_voxels", "dtype"),
    [
        (35, 20000, torch.float32),
        (3, 20000, torch.float32),
        (5, 20, torch.float32),
        (2, 7, torch.float64),
    ],
)
def test_hard_voxelization_matches_the_kernel_loop(max_points, max_voxels, dtype):
    points = _points(dtype=dtype)
    voxels, coors, num = voxelization(points, VOXEL, RANGE, max_points, max_voxels)
    ref_voxels, ref_coors, ref_num, _ = _loop_voxelize(points, VOXEL, RANGE, max_points, max_voxels)
    assert coors.dtype == num.dtype == torch.int32 and voxels.dtype == dtype
    assert torch.equal(coors, ref_coors) and torch.equal(num, ref_num)
    assert torch.equal(voxels, ref_voxels)


@pytest.mark.parametrize(
    ("voxel", "max_points", "repeat"),
    [
        # Crowded voxels: most points are ranked by the stable sort after the peeling rounds.
        ([1.5, 1.5, 2.0], 150, 1),
        # A grid of ~10^9 cells: occupied cells are compacted with torch.unique first.
        ([0.003, 0.003, 0.002], 4, 3),
    ],
)
def test_hard_voxelization_crowded_and_huge_grids_match_the_kernel_loop(voxel, max_points, repeat):
    points = _points(n=300).repeat(repeat, 1)
    got = voxelization(points, voxel, RANGE, max_points, 20000)
    ref = _loop_voxelize(points, voxel, RANGE, max_points, 20000)[:3]
    assert all(torch.equal(a, b) for a, b in zip(got, ref))


def test_dynamic_voxelization_marks_points_outside_with_minus_one():
    points = _points()
    coors = voxelization(points, VOXEL, RANGE, -1)
    ref = _loop_voxelize(points, VOXEL, RANGE, 1, 1)[3]
    assert coors.dtype == torch.int32 and torch.equal(coors, ref)
    assert (coors == -1).all(1).any() and (coors >= 0).all(1).any()
    assert torch.equal(voxelization(points, VOXEL, RANGE, 10, -1), coors)


def test_module_uses_training_and_testing_max_voxels():
    points = _points()
    layer = Voxelization(VOXEL, RANGE, 4, max_voxels=(5, 9))
    assert layer(points)[0].shape == (5, 4, 4)
    assert layer.eval()(points)[0].shape == (9, 4, 4)
    assert layer.grid_size.tolist() == [6, 6, 2] and layer.pcd_shape[0] == 1
    assert repr(layer) == (
        "Voxelization(voxel_size=[0.5, 0.5, 1.0], point_cloud_range=[0.0, -1.0, -1.0, 3.0, 2.0, "
        "1.0], max_num_points=4, max_voxels=(5, 9), deterministic=True)"
    )


def test_empty_and_nan_points():
    voxels, coors, num = voxelization(torch.zeros(0, 4), VOXEL, RANGE, 5, 10)
    assert voxels.shape == (0, 5, 4) and coors.shape == (0, 3) and num.shape == (0,)
    nan = torch.tensor([[float("nan"), 0.2, 0.1], [0.2, 0.2, 0.1]])
    assert voxelization(nan, VOXEL, RANGE, -1).tolist() == [[-1, -1, -1], [1, 2, 0]]


@pytest.mark.parametrize(
    ("points", "size", "error"),
    [
        (torch.zeros(4, 2), VOXEL, ValueError),
        (torch.zeros(4, 3, dtype=torch.long), VOXEL, TypeError),
        (torch.zeros(4, 3), [0.5, 0.5], ValueError),
    ],
)
def test_bad_input_names_the_op(points, size, error):
    with pytest.raises(error, match="voxelization"):
        voxelization(points, size, RANGE, 5, 10)


@pytest.mark.parametrize("case", reference_cases("voxelize"))
def test_equals_mmcv_full_cpu_kernel(case):
    ref = load_reference("voxelize", case)
    voxel, bounds = [0.3, 0.4, 0.5], [-1.0, -1.5, -1.0, 2.0, 2.5, 1.0]
    if case == "dynamic":
        assert torch.equal(voxelization(ref["points"], voxel, bounds, -1), ref["coors"])
        return
    voxels, coors, num = voxelization(
        ref["points"], voxel, bounds, int(ref["max_points"]), int(ref["max_voxels"])
    )
    assert torch.equal(coors, ref["coors"]) and torch.equal(num, ref["num_points"])
    assert torch.equal(voxels, ref["voxels"])
