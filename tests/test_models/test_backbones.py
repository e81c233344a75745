import sys

import pytest
import torch
from torch import nn

from mmpar.models import GlobalAveragePooling, LeNet, ResNet, build_backbone
from mmpar.utils import import_modules_from_strings

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


def _last_norms(net):
    return [block.last_norm for stage in net.layers for block in stage]


def test_resnet_init_weights_as_mmcls():
    net = ResNet(50, stem="cifar", num_stages=2, out_indices=(1,), base_channels=4, stem_channels=8)
    # Built: PyTorch's own initialisation; init_weights() sets the configured one.
    assert all(norm.weight.abs().sum() > 0 for norm in _last_norms(net))
    conv = net.layers[1][0].conv2
    conv.weight.data.fill_(3.0)
    net.init_weights()
    assert all(norm.weight.abs().sum() == 0 for norm in _last_norms(net))
    assert torch.all(net.layers[0][0].norm1.weight == 1)
    fan_out = conv.out_channels * conv.kernel_size[0] * conv.kernel_size[1]
    assert conv.weight.std().item() == pytest.approx((2 / fan_out) ** 0.5, rel=0.2)  # Kaiming
    plain = ResNet(18, stem="cifar", zero_init_residual=False)
    plain.init_weights()
    assert all(torch.all(norm.weight == 1) for norm in _last_norms(plain))


def test_resnet_pretrained_init_cfg_skips_the_zero_init(tmp_path):
    # A Pretrained init_cfg keeps what it loads: no zero-init afterwards (as mmcls).
    source = ResNet(
        18, stem="cifar", num_stages=1, out_indices=(0,), base_channels=4, stem_channels=4
    )
    for norm in _last_norms(source):
        norm.weight.data.fill_(2.0)
    torch.save({"state_dict": source.state_dict()}, tmp_path / "r18.pth")
    net = ResNet(
        18,
        stem="cifar",
        num_stages=1,
        base_channels=4,
        stem_channels=4,
        out_indices=(0,),
        init_cfg=dict(type="Pretrained", checkpoint=str(tmp_path / "r18.pth")),
    )
    net.init_weights()
    assert all(torch.all(norm.weight == 2) for norm in _last_norms(net))


def test_resnet_takes_every_norm_conv_and_activation_of_mmpar_cnn():
    bn = ResNet(18, stem="cifar", num_stages=2, out_indices=(1,), base_channels=4, stem_channels=4)
    ln = ResNet(
        18,
        stem="cifar",
        num_stages=2,
        out_indices=(1,),
        base_channels=4,
        stem_channels=4,
        norm_cfg=dict(type="LN"),
        conv_cfg=dict(type="ConvWS"),
        act_cfg=dict(type="GELU"),
    )
    assert isinstance(ln.stem[1], nn.LayerNorm) and ln.stem[1].normalized_shape == (4,)
    assert type(ln.layers[1][0].conv1).__name__ == "ConvWS2d"
    assert isinstance(ln.layers[0][0].relu, nn.GELU)
    # Only the norms' running statistics differ from the BatchNorm model's keys.
    assert list(ln.state_dict()) == [
        k
        for k in bn.state_dict()
        if not k.endswith(("running_mean", "running_var", "batches_tracked"))
    ]
    with pytest.raises(KeyError, match="NoSuchNorm"):
        ResNet(18, norm_cfg=dict(type="NoSuchNorm"))


PLUGIN = """
import torch
from torch import nn

from mmpar.cnn import NORM_LAYERS


@NORM_LAYERS.register_module()
class PluginChannelNorm(nn.GroupNorm):
    \"\"\"A layer norm over channels (GroupNorm with one group), as a project registers it.\"\"\"

    def __init__(self, num_features, eps=1e-5):
        super().__init__(1, num_features, eps=eps)
"""


@pytest.fixture
def plugin_norm(tmp_path, monkeypatch):
    (tmp_path / "my_norm_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    from mmpar.cnn import NORM_LAYERS

    yield "PluginChannelNorm"
    NORM_LAYERS.module_dict.pop("PluginChannelNorm", None)
    sys.modules.pop("my_norm_plugin", None)


def test_resnet_with_a_norm_a_plugin_registers(plugin_norm):
    # What ``custom_imports=dict(imports=['my_norm_plugin'])`` in a config does.
    import_modules_from_strings(["my_norm_plugin"])
    net = build_backbone(
        dict(
            type="ResNet",
            depth=18,
            stem="cifar",
            base_channels=4,
            stem_channels=4,
            norm_cfg=dict(type=plugin_norm),
        )
    )
    norms = [m for m in net.modules() if type(m).__name__ == plugin_norm]
    assert len(norms) == 1 + 4 * 2 * 2 + 3  # stem, two per block, three shortcuts
    net.init_weights()  # the default Constant init covers GroupNorm subclasses
    assert all(torch.all(norm.weight == 0) for norm in _last_norms(net))
    assert torch.all(net.stem[1].weight == 1)
    (feat,) = net(torch.rand(2, 3, 16, 16))
    assert feat.shape == (2, 32, 2, 2)


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
