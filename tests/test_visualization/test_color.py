"""Color and color_val."""

import numpy as np
import pytest

from mmpar.visualization import Color, color_val


def test_named_colours_are_bgr():
    assert Color.red.value == (0, 0, 255)
    assert Color.blue.value == (255, 0, 0)
    assert Color.yellow.value == (0, 255, 255)
    assert {c.name for c in Color} == {
        "red",
        "green",
        "blue",
        "cyan",
        "yellow",
        "magenta",
        "white",
        "black",
    }


def test_color_val_forms():
    assert color_val("green") == (0, 255, 0)
    assert color_val(Color.cyan) == (255, 255, 0)
    assert color_val((1, 2, 3)) == (1, 2, 3)
    assert color_val(7) == (7, 7, 7)
    from_array = color_val(np.array([1, 2, 3.7]))
    assert from_array == (1, 2, 3) and all(isinstance(v, np.uint8) for v in from_array)


def test_color_val_errors():
    with pytest.raises(KeyError):
        color_val("mauve")
    with pytest.raises(TypeError):
        color_val([1, 2, 3])
    with pytest.raises(AssertionError):
        color_val((1, 2))
    with pytest.raises(AssertionError):
        color_val((1, 2, 300))
    with pytest.raises(AssertionError):
        color_val(-1)
    with pytest.raises(AssertionError):
        color_val(np.array([1, 2]))
