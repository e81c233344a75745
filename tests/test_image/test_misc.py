"""tensor2imgs: a normalised NCHW batch back to BGR uint8 images."""

import numpy as np
import pytest
import torch
from numpy.testing import assert_array_equal

from mmpar import image as mmimage

MEAN = (123.675, 116.28, 103.53)
STD = (58.395, 57.12, 57.375)


def _batch(images, to_rgb=True):
    normalized = [mmimage.imnormalize(img, np.array(MEAN), np.array(STD), to_rgb) for img in images]
    return torch.from_numpy(np.stack(normalized)).permute(0, 3, 1, 2)


def test_denormalises_back_to_the_bgr_images(bgr):
    flipped = bgr[::-1].copy()
    images = mmimage.tensor2imgs(_batch([bgr, flipped]), MEAN, STD, to_rgb=True)
    assert len(images) == 2
    for got, original in zip(images, (bgr, flipped)):
        assert got.dtype == np.uint8 and got.shape == (24, 32, 3)
        assert got.flags["C_CONTIGUOUS"]
        # float32 arithmetic, then truncation to uint8: at most one level below the original.
        assert np.all((original.astype(int) - got) >= 0)
        assert np.all((original.astype(int) - got) <= 1)


def test_without_rgb_conversion(bgr):
    got = mmimage.tensor2imgs(_batch([bgr], to_rgb=False), MEAN, STD, to_rgb=False)[0]
    assert np.abs(got.astype(int) - bgr).max() <= 1
    # An RGB batch denormalised without the conversion stays RGB.
    rgb = mmimage.tensor2imgs(_batch([bgr], to_rgb=True), MEAN, STD, to_rgb=False)[0]
    assert np.abs(rgb.astype(int) - bgr[..., ::-1]).max() <= 1


def test_defaults_and_one_channel(gray):
    batch = torch.from_numpy(gray[None, None].astype(np.float32))
    (got,) = mmimage.tensor2imgs(batch, to_rgb=False)
    assert got.shape == (24, 32, 1) or got.shape == (24, 32)
    assert_array_equal(got.reshape(24, 32), gray)
    color = torch.from_numpy(np.stack([gray] * 3)[None].astype(np.float32))
    (got,) = mmimage.tensor2imgs(color)  # mean 0, std 1
    assert_array_equal(got, np.stack([gray] * 3, axis=-1))


def test_tensor_that_requires_grad(gray):
    batch = torch.from_numpy(np.stack([gray] * 3)[None].astype(np.float32)).requires_grad_()
    assert mmimage.tensor2imgs(batch)[0].shape == (24, 32, 3)


def test_argument_checks(gray):
    with pytest.raises(AssertionError):
        mmimage.tensor2imgs(np.zeros((1, 3, 2, 2)))
    with pytest.raises(AssertionError):
        mmimage.tensor2imgs(torch.zeros(3, 2, 2))
    with pytest.raises(AssertionError):
        mmimage.tensor2imgs(torch.zeros(1, 2, 2, 2))
    with pytest.raises(AssertionError):
        mmimage.tensor2imgs(torch.zeros(1, 1, 2, 2))  # one channel needs to_rgb=False
    with pytest.raises(AssertionError):
        mmimage.tensor2imgs(torch.zeros(1, 3, 2, 2), mean=(0, 0))
