"""The point-cloud ops on points (mmcv.ops: FPS, ball query, knn, three_nn, grouping, ...).

mmcv has only CUDA kernels for these: each is checked against an independent reference
(scipy.spatial's cKDTree, brute force, or a slow loop following mmcv's kernel) and, where
differentiable, with gradcheck in float64.
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from mmpar.ops import (
    GroupAll,
    PointsSampler,
    QueryAndGroup,
    assign_score_withk,
    ball_query,
    chamfer_distance,
    furthest_point_sample,
    furthest_point_sample_with_dist,
    gather_points,
    grouping_operation,
    knn,
    three_interpolate,
    three_nn,
)
from mmpar.ops.points_sampler import calc_square_dist, get_sampler_cls

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _cloud(batch, n, seed=0, dims=3):
    gen = torch.Generator().manual_seed(seed)
    return torch.rand(batch, n, dims, generator=gen)


def _fps_reference(dist_rows, n, m):
    """Brute-force FPS: ``dist_rows(i)`` gives the distances of every point to point i."""
    picked, nearest = [0], np.full(n, 1e10)
    for _ in range(1, m):
        nearest = np.minimum(nearest, dist_rows(picked[-1]))
        picked.append(int(np.argmax(nearest)))
    return picked


@pytest.mark.parametrize("device", DEVICES)
def test_furthest_point_sample_matches_brute_force(device):
    xyz = _cloud(2, 200)
    out = furthest_point_sample(xyz.to(device), 32)
    assert out.dtype == torch.int32 and out.shape == (2, 32) and out.device.type == device
    for b in range(2):
        pts = xyz[b].double().numpy()
        ref = _fps_reference(lambda i, p=pts: ((p - p[i]) ** 2).sum(1), 200, 32)
        assert out[b].tolist() == ref


def test_furthest_point_sample_with_dist_matches_brute_force():
    xyz = _cloud(2, 120, seed=1)
    dist = torch.cdist(xyz, xyz) ** 2
    out = furthest_point_sample_with_dist(dist, 20)
    for b in range(2):
        d = dist[b].numpy()
        assert out[b].tolist() == _fps_reference(lambda i, d=d: d[i], 120, 20)


def test_furthest_point_sample_edge_sizes_and_bad_input():
    xyz = _cloud(1, 4)
    assert furthest_point_sample(xyz, 0).shape == (1, 0)
    assert sorted(furthest_point_sample(xyz, 4)[0].tolist()) == [0, 1, 2, 3]
    with pytest.raises(AssertionError, match="furthest_point_sample.*points_xyz"):
        furthest_point_sample(torch.rand(1, 4, 2), 2)
    with pytest.raises(TypeError, match="floating"):
        furthest_point_sample(torch.ones(1, 4, 3, dtype=torch.long), 2)
    with pytest.raises(ValueError, match="num_points"):
        furthest_point_sample(xyz, -1)


def test_points_sampler_ranges_and_modes():
    xyz = _cloud(2, 60, seed=2)
    feats = torch.rand(2, 4, 60, generator=torch.Generator().manual_seed(3))
    sampler = PointsSampler([6, 5], ["D-FPS", "F-FPS"], [30, -1])
    out = sampler(xyz, feats)
    assert out.shape == (2, 11) and out.dtype == torch.int32
    assert torch.equal(out[:, :6], furthest_point_sample(xyz[:, :30].contiguous(), 6))
    both = torch.cat([xyz[:, 30:], feats[:, :, 30:].transpose(1, 2)], 2)
    expect = furthest_point_sample_with_dist(torch.cdist(both, both) ** 2, 5) + 30
    assert torch.equal(out[:, 6:], expect)
    fs = PointsSampler([4], ["FS"])(xyz, feats)
    assert fs.shape == (2, 8)
    assert len(sampler.samplers) == 2 and sampler.fp16_enabled is False
    with pytest.raises(KeyError, match="D-FPS"):
        get_sampler_cls("FPS")
    with pytest.raises(AssertionError):
        PointsSampler([4, 4], ["D-FPS"], [-1])
    with pytest.raises(AssertionError, match="should not be None"):
        PointsSampler([4], ["F-FPS"])(xyz, None)


def test_calc_square_dist_norm_and_square():
    a, b = _cloud(1, 5), _cloud(1, 6, seed=1)
    plain = torch.cdist(a, b)
    assert torch.allclose(calc_square_dist(a, b), plain / 3)
    assert torch.allclose(calc_square_dist(a, b, norm=False), plain**2, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_ball_query_matches_kdtree(device):
    xyz = _cloud(2, 400, seed=4)
    centres = xyz[:, ::20].contiguous()
    out = ball_query(0.05, 0.2, 8, xyz.to(device), centres.to(device)).cpu()
    assert out.dtype == torch.int32 and out.shape == (2, 20, 8)
    for b in range(2):
        pts = xyz[b].double().numpy()
        tree = cKDTree(pts)
        for c, hits in enumerate(tree.query_ball_point(centres[b].double().numpy(), 0.2)):
            d2 = ((pts[sorted(hits)] - pts[c * 20]) ** 2).sum(1)
            keep = [i for i, d in zip(sorted(hits), d2) if d == 0 or d >= 0.05**2][:8]
            expect = keep + [keep[0]] * (8 - len(keep)) if keep else [0] * 8
            assert out[b, c].tolist() == expect


def test_ball_query_empty_ball_and_stacked_form():
    xyz = torch.tensor([[[0.0, 0, 0], [1, 0, 0], [0.1, 0, 0]]])
    far = torch.tensor([[[5.0, 5, 5], [0.0, 0.0, 0.05]]])
    out = ball_query(0.0, 0.2, 3, xyz, far)
    assert out.tolist() == [[[0, 0, 0], [0, 2, 0]]]
    # Stacked: two samples of 3 and 2 points, local indices, -1 marks an empty ball.
    pts = torch.tensor([[0.0, 0, 0], [1, 0, 0], [0.1, 0, 0], [3, 3, 3], [3.1, 3, 3]])
    ctr = torch.tensor([[0.0, 0, 0], [9.0, 9, 9], [3.0, 3, 3]])
    stacked = ball_query(
        0,
        0.2,
        2,
        pts,
        ctr,
        torch.tensor([3, 2], dtype=torch.int32),
        torch.tensor([2, 1], dtype=torch.int32),
    )
    assert stacked.tolist() == [[0, 2], [-1, -1], [0, 1]]


def test_ball_query_bad_input():
    xyz = _cloud(1, 10)
    with pytest.raises(AssertionError, match="min_radius"):
        ball_query(0.3, 0.2, 4, xyz, xyz)
    with pytest.raises(AssertionError, match="batch size"):
        ball_query(0, 0.2, 4, xyz, _cloud(2, 3))
    with pytest.raises(ValueError, match="xyz_batch_cnt.*sum to the 10"):
        ball_query(
            0,
            0.2,
            4,
            xyz[0],
            xyz[0],
            torch.tensor([4], dtype=torch.int32),
            torch.tensor([10], dtype=torch.int32),
        )


@pytest.mark.parametrize("device", DEVICES)
def test_knn_matches_kdtree(device):
    xyz = _cloud(2, 300, seed=5)
    centres = _cloud(2, 17, seed=6)
    out = knn(6, xyz.to(device), centres.to(device)).cpu()
    assert out.dtype == torch.int32 and out.shape == (2, 6, 17)
    transposed = knn(6, xyz.transpose(1, 2).to(device), centres.transpose(1, 2).to(device), True)
    assert torch.equal(transposed.cpu(), out)
    for b in range(2):
        _, idx = cKDTree(xyz[b].double().numpy()).query(centres[b].double().numpy(), k=6)
        assert out[b].T.tolist() == idx.tolist()
    self_knn = knn(1, xyz)
    assert torch.equal(self_knn[:, 0], torch.arange(300, dtype=torch.int32).expand(2, 300))


def test_knn_more_neighbours_than_points_and_bad_k():
    xyz = _cloud(1, 3)
    out = knn(5, xyz, xyz[:, :1].contiguous())
    assert out[0, :, 0].tolist()[3:] == [0, 0] and sorted(out[0, :3, 0].tolist()) == [0, 1, 2]
    for bad in (0, 100):
        with pytest.raises(AssertionError, match="knn"):
            knn(bad, xyz)


@pytest.mark.parametrize("device", DEVICES)
def test_three_nn_matches_kdtree(device):
    source = _cloud(2, 150, seed=7)
    target = _cloud(2, 40, seed=8)
    dist, idx = three_nn(target.to(device), source.to(device))
    assert idx.dtype == torch.int32 and dist.shape == idx.shape == (2, 40, 3)
    for b in range(2):
        ref_d, ref_i = cKDTree(source[b].double().numpy()).query(target[b].double().numpy(), k=3)
        assert idx[b].cpu().tolist() == ref_i.tolist()
        np.testing.assert_allclose(dist[b].cpu().numpy(), ref_d, rtol=1e-5, atol=1e-6)


def test_three_nn_ties_take_the_lowest_index_and_few_sources():
    source = torch.tensor([[[1.0, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0]]])
    dist, idx = three_nn(torch.zeros(1, 1, 3), source)
    assert idx.tolist() == [[[0, 1, 2]]] and dist.tolist() == [[[1.0, 1.0, 1.0]]]
    dist, idx = three_nn(torch.zeros(1, 1, 3), source[:, :2])
    assert idx.tolist() == [[[0, 1, 0]]] and torch.isinf(dist[0, 0, 2])


def test_three_interpolate_values_and_gradient():
    gen = torch.Generator().manual_seed(9)
    feats = torch.rand(2, 3, 10, generator=gen, dtype=torch.float64)
    idx = torch.randint(0, 10, (2, 6, 3), generator=gen, dtype=torch.int32)
    weight = torch.rand(2, 6, 3, generator=gen, dtype=torch.float64)
    out = three_interpolate(feats, idx, weight)
    for b, c, n in [(0, 0, 0), (1, 2, 5), (1, 1, 3)]:
        expect = sum(weight[b, n, j] * feats[b, c, idx[b, n, j]] for j in range(3))
        assert torch.isclose(out[b, c, n], expect)
    feats.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda f: three_interpolate(f, idx, weight), (feats,))
    with pytest.raises(IndexError, match="three_interpolate.*indices"):
        three_interpolate(feats, idx + 10, weight)


def test_gather_points_values_gradient_and_bad_index():
    feats = torch.rand(2, 4, 9, dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([[0, 8, 8, 3], [1, 1, 2, 0]], dtype=torch.int32)
    out = gather_points(feats, idx)
    assert torch.equal(out[1, :, 2], feats[1, :, 2])
    assert torch.autograd.gradcheck(lambda f: gather_points(f, idx), (feats,))
    with pytest.raises(IndexError, match=r"gather_points.*outside \[0, 9\)"):
        gather_points(feats, idx + 1)
    with pytest.raises(IndexError):
        gather_points(feats, idx - 1)


def test_grouping_operation_batched_and_stacked():
    feats = torch.rand(2, 3, 7, dtype=torch.float64, requires_grad=True)
    idx = torch.randint(0, 7, (2, 4, 5), dtype=torch.int32)
    out = grouping_operation(feats, idx)
    assert out.shape == (2, 3, 4, 5)
    assert torch.equal(out[1, :, 2, 3], feats[1, :, idx[1, 2, 3]])
    assert torch.autograd.gradcheck(lambda f: grouping_operation(f, idx), (feats,))
    stacked = torch.rand(5, 2, dtype=torch.float64, requires_grad=True)  # samples of 3 and 2
    sidx = torch.tensor([[0, 2], [1, -1], [1, 0]], dtype=torch.int32)  # rows: 2 + 1
    fcnt, icnt = torch.tensor([3, 2], dtype=torch.int32), torch.tensor([2, 1], dtype=torch.int32)
    grouped = grouping_operation(stacked, sidx, fcnt, icnt)
    assert grouped.shape == (3, 2, 2)
    assert torch.equal(grouped[2, :, 0], stacked[4]) and torch.equal(
        grouped[1, :, 1], torch.zeros(2, dtype=torch.float64)
    )
    assert torch.autograd.gradcheck(lambda f: grouping_operation(f, sidx, fcnt, icnt), (stacked,))
    with pytest.raises(IndexError, match="grouping_operation"):
        grouping_operation(stacked, sidx + 2, fcnt, icnt)


def test_query_and_group_outputs():
    xyz = _cloud(2, 80, seed=10)
    centres = xyz[:, :6].contiguous()
    feats = torch.rand(2, 5, 80)
    group = QueryAndGroup(0.3, 8, return_grouped_xyz=True, return_grouped_idx=True)
    new, grouped_xyz, idx = group(xyz, centres, feats)
    assert new.shape == (2, 8, 6, 8) and grouped_xyz.shape == (2, 3, 6, 8)
    assert torch.equal(idx, ball_query(0, 0.3, 8, xyz, centres))
    assert torch.allclose(new[:, :3], grouped_xyz - centres.transpose(1, 2).unsqueeze(-1))
    assert torch.equal(new[:, 3:], grouping_operation(feats, idx))
    by_knn = QueryAndGroup(None, 4, use_xyz=False)(xyz, centres, feats)
    assert torch.equal(by_knn, grouping_operation(feats, knn(4, xyz, centres).transpose(1, 2)))
    normalized = QueryAndGroup(0.3, 8, normalize_xyz=True)(xyz, centres)
    assert torch.allclose(normalized * 0.3, new[:, :3])
    with pytest.raises(AssertionError):
        QueryAndGroup(None, 4, normalize_xyz=True)
    with pytest.raises(AssertionError):
        QueryAndGroup(0.3, 4, use_xyz=False)(xyz, centres)


def test_query_and_group_uniform_sample_keeps_the_distinct_points():
    xyz = _cloud(1, 60, seed=11)
    centres = xyz[:, :10].contiguous()
    group = QueryAndGroup(
        0.25, 16, uniform_sample=True, return_unique_cnt=True, return_grouped_idx=True
    )
    _, count, idx = group(xyz, centres)
    plain = ball_query(0, 0.25, 16, xyz, centres)
    for c in range(10):
        distinct = sorted(set(plain[0, c].tolist()))
        assert count[0, c] == len(distinct)
        assert idx[0, c, : len(distinct)].tolist() == distinct
        assert set(idx[0, c].tolist()) == set(distinct)
    with pytest.raises(AssertionError, match="uniform_sample"):
        QueryAndGroup(0.2, 4, return_unique_cnt=True)


def test_group_all():
    xyz, feats = _cloud(2, 7), torch.rand(2, 4, 7)
    out = GroupAll()(xyz, None, feats)
    assert out.shape == (2, 7, 1, 7) and torch.equal(out[:, :3, 0], xyz.transpose(1, 2))
    assert torch.equal(GroupAll(use_xyz=False)(xyz, None, feats), feats.unsqueeze(2))
    assert torch.equal(GroupAll()(xyz, None), xyz.transpose(1, 2).unsqueeze(2))


@pytest.mark.parametrize("device", DEVICES)
def test_chamfer_distance_matches_kdtree_and_gradient(device):
    a, b = _cloud(2, 50, seed=12, dims=2), _cloud(2, 30, seed=13, dims=2)
    dist1, dist2, idx1, idx2 = chamfer_distance(a.to(device), b.to(device))
    assert idx1.dtype == torch.int32 and dist1.shape == (2, 50) and dist2.shape == (2, 30)
    for k in range(2):
        ref_d, ref_i = cKDTree(b[k].double().numpy()).query(a[k].double().numpy())
        assert idx1[k].cpu().tolist() == ref_i.tolist()
        np.testing.assert_allclose(dist1[k].cpu().numpy(), ref_d**2, rtol=1e-5, atol=1e-7)
        assert idx2[k].cpu().tolist() == cKDTree(a[k].numpy()).query(b[k].numpy())[1].tolist()
    a64 = a[:, :8].double().requires_grad_(True)
    b64 = b[:, :6].double().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda x, y: chamfer_distance(x, y)[:2], (a64, b64))


def _assign_reference(scores, points, centres, knn_idx):
    """A slow loop following mmcv's assign_score_withk forward kernel."""
    batch, n0, m, o = points.shape
    _, n1, k, _ = scores.shape
    out = torch.zeros(batch, o, n1, k, dtype=points.dtype)
    for b in range(batch):
        for n in range(n1):
            cn = int(knn_idx[b, n, 0])
            for j in range(k):
                kn = int(knn_idx[b, n, j])
                if not 0 <= kn < n0:
                    continue
                for mm in range(m):
                    s = scores[b, n, j, mm]
                    out[b, :, n, j] += points[b, kn, mm] * s - centres[b, cn, mm] * s
    return out


