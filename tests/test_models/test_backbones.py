import pytest
import torch
from torch import nn

from mmpar.models import GlobalAveragePooling, LeNet, ResNet, build_backbone

torch.set_num_threads(1)


def test_resnet18_cifar_output_shape():
    net = build_backbone(dict(type="ResNet", depth=18, stem="cifar"))
    (feat,) = net(torch.rand(2, 3, 32, 32))
    assert feat.shape == (2, 512, 4, 4)
    assert not any(isinstance(m, nn.MaxPool2d) for m in net.modules())
    assert net.stem[0].kernel_size == (3, 3) and net.stem[0].stride == (1, 1)
    num_params = sum(p.numel() for p in net.parameters())
    assert 11.1e6 < num_params < 11.2e6  # the standard CIFAR ResNet-18 size


def test_resnet_depths_stems_and_out_indices():
    r50 = ResNet(50, out_indices=(0, 3))
    c2, c5 = r50(torch.rand(1, 3, 64, 64))
    assert c2.shape == (1, 256, 16, 16) and c5.shape == (1, 2048, 2, 2)
    r34 = ResNet(34, stem="cifar", in_channels=1, num_stages=2, out_indices=(1,))
    assert r34(torch.rand(1, 1, 16, 16))[0].shape == (1, 128, 8, 8)
    with pytest.raises(KeyError, match="depth"):
        ResNet(20)
    with pytest.raises(ValueError, match="stem"):
        ResNet(18, stem="tiny")
    with pytest.raises(ValueError, match="out_indices"):
        ResNet(18, num_stages=2, out_indices=(3,))


def test_resnet_zero_init_residual():
    net = ResNet(18, stem="cifar")
    assert all(b.norm2.weight.abs().sum() == 0 for layer in net.layers for b in layer)
    plain = ResNet(18, stem="cifar", zero_init_residual=False)
    assert all(b.norm2.weight.abs().sum() > 0 for layer in plain.layers for b in layer)


def test_resnet_frozen_stages_and_norm_eval():
    net = ResNet(18, stem="cifar", frozen_stages=1, norm_eval=True)
    net.train()
    assert not any(p.requires_grad for p in net.stem.parameters())
    assert not any(p.requires_grad for p in net.layers[0].parameters())
    assert all(p.requires_grad for p in net.layers[1].parameters())
    assert all(not m.training for m in net.modules() if isinstance(m, nn.BatchNorm2d))
    before = net.layers[1][0].norm1.running_mean.clone()
    net(torch.rand(2, 3, 16, 16))
    assert torch.equal(before, net.layers[1][0].norm1.running_mean)
    trainable = ResNet(18, stem="cifar")
    trainable.train()
    trainable(torch.rand(2, 3, 16, 16))
    assert trainable.layers[1][0].norm1.running_mean.abs().sum() > 0


def test_lenet_blitz_and_digits():
    net = LeNet()
    (feat,) = net(torch.rand(4, 3, 32, 32))
    assert feat.shape == (4, 84)
    assert net.fc[0].in_features == 16 * 5 * 5  # the tutorial's fc1
    convs = [m for m in net.modules() if isinstance(m, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels) for c in convs] == [(3, 6), (6, 16)]
    small = build_backbone(dict(type="LeNet", in_channels=1, input_size=8, padding=2))
    assert small(torch.rand(3, 1, 8, 8))[0].shape == (3, 84)
    with pytest.raises(ValueError, match="padding"):
        LeNet(in_channels=1, input_size=8)
    with pytest.raises(ValueError, match="built for"):
        net(torch.rand(1, 3, 28, 28))


def test_global_average_pooling():
    gap = GlobalAveragePooling()
    x = torch.arange(2 * 3 * 4.0).view(1, 2, 3, 4)
    assert torch.equal(gap(x), x.mean(dim=(2, 3)))
    out = gap((x, x * 2))
    assert isinstance(out, tuple) and torch.equal(out[1], 2 * x.mean(dim=(2, 3)))
    with pytest.raises(ValueError, match="4-D"):
        gap(torch.rand(2, 3))
