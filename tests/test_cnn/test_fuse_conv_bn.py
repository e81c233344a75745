"""fuse_conv_bn: the fused model computes what the original computes in eval mode."""

import copy

import torch
from torch import nn

from mmpar.cnn import ConvModule, fuse_conv_bn
from mmpar.cnn.utils.fuse_conv_bn import fuse_conv_bn as fuse_from_module


def _with_trained_stats(model):
    # Running statistics and affine parameters away from their defaults, so the fold matters.
    torch.manual_seed(0)
    model.train()
    for _ in range(3):
        model(torch.randn(4, 3, 12, 12) * 3 + 1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            nn.init.uniform_(m.weight, 0.5, 2)
            nn.init.uniform_(m.bias, -1, 1)
    return model.eval()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, bias=False), nn.BatchNorm2d(8))
        self.lonely_bn = nn.BatchNorm2d(8)  # follows no conv among its siblings

    def forward(self, x):
        return self.lonely_bn(self.block(self.relu(self.bn(self.conv(x)))))


def test_fused_output_equals_eval_output():
    model = _with_trained_stats(Net())
    x = torch.randn(2, 3, 12, 12)
    with torch.no_grad():
        expected = model(x)
        fused = fuse_conv_bn(copy.deepcopy(model))
        assert torch.allclose(fused(x), expected, atol=1e-5)
    assert isinstance(fused.bn, nn.Identity) and isinstance(fused.block[1], nn.Identity)
    assert isinstance(fused.lonely_bn, nn.BatchNorm2d)
    assert fused.block[0].bias is not None  # a bias-free conv gains the folded bias
    assert fuse_from_module is fuse_conv_bn


def test_fuse_returns_the_same_module_and_keeps_names():
    model = _with_trained_stats(Net())
    names = [name for name, _ in model.named_children()]
    assert fuse_conv_bn(model) is model
    assert [name for name, _ in model.named_children()] == names


def test_conv_module_fuses_too():
    module = _with_trained_stats(ConvModule(3, 4, 3, norm_cfg=dict(type="BN")))
    x = torch.randn(1, 3, 6, 6)
    with torch.no_grad():
        expected = module(x)
        assert torch.allclose(fuse_conv_bn(module)(x), expected, atol=1e-5)
    assert isinstance(module.bn, nn.Identity)