def test_assign_score_withk_matches_kernel_loop_and_gradient():
    gen = torch.Generator().manual_seed(14)
    scores = torch.rand(2, 4, 3, 2, generator=gen, dtype=torch.float64)
    points = torch.rand(2, 9, 2, 5, generator=gen, dtype=torch.float64)
    centres = torch.rand(2, 9, 2, 5, generator=gen, dtype=torch.float64)
    knn_idx = torch.randint(0, 9, (2, 4, 3), generator=gen)
    knn_idx[1, 2, 1] = 9  # out of range: "no neighbour", output 0 there
    out = assign_score_withk(scores, points, centres, knn_idx)
    assert out.shape == (2, 5, 4, 3)
    assert torch.allclose(out, _assign_reference(scores, points, centres, knn_idx))
    assert torch.all(out[1, :, 2, 1] == 0)
    inputs = tuple(t.clone().requires_grad_(True) for t in (scores, points, centres))
    assert torch.autograd.gradcheck(
        lambda s, p, c: assign_score_withk(s, p, c, knn_idx, "sum"), inputs
    )
    with pytest.raises(KeyError, match="aggregate"):
        assign_score_withk(scores, points, centres, knn_idx, "mean")
    knn_idx[0, 0, 0] = -3
    with pytest.raises(IndexError, match="centre"):
        assign_score_withk(scores, points, centres, knn_idx)


