"""make_color_wheel, flow2rgb, flowshow."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from mmpar.visualization import flow2rgb, flowshow, make_color_wheel
from mmpar.visualization import optflow as vis_optflow


def test_color_wheel():
    wheel = make_color_wheel()
    assert wheel.shape == (55, 3) and wheel.dtype == np.float32
    assert_array_equal(wheel[0], [1, 0, 0])  # red
    assert_array_equal(wheel[15], [1, 1, 0])  # yellow after 15 bins
    assert_array_equal(wheel[21], [0, 1, 0])  # green
    assert_array_equal(wheel[25], [0, 1, 1])  # cyan
    assert_array_equal(wheel[36], [0, 0, 1])  # blue
    assert_array_equal(wheel[49], [1, 0, 1])  # magenta
    assert_allclose(wheel[1], [1, 1 / 15, 0])
    small = make_color_wheel([1, 2, 3, 4, 5, 6])
    assert small.shape == (21, 3) and ((small >= 0) & (small <= 1)).all()
    with pytest.raises(AssertionError):
        make_color_wheel([1, 2])


def test_flow2rgb_directions_and_magnitudes():
    # Hue from arctan2(-dy, -dx) mapped onto the wheel: right is its first bin (red), down a
    # quarter of the way (13.5 of 54: red to yellow), left halfway (27: cyan to blue).
    flow = np.zeros((1, 6, 2), np.float32)
    flow[0, 0] = (1, 0)
    flow[0, 1] = (0, 1)
    flow[0, 2] = (-1, 0)
    flow[0, 3] = (0.5, 0)  # half the largest magnitude: halfway to white
    flow[0, 4] = (np.nan, 0)  # unknown: black
    flow[0, 5] = (0, 0)  # no motion: white
    rgb = flow2rgb(flow)
    assert rgb.shape == (1, 6, 3)
    assert_allclose(rgb[0, 0], [1, 0, 0])
    assert_allclose(rgb[0, 1], [1, 13.5 / 15, 0], rtol=1e-6)
    assert_allclose(rgb[0, 2], [0, 1 - 2 / 11, 1], rtol=1e-6)
    assert_allclose(rgb[0, 3], [1, 0.5, 0.5])
    assert_array_equal(rgb[0, 4], [0, 0, 0])
    assert_allclose(rgb[0, 5], [1, 1, 1])
    huge = flow.copy()
    huge[0, 5] = (2e6, 0)
    assert_array_equal(flow2rgb(huge)[0, 5], [0, 0, 0])  # beyond unknown_thr
    assert_allclose(flow2rgb(np.zeros((2, 2, 2))), 1)
    with pytest.raises(AssertionError):
        flow2rgb(np.zeros((2, 2, 3)))


def test_flowshow_shows_the_bgr_colouring(monkeypatch):
    shown = []
    monkeypatch.setattr(vis_optflow, "imshow", lambda img, name, wait: shown.append((img, name)))
    flow = np.zeros((1, 2, 2), np.float32)
    flow[0, 0] = (1, 0)
    flowshow(flow, "flow")
    ((img, name),) = shown
    assert name == "flow"
    assert_allclose(img[0, 0], [0, 0, 1])  # red in BGR
