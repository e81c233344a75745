"""mmpar.video.optflow: .flo files, quantized flow images, flow_warp, flow from bytes."""

import cv2
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from mmpar import video
from mmpar.image import imread


@pytest.fixture
def flow():
    rng = np.random.default_rng(0)
    return rng.normal(0, 0.2, (6, 8, 2)).astype(np.float32)


def test_flo_round_trip_and_layout(tmp_path, flow):
    path = tmp_path / "f.flo"
    video.flowwrite(flow, str(path))
    raw = path.read_bytes()
    assert raw[:4] == b"PIEH"
    assert np.frombuffer(raw[4:12], np.int32).tolist() == [8, 6]  # width, height
    assert len(raw) == 12 + flow.size * 4
    read = video.flowread(str(path))
    assert read.dtype == np.float32
    assert_array_equal(read, flow)
    assert_array_equal(video.flow_from_bytes(raw), flow)


def test_flowread_checks(tmp_path, flow):
    assert video.flowread(flow) is flow
    with pytest.raises(ValueError):
        video.flowread(flow[..., :1])
    with pytest.raises(TypeError):
        video.flowread(3)
    bad = tmp_path / "bad.flo"
    bad.write_bytes(b"NOPE" + bytes(8))
    with pytest.raises(OSError, match="PIEH"):
        video.flowread(str(bad))
    with pytest.raises(ValueError, match="PIEH"):
        video.flow_from_bytes(b"NOPE" + bytes(8))


def test_quantize_and_dequantize_flow(flow):
    dx, dy = video.quantize_flow(flow, max_val=0.1)
    assert dx.dtype == np.uint8 and dx.shape == (6, 8)
    restored = video.dequantize_flow(dx, dy, max_val=0.1)
    assert restored.shape == (6, 8, 2)
    # |dx / w| <= 0.1 survives with half a bin of error: 0.2 / 255 / 2 * w.
    inside = (np.abs(flow[..., 0] / 8) < 0.1) & (np.abs(flow[..., 1] / 6) < 0.1)
    error = np.abs(restored - flow)[inside]
    assert error.max() <= 0.1 / 255 * 8 + 1e-6
    zero = video.dequantize_flow(*video.quantize_flow(np.zeros((2, 2, 2))))
    assert_array_equal(zero, 0)  # 255 levels: zero stays zero
    raw_dx, _ = video.quantize_flow(flow, max_val=0.5, norm=False)
    assert_array_equal(
        raw_dx, np.minimum(np.floor(255 * (np.clip(flow[..., 0], -0.5, 0.5) + 0.5)), 254)
    )


@pytest.mark.parametrize("axis", [0, 1])
def test_quantized_flow_file(tmp_path, flow, axis):
    path = tmp_path / "flow.png"
    video.flowwrite(flow, str(path), quantize=True, concat_axis=axis, max_val=0.1)
    joined = imread(str(path), flag="unchanged")
    assert joined.shape == ((12, 8) if axis == 0 else (6, 16))
    read = video.flowread(str(path), quantize=True, concat_axis=axis, max_val=0.1)
    assert read.dtype == np.float32
    dx, dy = video.quantize_flow(flow, max_val=0.1)
    assert_allclose(read, video.dequantize_flow(dx, dy, max_val=0.1), rtol=1e-6)


def test_flowread_quantized_rejects_colour_images(tmp_path):
    path = tmp_path / "color.png"
    cv2.imwrite(str(path), np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(OSError):
        video.flowread(str(path), quantize=True)


def test_flow_warp_nearest_and_bilinear():
    img = np.arange(5 * 6 * 3, dtype=np.float32).reshape(5, 6, 3)
    shift = np.zeros((5, 6, 2), np.float32)
    shift[..., 0] = 1  # sample one pixel to the right
    with pytest.warns(UserWarning):
        warped = video.flow_warp(img, shift, filling_value=-1)
    # Sources must lie in [0, h-1) x [0, w-1): the last column and the last row are filled.
    assert_array_equal(warped[:4, :4], img[:4, 1:5])
    assert (warped[:, 4:] == -1).all() and (warped[4] == -1).all()
    half = np.zeros((5, 6, 2), np.float32)
    half[..., 1] = 0.5  # halfway down
    with pytest.warns(UserWarning):
        blended = video.flow_warp(img, half, interpolate_mode="bilinear")
    assert_allclose(blended[:4, :5], (img[:4, :5] + img[1:5, :5]) / 2, rtol=1e-5)
    with pytest.warns(UserWarning), pytest.raises(NotImplementedError):
        video.flow_warp(img, half, interpolate_mode="bicubic")


def test_sparse_flow_from_bytes():
    stored = np.zeros((3, 4, 3), np.uint16)  # OpenCV order: valid, dy, dx
    stored[..., 2] = 2**15 + 64  # dx = 1
    stored[..., 1] = 2**15 - 128  # dy = -2
    stored[..., 0] = 1
    stored[0, 0, 0] = 0
    ok, png = cv2.imencode(".png", stored)
    flow, valid = video.sparse_flow_from_bytes(png.tobytes())
    assert flow.shape == (3, 4, 2) and flow.dtype == np.float32
    assert (flow[..., 0] == 1).all() and (flow[..., 1] == -2).all()
    assert valid[0, 0] == 0 and valid.sum() == 11
