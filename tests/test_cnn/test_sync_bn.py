"""revert_sync_batchnorm: SyncBatchNorm layers become plain BatchNorm with the same state."""

import torch
from torch import nn

from mmpar.cnn.utils import revert_sync_batchnorm
from mmpar.cnn.utils.sync_bn import _BatchNormXd


def _trained_sync_bn(num_features, **kwargs):
    layer = nn.SyncBatchNorm(num_features, **kwargs)
    with torch.no_grad():
        layer.running_mean.uniform_(-1, 1)
        layer.running_var.uniform_(0.5, 2)
        layer.num_batches_tracked.fill_(7)
        if layer.affine:
            layer.weight.uniform_(0.5, 2)
            layer.bias.uniform_(-1, 1)
    return layer


def test_nested_sync_bn_layers_are_converted_with_their_state():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 4, 1),
        _trained_sync_bn(4),
        nn.Sequential(_trained_sync_bn(4, affine=False, momentum=0.3, eps=1e-3)),
    )
    old_affine, old_plain = model[1], model[2][0]
    model[2].eval()
    reverted = revert_sync_batchnorm(model)
    assert reverted is model
    new_affine, new_plain = model[1], model[2][0]
    assert not any(isinstance(m, nn.SyncBatchNorm) for m in model.modules())
    assert isinstance(new_affine, _BatchNormXd) and isinstance(new_plain, _BatchNormXd)
    # The same tensors (parameters shared, buffers kept), the same settings and modes.
    assert new_affine.weight is old_affine.weight and new_affine.bias is old_affine.bias
    assert new_affine.running_mean is old_affine.running_mean
    assert torch.equal(new_plain.running_var, old_plain.running_var)
    assert int(new_plain.num_batches_tracked) == 7
    assert (new_plain.eps, new_plain.momentum, new_plain.affine) == (1e-3, 0.3, False)
    assert new_affine.training and not new_plain.training
    # It runs on the CPU and on any input rank (SyncBatchNorm needs a process group).
    model.eval()
    expected = (torch.ones(2, 4, 5, 5) - old_affine.running_mean[:, None, None]) / torch.sqrt(
        old_affine.running_var[:, None, None] + old_affine.eps
    ) * old_affine.weight[:, None, None] + old_affine.bias[:, None, None]
    assert torch.allclose(new_affine(torch.ones(2, 4, 5, 5)), expected, atol=1e-6)
    assert new_plain(torch.rand(2, 4)).shape == (2, 4)


def test_top_level_sync_bn_is_replaced_and_qconfig_kept():
    layer = _trained_sync_bn(3)
    layer.qconfig = "marker"
    reverted = revert_sync_batchnorm(layer)
    assert isinstance(reverted, _BatchNormXd) and reverted is not layer
    assert reverted.qconfig == "marker"


def test_other_layers_are_left_alone():
    model = nn.Sequential(nn.BatchNorm2d(3), nn.Linear(2, 2))
    before = list(model)
    revert_sync_batchnorm(model)
    assert list(model) == before
