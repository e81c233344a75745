import pytest
import torch
import torch.nn.functional as F

from mmpar.ops.merge_cells import ConcatCell, GlobalPoolingCell, SumCell


def test_sum_cell_without_convs_adds_resized_inputs():
    cell = SumCell(4, 4, with_out_conv=False)
    x1 = torch.randn(2, 4, 4, 4)
    x2 = torch.randn(2, 4, 8, 8)
    out = cell(x1, x2)  # to the larger size: x1 upsampled (nearest)
    torch.testing.assert_close(out, F.interpolate(x1, size=(8, 8), mode="nearest") + x2)
    # to a smaller size: max pooling by an integer factor
    out = cell(x1, x2, out_size=(4, 4))
    torch.testing.assert_close(out, x1 + F.max_pool2d(x2, 2, 2))


def test_resize_pads_before_pooling_to_a_non_divisor():
    cell = SumCell(1, 1, with_out_conv=False)
    x = torch.arange(25.0).view(1, 1, 5, 5)
    out = cell._resize(x, (2, 2))
    # padded by one row/column at the bottom/right (centred split: 0 before, 1 after)
    padded = F.pad(x, (0, 1, 0, 1))
    torch.testing.assert_close(out, F.max_pool2d(padded, 3, 3))


def test_concat_and_global_pooling_cells():
    torch.manual_seed(0)
    x1 = torch.randn(1, 3, 4, 4)
    x2 = torch.randn(1, 3, 4, 4)
    cat = ConcatCell(3, 5)
    assert cat.out_conv.conv.in_channels == 6
    assert cat(x1, x2).shape == (1, 5, 4, 4)
    gp = GlobalPoolingCell(with_out_conv=False)
    expected = x2 + x2.mean((2, 3), keepdim=True).sigmoid() * x1
    torch.testing.assert_close(gp(x1, x2), expected)


def test_out_conv_order_and_input_convs():
    # mmcv's input convs keep their bias before a norm (ConvModule warns about it)
    with pytest.warns(UserWarning, match="bias"):
        cell = SumCell(4, 4, with_input1_conv=True, input_norm_cfg=dict(type="BN"))
    assert cell.out_conv.order == ("act", "conv", "norm")
    assert cell.input1_conv.conv.kernel_size == (3, 3)
    assert isinstance(cell.input2_conv, torch.nn.Sequential) and len(cell.input2_conv) == 0
    keys = set(cell.state_dict())
    assert {"out_conv.conv.weight", "out_conv.conv.bias", "input1_conv.conv.weight"} <= keys
    assert "input1_conv.bn.running_mean" in keys
    assert cell(torch.randn(1, 4, 3, 3), torch.randn(1, 4, 6, 6)).shape == (1, 4, 6, 6)


def test_bad_arguments():
    with pytest.raises(AssertionError):
        SumCell(4, 4, upsample_mode="area")
    cell = SumCell(4, 4, with_out_conv=False)
    with pytest.raises(AssertionError):
        cell(torch.zeros(1, 4, 2, 2), torch.zeros(1, 3, 2, 2))
