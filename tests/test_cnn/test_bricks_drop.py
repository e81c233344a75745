"""DropPath, Dropout, build_dropout and Scale."""

import pytest
import torch
from torch import nn

from mmpar.cnn.bricks import Dropout, DropPath, Scale, build_dropout
from mmpar.cnn.bricks.drop import drop_path


def test_drop_path_is_the_identity_outside_training_or_at_zero():
    x = torch.randn(4, 3, 2, 2)
    assert drop_path(x) is x
    assert drop_path(x, 0.5, training=False) is x
    assert drop_path(x, 0.0, training=True) is x
    layer = DropPath(0.5).eval()
    assert layer(x) is x


@pytest.mark.parametrize("shape", [(64, 3), (64, 2, 3), (64, 2, 3, 4)])
def test_drop_path_drops_whole_samples_and_rescales(shape):
    torch.manual_seed(0)
    x = torch.rand(shape) + 1  # no zeros of its own
    out = DropPath(drop_prob=0.25).train()(x)
    per_sample = out.reshape(shape[0], -1)
    dropped = (per_sample == 0).all(dim=1)
    kept = ~dropped
    assert dropped.any() and kept.any()
    assert torch.allclose(per_sample[kept], x.reshape(shape[0], -1)[kept] / 0.75)
    assert (per_sample[dropped] == 0).all()


def test_drop_path_rate_and_expectation():
    torch.manual_seed(1)
    x = torch.ones(20000, 1)
    out = drop_path(x, 0.3, training=True)
    assert (out == 0).float().mean().item() == pytest.approx(0.3, abs=0.02)
    assert out.mean().item() == pytest.approx(1.0, abs=0.03)


def test_defaults_and_dropout():
    assert DropPath().drop_prob == 0.1
    d = Dropout()
    assert isinstance(d, nn.Dropout) and d.p == 0.5 and not d.inplace
    d = Dropout(drop_prob=0.2, inplace=True)
    assert d.p == 0.2 and d.inplace
    x = torch.randn(5, 5)
    assert torch.equal(d.eval()(x), x)


def test_build_dropout():
    layer = build_dropout(dict(type="DropPath", drop_prob=0.2))
    assert isinstance(layer, DropPath) and layer.drop_prob == 0.2
    layer = build_dropout(dict(type="Dropout"), default_args=dict(drop_prob=0.3))
    assert isinstance(layer, Dropout) and layer.p == 0.3
    layer = build_dropout(dict(type="Dropout", drop_prob=0.1), default_args=dict(drop_prob=0.3))
    assert layer.p == 0.1
    with pytest.raises(KeyError):
        build_dropout(dict(type="DropBlock"))
    with pytest.raises(TypeError):
        build_dropout("Dropout")


def test_scale():
    s = Scale()
    assert list(s.state_dict()) == ["scale"]
    assert s.scale.dtype == torch.float32 and s.scale.shape == () and s.scale.item() == 1.0
    s = Scale(2.5)
    x = torch.randn(2, 3)
    assert torch.allclose(s(x), x * 2.5)
    s(x).sum().backward()
    assert s.scale.grad is not None
