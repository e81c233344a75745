"""BorderAlign against a per-sample loop that follows mmcv's CUDA kernel (it has no CPU kernel).

The loop walks each side as the kernel does (the step added ``pool_size`` times, the first of
equal maxima kept) and, for the gradient, puts the winning sample back at ``corner + step * i``.
"""

import numpy as np
import pytest
import torch
from helpers.ops_reference import mmcv_bilinear
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.autograd import gradcheck

from mmpar.ops import BorderAlign, border_align
from mmpar.ops.border_align import BorderAlignFunction
from mmpar.utils.compat_errors import CheckValueError

# Side -> (corner, direction of the walk): top and left start at (x1, y1), bottom and right at
# (x2, y2); top walks right, left down, bottom left, right up.
SIDES = (((0, 1), (1, 0)), ((0, 1), (0, 1)), ((2, 3), (-1, 0)), ((2, 3), (0, -1)))


def _walk(box, side, pool_size, dtype):
    """The sample points of one side, as the kernel computes them in ``dtype``."""
    (ix, iy), (dx, dy) = SIDES[side]
    t = box.to(dtype)
    step_x = (t[2] - t[0]) / pool_size * dx if dx else t.new_zeros(())
    step_y = (t[3] - t[1]) / pool_size * dy if dy else t.new_zeros(())
    x, y = t[ix].clone(), t[iy].clone()
    points = [(x, y)]
    for _ in range(pool_size):
        x, y = x + step_x, y + step_y
        points.append((x, y))
    return points, (t[ix], t[iy], step_x, step_y)


def _loop_reference(features, boxes, pool_size, grad_out):
    """Forward and input gradient of border_align, one output element at a time."""
    batch, channels, height, width = features.shape
    quarter, count = channels // 4, boxes.shape[1]
    out = torch.zeros(batch, quarter, count, 4, dtype=torch.float64)
    grad = torch.zeros(features.shape, dtype=torch.float64)
    for n in range(batch):
        for k in range(count):
            for side in range(4):
                points, (x0, y0, sx, sy) = _walk(boxes[n, k], side, pool_size, features.dtype)
                for c in range(quarter):
                    image = features[n, side * quarter + c].double()
                    values = [float(mmcv_bilinear(image, float(y), float(x))) for x, y in points]
                    best = int(np.argmax(values))  # the first of equal maxima
                    out[n, c, k, side] = values[best]
                    # The backward's point: corner + step * index, rounded once.
                    x = float((x0.double() + sx.double() * best).to(features.dtype))
                    y = float((y0.double() + sy.double() * best).to(features.dtype))
                    probe = torch.zeros(height, width, dtype=torch.float64, requires_grad=True)
                    mmcv_bilinear(probe, y, x).backward()
                    g = probe.grad if probe.grad is not None else 0
                    grad[n, side * quarter + c] += g * float(grad_out[n, c, k, side])
    return out, grad


@pytest.fixture(scope="module")
def case():
    g = torch.Generator().manual_seed(0)
    features = torch.randn(2, 8, 5, 7, generator=g)
    xy = torch.rand(2, 6, 2, generator=g) * torch.tensor([8.0, 6.0]) - 1
    wh = torch.rand(2, 6, 2, generator=g) * 5
    boxes = torch.cat([xy, xy + wh], -1)
    boxes[0, 0] = torch.tensor([-3.0, -4.0, -1.5, -2.0])  # outside: samples are 0
    boxes[1, 0] = torch.tensor([5.5, 3.0, 9.0, 7.5])  # past the last row / column
    boxes[1, 1] = torch.tensor([2.0, 1.0, 2.0, 1.0])  # a point
    grad_out = torch.randn(2, 2, 6, 4, generator=g)
    return features, boxes, grad_out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("pool_size", [1, 3, 10])
