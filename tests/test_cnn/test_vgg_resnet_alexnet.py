"""mmcv's plain VGG/ResNet/AlexNet: mmcv's state-dict names, outputs, freezing, pretrained loading.

mmcv 1.7.2 names these layers as torchvision does (which is why its ``torchvision://``
checkpoints load), so torchvision's models, built without weights, are the reference here.
"""

import pytest
import torch
import torchvision
from torch import nn
from torchvision.models.vgg import cfgs as vgg_cfgs
from torchvision.models.vgg import make_layers as vgg_make_layers

from mmpar.cnn import VGG, AlexNet, ResNet, make_res_layer, make_vgg_layer
from mmpar.cnn.resnet import BasicBlock, Bottleneck
from mmpar.runner import save_checkpoint

BN = ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]


def _keys(prefix, names):
    return [f"{prefix}.{n}" for n in names]


def test_resnet50_first_stage_keys_in_mmcvs_order():
    model = ResNet(50, num_stages=1, strides=(1,), dilations=(1,), out_indices=(0,))
    block0 = (
        ["layer1.0.conv1.weight", "layer1.0.conv2.weight"]  # mmcv creates conv1, conv2,
        + _keys("layer1.0.bn1", BN)  # then bn1, bn2, conv3, bn3
        + _keys("layer1.0.bn2", BN)
        + ["layer1.0.conv3.weight"]
        + _keys("layer1.0.bn3", BN)
        + ["layer1.0.downsample.0.weight"]
        + _keys("layer1.0.downsample.1", BN)
    )
    keys = list(model.state_dict())
    assert keys[: 1 + 5 + len(block0)] == ["conv1.weight", *_keys("bn1", BN), *block0]
    assert len(keys) == 6 + len(block0) + 2 * (3 + 3 * 5)
    assert model.feat_dim == 256


def test_resnet_matches_torchvision_names_and_features():
    torch.manual_seed(0)
    ours = ResNet(18, out_indices=(3,), bn_eval=False).eval()
    reference = torchvision.models.resnet18(weights=None).eval()
    state = {k: v for k, v in reference.state_dict().items() if not k.startswith("fc.")}
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict(state, strict=True)
    x = torch.rand(1, 3, 64, 64)
    trunk = nn.Sequential(*list(reference.children())[:-2])  # without avgpool and fc
    with torch.no_grad():
        assert torch.allclose(ours(x), trunk(x), atol=1e-5)
    with torch.device("meta"):  # names only: no memory, no time
        deep, deep_reference = ResNet(101), torchvision.models.resnet101(weights=None)
    # Bottleneck keys are torchvision's, in mmcv's order (conv1, conv2, bn1, bn2, ...).
    assert sorted(deep.state_dict()) == sorted(
        k for k in deep_reference.state_dict() if not k.startswith("fc.")
    )


def test_resnet_outputs_styles_and_errors():
    model = ResNet(18, out_indices=(0, 1, 2, 3))
    outs = model(torch.rand(2, 3, 32, 32))
    assert [o.shape[1:] for o in outs] == [(64, 8, 8), (128, 4, 4), (256, 2, 2), (512, 1, 1)]
    caffe = ResNet(
        50, style="caffe", num_stages=2, strides=(1, 2), dilations=(1, 1), out_indices=(1,)
    )
    assert caffe.layer2[0].conv1.stride == (2, 2) and caffe.layer2[0].conv2.stride == (1, 1)
    pytorch = ResNet(50, num_stages=2, strides=(1, 2), dilations=(1, 1), out_indices=(1,))
    assert pytorch.layer2[0].conv1.stride == (1, 1) and pytorch.layer2[0].conv2.stride == (2, 2)
    with pytest.raises(KeyError, match="depth"):
        ResNet(20)
    with pytest.raises(AssertionError):
        BasicBlock(4, 4, with_cp=True)
    layer = make_res_layer(Bottleneck, 64, 16, 2, stride=2)
    assert layer[0].downsample is not None and layer[1].downsample is None
    assert layer(torch.rand(1, 64, 8, 8)).shape == (1, 64, 4, 4)


def test_resnet_with_cp_gives_the_same_gradients():
    torch.manual_seed(0)
    plain = ResNet(50, num_stages=1, strides=(1,), dilations=(1,), out_indices=(0,))
    checkpointed = ResNet(
        50, num_stages=1, strides=(1,), dilations=(1,), out_indices=(0,), with_cp=True
    )
    checkpointed.load_state_dict(plain.state_dict())
    x = torch.rand(1, 3, 32, 32, requires_grad=True)
    for model in (plain, checkpointed):
        model(x).sum().backward()
    assert torch.allclose(plain.conv1.weight.grad, checkpointed.conv1.weight.grad, atol=1e-5)


