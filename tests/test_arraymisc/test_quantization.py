"""mmpar.arraymisc: quantize / dequantize."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from mmpar.arraymisc import dequantize, quantize


def test_quantize_bins_and_clips():
    values = np.array([-5.0, -1.0, -0.99, 0.0, 0.49, 0.5, 0.99, 1.0, 7.0])
    got = quantize(values, -1, 1, 4)
    # Bins of width 0.5 from -1; out-of-range values are clipped; 1.0 falls in the last bin.
    assert_array_equal(got, [0, 0, 0, 2, 2, 3, 3, 3, 3])
    assert got.dtype == np.int64
    assert quantize(values, -1, 1, 255, np.uint8).dtype == np.uint8


def test_dequantize_gives_bin_centres_and_round_trips():
    assert_allclose(dequantize(np.arange(4), -1, 1, 4), [-0.75, -0.25, 0.25, 0.75])
    rng = np.random.default_rng(0)
    values = rng.uniform(-3, 3, 1000)
    restored = dequantize(quantize(values, -3, 3, 100), -3, 3, 100)
    assert restored.dtype == np.float64
    assert np.abs(restored - values).max() <= 3 / 100 + 1e-12  # half a bin
    assert dequantize(np.arange(3), 0, 1, 3, np.float32).dtype == np.float32


@pytest.mark.parametrize("function", [quantize, dequantize])
def test_argument_errors(function):
    data = np.zeros(3)
    with pytest.raises(ValueError):
        function(data, 0, 1, 1)
    with pytest.raises(ValueError):
        function(data, 0, 1, 2.0)
    with pytest.raises(ValueError):
        function(data, 1, 1, 5)
