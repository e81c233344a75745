import pytest
import torch
import torch.nn.functional as F

from mmpar.ops.masked_conv import MaskedConv2d, masked_conv2d


def test_masked_conv2d_is_conv_times_mask():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 6, 5)
    mask = (torch.rand(1, 6, 5) > 0.5).float()
    weight = torch.randn(4, 3, 3, 3)
    bias = torch.randn(4)
    out = masked_conv2d(x, mask, weight, bias, 1)
    full = F.conv2d(x, weight, bias, padding=1)
    torch.testing.assert_close(out, full * mask[:, None])
    assert (out[0, :, mask[0] == 0] == 0).all()
    # without a bias
    torch.testing.assert_close(
        masked_conv2d(x, mask, weight, None, 1), F.conv2d(x, weight, padding=1) * mask[:, None]
    )


def test_masked_conv2d_module():
    torch.manual_seed(0)
    conv = MaskedConv2d(3, 2, 3, padding=1)
    x = torch.randn(1, 3, 4, 4)
    mask = torch.zeros(1, 4, 4)
    mask[0, 1:3, 2] = 2.0
    torch.testing.assert_close(conv(x), F.conv2d(x, conv.weight, conv.bias, padding=1))
    torch.testing.assert_close(conv(x, mask), conv(x) * (mask > 0).float()[:, None])
    assert sorted(conv.state_dict()) == ["bias", "weight"]


def test_masked_conv2d_errors():
    x = torch.zeros(1, 1, 4, 4)
    w = torch.zeros(1, 1, 3, 3)
    mask = torch.ones(1, 4, 4)
    with pytest.raises(ValueError, match="stride"):
        masked_conv2d(x, mask, w, None, 1, 2)
    with pytest.raises(ValueError, match="stride"):
        MaskedConv2d(1, 1, 3, stride=2, padding=1)(x, mask)
    with pytest.raises(ValueError, match="output size"):
        masked_conv2d(x, mask, w, None, 0)
    with pytest.raises(AssertionError):
        masked_conv2d(torch.zeros(2, 1, 4, 4), mask, w, None, 1)
