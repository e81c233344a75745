import pytest
import torch
from torch.autograd import gradcheck

from mmpar.cnn import UPSAMPLE_LAYERS, build_upsample_layer
from mmpar.ops.carafe import CARAFE, CARAFENaive, CARAFEPack, carafe, carafe_naive


def _reference(feat, masks, k, g, s):
    """The loop of mmcv's naive kernel."""
    n, c, h, w = feat.shape
    out = torch.zeros(n, c, h * s, w * s, dtype=feat.dtype)
    r = (k - 1) // 2
    for b in range(n):
        for ch in range(c):
            grp = ch // (c // g)
            for py in range(h * s):
                for px in range(w * s):
                    cy, cx = py // s, px // s
                    acc = 0.0
                    for iy in range(cy - r, cy + r + 1):
                        for ix in range(cx - r, cx + r + 1):
                            if 0 <= iy < h and 0 <= ix < w:
                                m = (grp * k + iy - cy + r) * k + ix - cx + r
                                acc = acc + feat[b, ch, iy, ix] * masks[b, m, py, px]
                    out[b, ch, py, px] = acc
    return out


@pytest.mark.parametrize(("k", "g", "s"), [(3, 1, 2), (5, 2, 1), (1, 2, 3)])
def test_carafe_matches_kernel_loop(k, g, s):
    torch.manual_seed(0)
    feat = torch.randn(2, 2, 3, 2)
    masks = torch.rand(2, k * k * g, 3 * s, 2 * s)
    expected = _reference(feat, masks, k, g, s)
    torch.testing.assert_close(carafe(feat, masks, k, g, s), expected)
    torch.testing.assert_close(carafe_naive(feat, masks, k, g, s), expected)
    torch.testing.assert_close(CARAFE(k, g, s)(feat, masks), expected)
    torch.testing.assert_close(CARAFENaive(k, g, s)(feat, masks), expected)


def test_carafe_gradcheck():
    torch.manual_seed(0)
    feat = torch.randn(1, 2, 2, 2, dtype=torch.float64, requires_grad=True)
    masks = torch.rand(1, 18, 2, 2, dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda f, m: carafe(f, m, 3, 2, 1), (feat, masks), fast_mode=True)


def test_carafe_argument_checks():
    feat = torch.zeros(1, 4, 2, 2)
    with pytest.raises(AssertionError):
        carafe(feat, torch.zeros(1, 9, 4, 4), 3, 2, 2)  # needs 18 mask channels
    with pytest.raises(AssertionError):
        carafe(feat, torch.zeros(1, 4, 4, 4), 2, 1, 2)  # even kernel
    with pytest.raises(AssertionError):
        CARAFE(3, 1, 2.0)


def test_carafe_pack_names_registry_and_output():
    assert UPSAMPLE_LAYERS.get("carafe") is CARAFEPack
    layer = build_upsample_layer(
        dict(type="carafe", channels=4, scale_factor=2, compressed_channels=8)
    )
    assert isinstance(layer, CARAFEPack)
    assert sorted(layer.state_dict()) == [
        "channel_compressor.bias",
        "channel_compressor.weight",
        "content_encoder.bias",
        "content_encoder.weight",
    ]
    assert layer.content_encoder.out_channels == 5 * 5 * 1 * 2 * 2
    assert layer.content_encoder.weight.std() < 0.01  # N(0, 0.001) start
    torch.manual_seed(0)
    x = torch.randn(1, 4, 3, 3)
    out = layer(x)
    assert out.shape == (1, 4, 6, 6)
    # the normalised kernels sum to one per output pixel and group
    mask = layer.kernel_normalizer(layer.content_encoder(layer.channel_compressor(x)))
    torch.testing.assert_close(mask.sum(1), torch.ones(1, 6, 6))
    torch.testing.assert_close(out, _reference(x, mask, 5, 1, 2))
