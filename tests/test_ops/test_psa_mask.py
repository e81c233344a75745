import pytest
import torch
from torch.autograd import gradcheck

from mmpar.ops.psa_mask import PSAMask, psa_mask


def _reference(x, psa_type, mask_size):
    """The loops of mmcv's CPU kernel, written out."""
    hm, wm = mask_size
    n, _, h, w = x.shape
    half_h, half_w = (hm - 1) // 2, (wm - 1) // 2
    out = torch.zeros(n, h * w, h, w, dtype=x.dtype)
    flat = out.view(n, h * w, h * w)
    for b in range(n):
        for i in range(h):
            for j in range(w):
                for mi in range(hm):
                    for mj in range(wm):
                        ti, tj = mi + i - half_h, mj + j - half_w
                        if not (0 <= ti < h and 0 <= tj < w):
                            continue
                        val = x[b, mi * wm + mj, i, j]
                        if psa_type == "collect":
                            flat[b, ti * w + tj, i * w + j] = val
                        else:
                            flat[b, i * w + j, ti * w + tj] = val
    return out


@pytest.mark.parametrize("psa_type", ["collect", "distribute"])
@pytest.mark.parametrize("mask_size", [(3, 3), (5, 3), (4, 6)])
def test_psa_mask_matches_kernel_loops(psa_type, mask_size):
    torch.manual_seed(0)
    x = torch.randn(2, mask_size[0] * mask_size[1], 3, 4)
    out = PSAMask(psa_type, mask_size)(x)
    assert out.shape == (2, 12, 3, 4)
    torch.testing.assert_close(out, _reference(x, psa_type, mask_size))


def test_psa_mask_int_size_enum_and_gradcheck():
    torch.manual_seed(0)
    x = torch.randn(1, 9, 2, 3, dtype=torch.float64, requires_grad=True)
    torch.testing.assert_close(psa_mask(x, 1, 3), _reference(x.detach(), "distribute", (3, 3)))
    assert gradcheck(lambda t: psa_mask(t, "collect", 3), (x,))
    assert gradcheck(lambda t: psa_mask(t, "distribute", (3, 3)), (x,))


def test_psa_mask_errors_and_repr():
    with pytest.raises(AssertionError):
        PSAMask("gather", 3)
    with pytest.raises(AssertionError):
        PSAMask("collect", 3)(torch.zeros(1, 8, 2, 2))
    layer = PSAMask("distribute", (5, 5))
    assert layer.psa_type_enum == 1
    assert repr(layer) == "PSAMask(psa_type=distribute, mask_size=(5, 5))"
