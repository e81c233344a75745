"""Weight init: one implementation at mmcv's three paths; the INITIALIZERS registry drives it."""

import pytest
import torch
from torch import nn

import mmpar.cnn as cnn
import mmpar.cnn.utils as cnn_utils
import mmpar.cnn.utils.weight_init as cnn_weight_init
import mmpar.runner.model_setup.weight_init as runner_weight_init
from mmpar.runner import BaseModule

NAMES = [
    "INITIALIZERS",
    "BaseInit",
    "Caffe2XavierInit",
    "ConstantInit",
    "KaimingInit",
    "NormalInit",
    "PretrainedInit",
    "TruncNormalInit",
    "UniformInit",
    "XavierInit",
    "bias_init_with_prob",
    "caffe2_xavier_init",
    "constant_init",
    "initialize",
    "kaiming_init",
    "normal_init",
    "trunc_normal_",
    "trunc_normal_init",
    "uniform_init",
    "update_init_info",
    "xavier_init",
]


@pytest.mark.parametrize("name", NAMES)
def test_every_path_serves_the_same_object(name):
    implementation = getattr(runner_weight_init, name)
    assert getattr(cnn_weight_init, name) is implementation
    for package in (cnn, cnn_utils):
        if name in package.__all__:  # mmcv exports a subset at the package level
            assert getattr(package, name) is implementation


def test_registry_holds_mmcvs_names():
    registry = runner_weight_init.INITIALIZERS
    assert registry.name == "initializer"
    assert {name: cls.__name__ for name, cls in registry.module_dict.items()} == {
        "Constant": "ConstantInit",
        "Xavier": "XavierInit",
        "Normal": "NormalInit",
        "TruncNormal": "TruncNormalInit",
        "Uniform": "UniformInit",
        "Kaiming": "KaimingInit",
        "Caffe2Xavier": "Caffe2XavierInit",
        "Pretrained": "PretrainedInit",
    }


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 3)


def test_init_classes_are_callable_on_a_module():
    net = Net()
    cnn.ConstantInit(val=2, bias=3, layer="Conv2d")(net)
    assert torch.all(net.conv.weight == 2) and torch.all(net.conv.bias == 3)
    assert not torch.all(net.fc.weight == 2)
    whole = cnn.ConstantInit(val=5, bias_prob=0.01)
    whole.wholemodule = True  # what ``override`` sets: every sub-module
    whole(net.fc)
    assert torch.all(net.fc.weight == 5)
    assert torch.allclose(net.fc.bias, torch.full((3,), cnn.bias_init_with_prob(0.01)))
    caffe2 = cnn.Caffe2XavierInit(layer="Linear")
    assert (caffe2.a, caffe2.mode, caffe2.nonlinearity, caffe2.distribution) == (
        1,
        "fan_in",
        "leaky_relu",
        "uniform",
    )
    with pytest.raises(TypeError, match="bias"):
        cnn.NormalInit(bias="0")
    with pytest.raises(AssertionError, match="distribution"):
        cnn.KaimingInit(distribution="gaussian")


def test_module_functions_fill_weight_and_bias():
    layer = nn.Linear(200, 300)
    cnn.normal_init(layer, mean=1, std=0.5, bias=2)
    assert layer.weight.mean().item() == pytest.approx(1, abs=0.02)
    assert torch.all(layer.bias == 2)
    cnn.constant_init(nn.ReLU(), 1)  # no weight and no bias: nothing to do
    tensor = cnn_weight_init.trunc_normal_(torch.empty(1000), std=3, a=-1, b=1)
    assert tensor.min() >= -1 and tensor.max() <= 1


class Registered(runner_weight_init.BaseInit):
    """A user's initialiser: weights set to their index in a running count."""

    def __init__(self, start=0, **kwargs):
        super().__init__(**kwargs)
        self.start = start

    def init_module(self, module):
        if hasattr(module, "weight"):
            nn.init.constant_(module.weight, self.start)

    def _get_init_info(self):
        return f"Registered: start={self.start}"


def test_user_registered_initialiser_works_in_init_cfg():
    cnn.INITIALIZERS.register_module(name="TestRegistered", module=Registered)
    try:

        class Model(BaseModule):
            def __init__(self):
                super().__init__(
                    init_cfg=dict(
                        type="TestRegistered",
                        start=7,
                        layer="Conv2d",
                        override=dict(name="fc", type="TestRegistered", start=9),
                    )
                )
                self.net = Net()
                self.fc = nn.Linear(2, 2)

        model = Model()
        model.init_weights()
        assert torch.all(model.net.conv.weight == 7) and torch.all(model.fc.weight == 9)
        assert not torch.all(model.net.fc.weight == 7)  # not a Conv2d
        cnn.initialize(model, dict(type=Registered, start=4, layer="Linear"))  # a class works too
        assert torch.all(model.fc.weight == 4)
    finally:
        cnn.INITIALIZERS.module_dict.pop("TestRegistered")


def test_unknown_type_lists_the_registered_ones():
    with pytest.raises(KeyError, match="Constant") as info:
        cnn.initialize(Net(), dict(type="Orthogonal", layer="Linear"))
    assert isinstance(info.value, ValueError)  # mmpar's earlier contract


def test_init_info_strings_name_the_class_and_arguments():
    assert cnn.XavierInit(gain=2)._get_init_info() == (
        "XavierInit: gain=2, distribution=normal, bias=0"
    )
    assert cnn.TruncNormalInit(std=0.02)._get_init_info() == (
        "TruncNormalInit: a=-2, b=2, mean=0, std=0.02, bias=0"
    )
    assert cnn.UniformInit()._get_init_info() == "UniformInit: a=0.0, b=1.0, bias=0"
    assert cnn.PretrainedInit("x.pth")._get_init_info() == "PretrainedInit: load from x.pth"
