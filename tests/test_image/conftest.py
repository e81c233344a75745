"""Small real images for the image tests: scikit-learn's handwritten digits."""

import numpy as np
import pytest
from sklearn.datasets import load_digits


@pytest.fixture(scope="session")
def digits():
    """The 8x8 digit images scaled to uint8 0-255, shape (n, 8, 8)."""
    images = load_digits().images
    return np.round(images * (255 / 16)).astype(np.uint8)


@pytest.fixture(scope="session")
def bgr(digits):
    """A 24x32 BGR uint8 image: three different digits as the B, G and R channels, upscaled
    (3x4 blocks) and with a gradient added so that every channel has many distinct values."""
    channels = [np.kron(digits[i], np.ones((3, 4), np.uint8)) for i in (0, 1, 2)]
    img = np.stack(channels, axis=-1).astype(np.int32)
    img += np.arange(32)[None, :, None] * 2 + np.arange(24)[:, None, None]
    return np.clip(img, 0, 255).astype(np.uint8)


@pytest.fixture(scope="session")
def gray(bgr):
    return bgr[..., 1].copy()
