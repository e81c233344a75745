"""mmcv's module initialisers (constant_init, kaiming_init, ...) and trunc_normal_."""

import math

import pytest
import torch
from torch import nn

from mmpar.runner.model_setup.weight_init import (
    bias_init_with_prob,
    caffe2_xavier_init,
    constant_init,
    kaiming_init,
    normal_init,
    trunc_normal_,
    trunc_normal_init,
    uniform_init,
    xavier_init,
)


def _conv(bias=True):
    return nn.Conv2d(64, 32, 3, bias=bias)


def test_constant_init_sets_weight_and_bias_and_skips_missing_ones():
    conv = _conv()
    constant_init(conv, 0.5, bias=2)
    assert torch.equal(conv.weight, torch.full_like(conv.weight, 0.5))
    assert torch.equal(conv.bias, torch.full((32,), 2.0))
    no_bias = _conv(bias=False)
    constant_init(no_bias, 1)
    assert torch.equal(no_bias.weight, torch.ones_like(no_bias.weight))
    ln = nn.LayerNorm(4, elementwise_affine=False)  # weight and bias are None
    constant_init(ln, 1)
    constant_init(nn.ReLU(), 1)  # no weight at all
    bn = nn.BatchNorm2d(3)
    constant_init(bn, 1, bias=0)
    assert torch.equal(bn.weight, torch.ones(3)) and torch.equal(bn.bias, torch.zeros(3))


def _inverse_cdf_trunc_normal(w, mean, std, a, b):
    # mmcv's sampler (torch 2.x's nn.init.trunc_normal_ redraws instead: other values).
    cdf = [(1 + math.erf((x - mean) / std / math.sqrt(2))) / 2 for x in (a, b)]
    u = torch.empty_like(w).uniform_(2 * cdf[0] - 1, 2 * cdf[1] - 1)
    w.copy_((torch.erfinv(u) * (std * math.sqrt(2)) + mean).clamp(a, b))


def test_each_init_matches_torch_with_the_same_random_draws():
    fan_in, fan_out = 64 * 9, 32 * 9
    cases = [
        (lambda m: xavier_init(m, gain=2, distribution="uniform"),
         lambda w: nn.init.xavier_uniform_(w, gain=2)),
        (lambda m: xavier_init(m), lambda w: nn.init.xavier_normal_(w)),
        (lambda m: normal_init(m, mean=1, std=0.1), lambda w: nn.init.normal_(w, 1, 0.1)),
        (lambda m: uniform_init(m, a=-1, b=3), lambda w: nn.init.uniform_(w, -1, 3)),
        (lambda m: trunc_normal_init(m, std=0.02, a=-0.04, b=0.04),
         lambda w: _inverse_cdf_trunc_normal(w, 0, 0.02, -0.04, 0.04)),
        (lambda m: kaiming_init(m),
         lambda w: nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")),
        (lambda m: kaiming_init(m, a=0.1, mode="fan_in", nonlinearity="leaky_relu",
                                distribution="uniform"),
         lambda w: nn.init.kaiming_uniform_(w, a=0.1, mode="fan_in", nonlinearity="leaky_relu")),
        (lambda m: caffe2_xavier_init(m),
         lambda w: nn.init.kaiming_uniform_(w, a=1, mode="fan_in", nonlinearity="leaky_relu")),
    ]  # fmt: skip
    for ours, torchs in cases:
        conv = _conv()
        torch.manual_seed(7)
        ours(conv)
        expected = torch.empty_like(conv.weight)
        torch.manual_seed(7)
        torchs(expected)
        assert torch.equal(conv.weight, expected)
        assert torch.equal(conv.bias, torch.zeros(32))
    assert fan_in > fan_out  # the fan_out default of kaiming_init is the smaller std
    conv = _conv()
    kaiming_init(conv, bias=0.3)
    assert conv.weight.std().item() == pytest.approx(math.sqrt(2 / fan_out), rel=0.05)
    assert torch.equal(conv.bias, torch.full((32,), 0.3))


def test_bias_arguments():
    for init in (xavier_init, normal_init, uniform_init, trunc_normal_init, kaiming_init,
                 caffe2_xavier_init):  # fmt: skip
        linear = nn.Linear(3, 4)
        init(linear, bias=1.5)
        assert torch.equal(linear.bias, torch.full((4,), 1.5)), init.__name__


def test_bad_distribution_is_an_assertion():
    with pytest.raises(AssertionError):
        xavier_init(_conv(), distribution="laplace")
    with pytest.raises(AssertionError):
        kaiming_init(_conv(), distribution="laplace")


def test_trunc_normal_():
    torch.manual_seed(0)
    t = torch.empty(10000)
    out = trunc_normal_(t, mean=0.5, std=1.0, a=0.0, b=1.0)
    assert out is t
    assert t.min() >= 0.0 and t.max() <= 1.0
    assert trunc_normal_(torch.empty(20000), std=0.02).std().item() == pytest.approx(0.02, rel=0.05)


def test_bias_init_with_prob():
    assert bias_init_with_prob(0.01) == pytest.approx(-math.log(99))
    assert isinstance(bias_init_with_prob(0.5), float) and bias_init_with_prob(0.5) == 0.0
