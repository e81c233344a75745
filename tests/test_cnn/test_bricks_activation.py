"""Activation builders and mmcv's own activations, against torch's functions."""

import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mmpar.cnn.bricks import HSigmoid, HSwish, Swish, build_activation_layer
from mmpar.cnn.bricks.activation import GELU, Clamp

X = torch.linspace(-5, 5, 41)


@pytest.mark.parametrize(
    ("cfg", "expected"),
    [
        (dict(type="ReLU"), F.relu(X)),
        (dict(type="LeakyReLU", negative_slope=0.2), F.leaky_relu(X, 0.2)),
        (dict(type="ReLU6"), F.relu6(X)),
        (dict(type="ELU"), F.elu(X)),
        (dict(type="Sigmoid"), torch.sigmoid(X)),
        (dict(type="Tanh"), torch.tanh(X)),
        (dict(type="SiLU"), F.silu(X)),
        (dict(type="GELU"), F.gelu(X)),
        (dict(type="Clamp"), X.clamp(-1, 1)),
        (dict(type="Clip", min=0, max=2.5), X.clamp(0, 2.5)),
        (dict(type="HSwish"), F.hardswish(X)),
        (dict(type="HSigmoid"), F.hardsigmoid(X)),
        (dict(type="Swish"), X * torch.sigmoid(X)),
    ],
)
def test_built_activations_compute_torchs_function(cfg, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # HSigmoid's defaults notice
        layer = build_activation_layer(cfg)
    assert torch.allclose(layer(X.clone()), expected, atol=1e-6)


def test_builder_errors():
    with pytest.raises(TypeError):
        build_activation_layer("ReLU")
    with pytest.raises(KeyError):
        build_activation_layer(dict(inplace=True))
    with pytest.raises(KeyError):
        build_activation_layer(dict(type="NoSuchAct"))
    with pytest.raises(TypeError):
        build_activation_layer(dict(type="Tanh", inplace=True))  # Tanh takes no inplace


def test_inplace_reaches_the_layer():
    assert build_activation_layer(dict(type="ReLU", inplace=True)).inplace
    assert not build_activation_layer(dict(type="ReLU")).inplace


def test_hsigmoid_arguments_warning_and_input_untouched():
    with pytest.warns(UserWarning, match="1.4.4"):
        act = HSigmoid(bias=1.0, divisor=2.0, min_value=0.0, max_value=1.0)
    x = X.clone()
    assert torch.allclose(act(x), ((X + 1) / 2).clamp(0, 1))
    assert torch.equal(x, X)  # clamps a new tensor, not the input
    with pytest.raises(AssertionError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        HSigmoid(divisor=0)


def test_hswish_gelu_swish_clamp_modules():
    assert torch.allclose(HSwish()(X.clone()), F.hardswish(X), atol=1e-6)
    assert HSwish(inplace=True).act.inplace
    assert torch.allclose(GELU()(X), F.gelu(X))
    assert torch.allclose(Swish()(X), F.silu(X), atol=1e-6)
    clamp = Clamp(min=-0.5, max=0.5)
    assert (clamp.min, clamp.max) == (-0.5, 0.5)
    assert torch.equal(clamp(X), X.clamp(-0.5, 0.5))
    assert list(Swish().state_dict()) == [] and list(HSwish().state_dict()) == []


def test_prelu_has_a_weight():
    layer = build_activation_layer(dict(type="PReLU", num_parameters=3))
    assert isinstance(layer, nn.PReLU) and list(layer.state_dict()) == ["weight"]