_sizes = st.integers(0, 5)


@settings(max_examples=60, deadline=None)
@given(_sizes, _sizes, _sizes, st.integers(-3, 8), st.integers(1, 4))
def test_bad_or_empty_input_gives_a_result_or_one_clear_error(batch, n, m, index, k):
    """Generated sizes (zeros included) and indices: a well-shaped result or a documented error."""
    xyz = torch.rand(batch, n, 3)
    centres = torch.rand(batch, m, 3)
    feats = torch.rand(batch, 2, n)
    idx = torch.full((batch, m), index, dtype=torch.int32)
    try:
        assert gather_points(feats, idx).shape == (batch, 2, m)
        assert batch * m == 0 or 0 <= index < n
    except IndexError as err:
        assert "gather_points" in str(err) and not 0 <= index < n
    grouped = torch.full((batch, m, k), index, dtype=torch.int32)
    try:
        assert grouping_operation(feats, grouped).shape == (batch, 2, m, k)
    except IndexError as err:
        assert "grouping_operation" in str(err)
    assert ball_query(0, 0.5, k, xyz, centres).shape == (batch, m, k)
    assert knn(k, xyz, centres).shape == (batch, k, m)
    dist, nn = three_nn(centres, xyz)
    assert dist.shape == nn.shape == (batch, m, 3)
    assert furthest_point_sample(xyz, k).shape == (batch, k)
    d1, d2, i1, i2 = chamfer_distance(xyz[..., :2], centres[..., :2])
    assert d1.shape == i1.shape == (batch, n) and d2.shape == i2.shape == (batch, m)
    assert not any(torch.isnan(t).any() for t in (d1, d2))
