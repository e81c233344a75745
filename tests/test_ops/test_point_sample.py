import importlib

import pytest
import torch
import torch.nn.functional as F
from torch.autograd import gradcheck

from mmpar.ops.point_sample import (
    SimpleRoIAlign,
    abs_img_point_to_rel_img_point,
    bilinear_grid_sample,
    denormalize,
    generate_grid,
    get_shape_from_feature_map,
    normalize,
    point_sample,
    rel_roi_point_to_abs_img_point,
    rel_roi_point_to_rel_img_point,
)


def _bilinear_at(feat, x, y):
    """Slow reference: feat (C, H, W) at pixel coordinates (x, y), zeros outside."""
    c, h, w = feat.shape
    x0, y0 = int(torch.floor(x)), int(torch.floor(y))
    out = torch.zeros(c, dtype=feat.dtype)
    for yi in (y0, y0 + 1):
        for xi in (x0, x0 + 1):
            if 0 <= xi < w and 0 <= yi < h:
                out += feat[:, yi, xi] * (1 - abs(x - xi)) * (1 - abs(y - yi))
    return out


@pytest.mark.parametrize("align_corners", [False, True])
def test_point_sample_matches_a_bilinear_loop(align_corners):
    torch.manual_seed(0)
    feat = torch.randn(2, 3, 5, 7, dtype=torch.float64)
    points = torch.rand(2, 6, 2, dtype=torch.float64) * 1.2 - 0.1  # a few fall outside
    out = point_sample(feat, points, align_corners=align_corners)
    assert out.shape == (2, 3, 6)
    h, w = feat.shape[2:]
    for n in range(2):
        for p in range(6):
            px, py = points[n, p]
            if align_corners:  # [0, 1] spans the corner pixel centres
                x, y = px * (w - 1), py * (h - 1)
            else:  # [0, 1] spans the outer edges: pixel i's centre is (i + 0.5) / size
                x, y = px * w - 0.5, py * h - 0.5
            torch.testing.assert_close(out[n, :, p], _bilinear_at(feat[n], x, y))


def test_point_sample_grid_shape_and_kwargs():
    feat = torch.arange(16.0).view(1, 1, 4, 4)
    grid = torch.full((1, 2, 3, 2), 0.5)
    out = point_sample(feat, grid, align_corners=True)
    assert out.shape == (1, 1, 2, 3)
    torch.testing.assert_close(out, torch.full((1, 1, 2, 3), 7.5))
    # kwargs reach grid_sample: nearest at the centre of pixel (1, 2)
    pts = torch.tensor([[[2.5 / 4, 1.5 / 4]]])
    assert point_sample(feat, pts, mode="nearest").item() == 6.0


def test_point_sample_gradcheck():
    torch.manual_seed(0)
    feat = torch.randn(1, 2, 3, 4, dtype=torch.float64, requires_grad=True)
    pts = (torch.rand(1, 5, 2, dtype=torch.float64) * 0.8 + 0.1).requires_grad_()
    assert gradcheck(lambda f, p: point_sample(f, p), (feat, pts))


@pytest.mark.parametrize("align_corners", [False, True])
def test_bilinear_grid_sample_equals_grid_sample(align_corners):
    torch.manual_seed(0)
    im = torch.randn(2, 3, 5, 6)
    grid = torch.rand(2, 4, 3, 2) * 2.6 - 1.3
    expected = F.grid_sample(im, grid, align_corners=align_corners)
    torch.testing.assert_close(bilinear_grid_sample(im, grid, align_corners), expected)


def test_point_sample_uses_the_gather_formulation_in_onnx_export(monkeypatch):
    # The submodule, not the function of the same name mmpar.ops re-exports (as mmcv.ops).
    module = importlib.import_module("mmpar.ops.point_sample")

    torch.manual_seed(0)
    feat = torch.randn(1, 2, 4, 5)
    pts = torch.rand(1, 6, 2)
    expected = point_sample(feat, pts)
    calls = []

    def spy(*args, **kwargs):
        calls.append(args)
        return bilinear_grid_sample(*args, **kwargs)

    monkeypatch.setattr(torch.onnx, "is_in_onnx_export", lambda: True)
    monkeypatch.setattr(module, "bilinear_grid_sample", spy)
    torch.testing.assert_close(point_sample(feat, pts), expected)
    assert len(calls) == 1


