"""Dynamic scatter against a per-voxel loop that follows mmcv-full's CUDA kernel."""

import pytest
import torch

from mmpar.ops import DynamicScatter, dynamic_scatter


def _inputs(n=60, channels=3, seed=0, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    feats = torch.randn(n, channels, generator=gen, dtype=dtype)
    coors = torch.randint(-1, 3, (n, 3), generator=gen)
    return feats, coors


def _loop_scatter(feats, coors, reduce_type):
    """Voxels sorted by coordinates; each one's points reduced one at a time."""
    keys = sorted({tuple(c) for c in coors.tolist() if min(c) >= 0})
    out = []
    for key in keys:
        rows = [i for i, c in enumerate(coors.tolist()) if tuple(c) == key]
        acc = feats[rows[0]].clone()
        for i in rows[1:]:
            acc = torch.maximum(acc, feats[i]) if reduce_type == "max" else acc + feats[i]
        out.append(acc / len(rows) if reduce_type == "mean" else acc)
    return torch.stack(out), torch.tensor(keys, dtype=coors.dtype)


@pytest.mark.parametrize("reduce_type", ["max", "sum", "mean"])
def test_forward_matches_the_loop_and_gradcheck(reduce_type):
    feats, coors = _inputs()
    out, voxel_coors = dynamic_scatter(feats, coors, reduce_type)
    ref, ref_coors = _loop_scatter(feats, coors, reduce_type)
    assert torch.equal(voxel_coors, ref_coors)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)
    feats.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda f: dynamic_scatter(f, coors, reduce_type)[0], (feats,))


def test_max_gradient_goes_to_the_first_point_holding_the_maximum():
    feats = torch.tensor([[1.0, 5.0], [3.0, 5.0], [3.0, 2.0], [9.0, 9.0]], requires_grad=True)
    coors = torch.tensor([[0, 0, 0], [0, 0, 0], [0, 0, 0], [-1, 0, 0]])
    out, _ = dynamic_scatter(feats, coors, "max")
    out.backward(torch.tensor([[10.0, 20.0]]))
    assert out.tolist() == [[3.0, 5.0]]
    assert feats.grad.tolist() == [[0, 20], [10, 0], [0, 0], [0, 0]]


def test_batched_module_equals_mmcvs_per_sample_loop():
    feats, coors = _inputs(n=80, dtype=torch.float32)
    batch = torch.arange(80).div(40, rounding_mode="floor").unsqueeze(1)
    layer = DynamicScatter([0.2, 0.2, 4], [0, -40, -3, 70.4, 40, 1], average_points=True)
    out, out_coors = layer(feats, torch.cat([batch, coors], 1))
    parts = [layer(feats[batch[:, 0] == b], coors[batch[:, 0] == b]) for b in (0, 1)]
    torch.testing.assert_close(out, torch.cat([p[0] for p in parts]))
    expected = torch.cat(
        [torch.nn.functional.pad(p[1], (1, 0), value=b) for b, p in enumerate(parts)]
    )
    assert torch.equal(out_coors, expected)
    assert "average_points=True" in repr(layer)


def test_empty_input_and_all_points_dropped():
    out, voxel_coors = dynamic_scatter(torch.zeros(0, 4), torch.zeros(0, 3, dtype=torch.long))
    assert out.shape == (0, 4) and voxel_coors.shape == (0, 3)
    out, voxel_coors = dynamic_scatter(torch.ones(2, 4), -torch.ones(2, 3, dtype=torch.int32))
    assert out.shape == (0, 4) and voxel_coors.shape == (0, 3)


@pytest.mark.parametrize(
    ("feats", "coors", "reduce_type", "error"),
    [
        (torch.zeros(3, 2), torch.zeros(3, 3, dtype=torch.long), "min", ValueError),
        (torch.zeros(3, 2), torch.zeros(4, 3, dtype=torch.long), "max", ValueError),
        (torch.zeros(3, 2), torch.zeros(3, 3), "max", TypeError),
    ],
)
def test_bad_input_names_the_op(feats, coors, reduce_type, error):
    with pytest.raises(error, match="dynamic_scatter"):
        dynamic_scatter(feats, coors, reduce_type)