def test_border_align_matches_the_cuda_kernels_loop(case, dtype, pool_size):
    features, boxes, grad_out = case
    x = features.to(dtype, copy=True).requires_grad_(True)
    out = border_align(x, boxes.to(dtype), pool_size)
    out.backward(grad_out.to(dtype))
    ref_out, ref_grad = _loop_reference(features.to(dtype), boxes, pool_size, grad_out)
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    assert out.shape == (2, 2, 6, 4) and out.dtype == dtype
    torch.testing.assert_close(out.double(), ref_out, rtol=tol, atol=tol)
    torch.testing.assert_close(x.grad.double(), ref_grad, rtol=tol, atol=tol)
    assert not out[0, :, 0].any()


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 4),
    st.integers(1, 5),
    st.integers(1, 5),
    st.lists(st.floats(-3, 8, width=32), min_size=12, max_size=12),
    st.integers(0, 2**31 - 1),
)
def test_border_align_follows_the_kernel_on_any_boxes(pool_size, height, width, corners, seed):
    # Boxes anywhere (inverted, outside, on the border), features with ties (rounded values).
    g = torch.Generator().manual_seed(seed)
    features = (torch.randn(1, 4, height, width, generator=g, dtype=torch.float64) * 2).round()
    boxes = torch.tensor(corners, dtype=torch.float64).view(1, 3, 4)
    grad_out = torch.randn(1, 1, 3, 4, generator=g, dtype=torch.float64)
    x = features.clone().requires_grad_(True)
    out = border_align(x, boxes, pool_size)
    out.backward(grad_out)
    ref_out, ref_grad = _loop_reference(features, boxes, pool_size, grad_out)
    torch.testing.assert_close(out, ref_out, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(x.grad, ref_grad, rtol=1e-12, atol=1e-12)


def test_border_align_by_hand_first_maximum_and_module():
    # Top channel: value = column; left: value = row; bottom / right: constant 1, so every
    # sample ties and the first (the start corner (x2, y2)) takes the whole gradient.
    rows, cols = torch.meshgrid(torch.arange(4.0), torch.arange(5.0), indexing="ij")
    x = torch.stack([cols, rows, torch.ones(4, 5), torch.ones(4, 5)])[None].requires_grad_(True)
    boxes = torch.tensor([[[1.0, 0.5, 3.0, 2.5]]])
    layer = BorderAlign(pool_size=4)
    out = layer(x, boxes)
    assert out.tolist() == [[[[3.0, 2.5, 1.0, 1.0]]]]
    out.sum().backward()
    grad = x.grad[0]
    # Top's winner is its end (3, 0.5): half to rows 0 and 1 of column 3. Bottom's is its
    # start (3, 2.5): half to rows 2 and 3. Right's is (3, 2.5) too, left's (1, 2.5).
    assert grad[0, :, 3].tolist() == [0.5, 0.5, 0, 0] and grad[0].sum() == 1
    assert grad[2, :, 3].tolist() == [0, 0, 0.5, 0.5] and grad[2].sum() == 1
    assert grad[3, :, 3].tolist() == [0, 0, 0.5, 0.5] and grad[1, :, 1].tolist() == [0, 0, 0.5, 0.5]
    assert repr(layer) == "BorderAlign(pool_size=4)"


def test_border_align_gradcheck_and_meta_shapes():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(1, 4, 4, 5, dtype=torch.float64, generator=g, requires_grad=True)
    boxes = torch.tensor([[[0.3, 0.2, 3.1, 2.7], [1.2, 0.4, 3.6, 2.2]]], dtype=torch.float64)
    assert gradcheck(lambda t: border_align(t, boxes, 3), (x,))
    meta = border_align(
        torch.empty(2, 12, 6, 7, device="meta"), torch.empty(2, 42, 4, device="meta"), 2
    )
    assert meta.shape == (2, 3, 42, 4) and meta.device.type == "meta"
    empty = border_align(torch.zeros(1, 4, 3, 3), torch.zeros(1, 0, 4), 2)
    assert empty.shape == (1, 1, 0, 4)


def test_border_align_refuses_bad_shapes_as_mmcv_asserts():
    x = torch.zeros(1, 8, 3, 3)
    with pytest.raises(AssertionError, match=r"shape \[B, H\*W, 4\]"):
        border_align(x, torch.zeros(9, 4), 2)
    with pytest.raises(AssertionError, match=r"\(x1, y1, x2, y2\)"):
        border_align(x, torch.zeros(1, 9, 5), 2)
    with pytest.raises(AssertionError, match="divisible by factor 4"):
        border_align(torch.zeros(1, 6, 3, 3), torch.zeros(1, 9, 4), 2)
    with pytest.raises(CheckValueError, match="same batch size"):
        border_align(x, torch.zeros(2, 9, 4), 2)
    with pytest.raises(TypeError, match="pool_size must be an int >= 1"):
        border_align(x, torch.zeros(1, 9, 4), 0)
    assert BorderAlignFunction.apply(x, torch.zeros(1, 9, 4), 1).shape == (1, 2, 9, 4)