def test_resnet_freezing_and_bn_eval():
    model = ResNet(18, frozen_stages=1, bn_frozen=True)
    model.train()
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
    assert "conv1.weight" in frozen and "layer1.1.conv2.weight" in frozen
    assert "layer2.0.conv1.weight" not in frozen
    assert all(
        not p.requires_grad
        for m in model.modules()
        if isinstance(m, nn.BatchNorm2d)
        for p in m.parameters()
    )
    assert not model.layer1.training and not model.bn1.training and model.layer2.training
    assert not model.layer2[0].bn1.training  # bn_eval keeps every BN in eval mode
    trainable = ResNet(18, bn_eval=False)
    trainable.train()
    assert all(m.training for m in trainable.modules())


def test_vgg_keys_follow_mmcvs_flat_features():
    # Stage blocks of VGG-11 start (1, 1, ...): conv, relu, pool per stage (BN after conv).
    assert list(VGG(11, num_stages=2, dilations=(1, 1), out_indices=(1,)).state_dict()) == [
        "features.0.weight",
        "features.0.bias",
        "features.3.weight",
        "features.3.bias",
    ]
    with_bn = VGG(11, with_bn=True, num_stages=2, dilations=(1, 1), out_indices=(1,))
    assert list(with_bn.state_dict()) == (
        ["features.0.weight", "features.0.bias", *_keys("features.1", BN)]
        + ["features.4.weight", "features.4.bias", *_keys("features.5", BN)]
    )
    assert with_bn.range_sub_modules == [[0, 4], [4, 8]]


def test_vgg_matches_torchvision():
    with torch.device("meta"):
        ours, reference = (
            VGG(16, with_bn=True, num_classes=10),
            torchvision.models.vgg16_bn(weights=None, num_classes=10),
        )
    assert list(ours.state_dict()) == list(reference.state_dict())
    torch.manual_seed(0)
    features = VGG(11, out_indices=(4,)).eval()
    reference_features = vgg_make_layers(vgg_cfgs["A"]).eval()
    features.features.load_state_dict(reference_features.state_dict(), strict=True)
    x = torch.rand(1, 3, 32, 32)
    with torch.no_grad():
        assert torch.allclose(features(x), reference_features(x), atol=1e-5)


def test_vgg_outputs_without_last_pool_and_freezing():
    model = VGG(11, num_stages=3, dilations=(1, 1, 2), out_indices=(0, 2), with_last_pool=False)
    first, last = model(torch.rand(1, 3, 32, 32))
    assert first.shape == (1, 64, 16, 16) and last.shape == (1, 256, 8, 8)
    frozen = VGG(11, with_bn=True, frozen_stages=2, bn_eval=False)
    frozen.train()
    assert [p.requires_grad for p in frozen.features[0].parameters()] == [False, False]
    assert not frozen.features[5].training and frozen.features[8].training
    assert len(make_vgg_layer(3, 8, 2, with_bn=True)) == 7
    with pytest.raises(KeyError, match="depth"):
        VGG(12)


def test_alexnet_matches_torchvision_names():
    with torch.device("meta"):
        ours = AlexNet(num_classes=10)
        reference = torchvision.models.alexnet(weights=None, num_classes=10)
    assert list(ours.state_dict()) == list(reference.state_dict())
    assert AlexNet()(torch.rand(1, 3, 224, 224)).shape == (1, 256, 6, 6)


def test_init_weights_default_and_pretrained(tmp_path):
    torch.manual_seed(0)
    model = VGG(11, with_bn=True, num_stages=1, dilations=(1,), out_indices=(0,))
    nn.init.constant_(model.features[1].weight, 3)
    model.init_weights()
    assert torch.all(model.features[1].weight == 1) and torch.all(model.features[0].bias == 0)
    # Kaiming normal, fan-out, ReLU gain: std = sqrt(2 / (64 * 3 * 3)).
    assert model.features[0].weight.std().item() == pytest.approx((2 / 576) ** 0.5, rel=0.1)
    source = ResNet(18)
    path = tmp_path / "resnet18.pth"
    save_checkpoint(source, str(path))
    target = ResNet(18)
    target.init_weights(pretrained=str(path))
    assert torch.equal(target.layer4[1].conv2.weight, source.layer4[1].conv2.weight)
    with pytest.raises(TypeError, match="pretrained"):
        target.init_weights(pretrained=3)
    AlexNet().init_weights()  # keeps PyTorch's initialisation