def test_normalize_denormalize_and_shape():
    g = torch.tensor([-1.0, 0.0, 1.0])
    torch.testing.assert_close(normalize(g), torch.tensor([0.0, 0.5, 1.0]))
    torch.testing.assert_close(denormalize(normalize(g)), g)
    shape = get_shape_from_feature_map(torch.zeros(1, 1, 3, 8))
    assert shape.shape == (1, 1, 2) and shape.tolist() == [[[8.0, 3.0]]]


def test_coordinate_conversions():
    rois = torch.tensor([[0.0, 2.0, 4.0, 6.0, 12.0], [1.0, 0.0, 0.0, 8.0, 8.0]])
    rel = torch.tensor([[[0.0, 0.0], [1.0, 0.5]], [[0.5, 0.25], [1.0, 1.0]]])
    absolute = rel_roi_point_to_abs_img_point(rois, rel)
    assert absolute.tolist() == [[[2.0, 4.0], [6.0, 8.0]], [[4.0, 2.0], [8.0, 8.0]]]
    # (N, 4) boxes without a batch index give the same points
    torch.testing.assert_close(rel_roi_point_to_abs_img_point(rois[:, 1:], rel), absolute)
    # img given as (h, w): x by width, y by height, then the spatial scale
    rel_img = abs_img_point_to_rel_img_point(absolute, (16, 8), spatial_scale=0.5)
    torch.testing.assert_close(rel_img, absolute / torch.tensor([8.0, 16.0]) * 0.5)
    fmap = torch.zeros(2, 1, 16, 8)
    torch.testing.assert_close(rel_roi_point_to_rel_img_point(rois, rel, fmap, 0.5), rel_img)
    with pytest.raises(AssertionError):
        abs_img_point_to_rel_img_point(absolute, torch.zeros(16, 8))


def test_generate_grid_cell_centres():
    grid = generate_grid(3, (2, 4), torch.device("cpu"))
    assert grid.shape == (3, 8, 2)
    assert grid[0, :4, 0].tolist() == [0.125, 0.375, 0.625, 0.875]
    assert grid[0, ::4, 1].tolist() == [0.25, 0.75]


@pytest.mark.parametrize("aligned", [True, False])
def test_simple_roi_align_samples_cell_centres_in_roi_order(aligned):
    torch.manual_seed(0)
    feats = torch.randn(2, 3, 8, 10)
    # not sorted by image: the output keeps the order of the rois
    rois = torch.tensor([[1.0, 2.0, 2.0, 14.0, 10.0], [0.0, 0.0, 4.0, 8.0, 12.0]])
    layer = SimpleRoIAlign((2, 3), spatial_scale=0.5, aligned=aligned)
    out = layer(feats, rois)
    assert out.shape == (2, 3, 2, 3)
    for r, roi in enumerate(rois):
        b, x1, y1, x2, y2 = roi.tolist()
        for i in range(2):
            for j in range(3):
                # cell centre in image coordinates, then in [0, 1] of the feature map
                px = (x1 + (j + 0.5) / 3 * (x2 - x1)) * 0.5 / 10
                py = (y1 + (i + 0.5) / 2 * (y2 - y1)) * 0.5 / 8
                if aligned:
                    x, y = px * 10 - 0.5, py * 8 - 0.5
                else:
                    x, y = px * 9, py * 7
                expected = _bilinear_at(feats[int(b)], torch.tensor(x), torch.tensor(y))
                torch.testing.assert_close(out[r, :, i, j], expected)
    assert "output_size=(2, 3)" in repr(layer)
