import pytest
import torch
from torch.autograd import gradcheck

from mmpar.ops.corner_pool import CornerPool


def _reference(x, mode):
    """Explicit loops: the running maximum towards the border the mode names."""
    n, c, h, w = x.shape
    out = torch.empty_like(x)
    for i in range(h):
        for j in range(w):
            if mode == "top":  # max over rows i..h-1
                out[:, :, i, j] = x[:, :, i:, j].amax(dim=2)
            elif mode == "bottom":  # max over rows 0..i
                out[:, :, i, j] = x[:, :, : i + 1, j].amax(dim=2)
            elif mode == "left":  # max over columns j..w-1
                out[:, :, i, j] = x[:, :, i, j:].amax(dim=2)
            else:  # right: max over columns 0..j
                out[:, :, i, j] = x[:, :, i, : j + 1].amax(dim=2)
    return out


@pytest.mark.parametrize("mode", ["top", "bottom", "left", "right"])
def test_corner_pool_matches_loops(mode):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 5, 4)
    torch.testing.assert_close(CornerPool(mode)(x), _reference(x, mode))


def test_corner_pool_known_values():
    x = torch.tensor([[[[1.0, 3.0, 2.0], [0.0, 5.0, 1.0]]]])
    assert CornerPool("left")(x).tolist() == [[[[3.0, 3.0, 2.0], [5.0, 5.0, 1.0]]]]
    assert CornerPool("right")(x).tolist() == [[[[1.0, 3.0, 3.0], [0.0, 5.0, 5.0]]]]
    assert CornerPool("top")(x).tolist() == [[[[1.0, 5.0, 2.0], [0.0, 5.0, 1.0]]]]
    assert CornerPool("bottom")(x).tolist() == [[[[1.0, 3.0, 2.0], [1.0, 5.0, 2.0]]]]


@pytest.mark.parametrize("mode", ["top", "right"])
def test_corner_pool_gradcheck(mode):
    torch.manual_seed(0)
    x = torch.randn(1, 2, 3, 3, dtype=torch.float64, requires_grad=True)
    assert gradcheck(CornerPool(mode), (x,))


def test_corner_pool_rejects_unknown_mode():
    with pytest.raises(AssertionError):
        CornerPool("diagonal")
