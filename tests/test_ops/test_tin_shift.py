import pytest
import torch
from torch.autograd import gradcheck

from mmpar.ops.tin_shift import TINShift, tin_shift


def _reference(x, shift):
    n, t, c, hw = x.shape
    group_channels = c // shift.size(1)
    out = torch.zeros_like(x)
    for b in range(n):
        for ch in range(c):
            s = int(shift[b, ch // group_channels])
            for i in range(t):
                if 0 <= i + s < t:
                    out[b, i + s, ch] = x[b, i, ch]
    return out


def test_tin_shift_matches_loop_reference():
    torch.manual_seed(0)
    x = torch.randn(2, 4, 6, 5)
    shift = torch.tensor([[-1, 0, 2], [3, -4, 1]], dtype=torch.int32)
    out = TINShift()(x, shift)
    torch.testing.assert_close(out, _reference(x, shift))
    assert out[0, 0, 4].tolist() == [0.0] * 5  # frame shifted in from before the clip


def test_tin_shift_gradcheck_and_gradient_direction():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 2, 2, dtype=torch.float64, requires_grad=True)
    shift = torch.tensor([[1, -1]], dtype=torch.int32)
    assert gradcheck(lambda t: tin_shift(t, shift), (x,))
    out = tin_shift(x, shift)
    out[0, 2, 0].sum().backward()  # output frame 2 of group 0 came from input frame 1
    assert x.grad[0, :, 0].abs().sum(-1).tolist() == [0.0, 2.0, 0.0]


def test_tin_shift_errors():
    x = torch.zeros(2, 3, 4, 1)
    with pytest.raises(ValueError, match="batch"):
        tin_shift(x, torch.zeros(1, 2, dtype=torch.int32))
    with pytest.raises(ValueError, match="multiple"):
        tin_shift(x, torch.zeros(2, 3, dtype=torch.int32))
    with pytest.raises(ValueError, match="multiple"):
        tin_shift(x, torch.zeros(2, 8, dtype=torch.int32))
