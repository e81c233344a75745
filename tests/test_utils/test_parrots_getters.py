import torch
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd, _ConvTransposeMixin
from torch.nn.modules.instancenorm import _InstanceNorm
from torch.nn.modules.pooling import _AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd, _AvgPoolNd, _MaxPoolNd
from torch.utils.data import DataLoader

from mmpar.utils import parrots_wrapper as pw


def test_private_getters_return_torch_classes_in_mmcv_order():
    # mmpose 0.29 unpacks ``_, DataLoader = _get_dataloader()``.
    assert pw._get_dataloader() == (DataLoader, DataLoader)
    assert pw._get_conv() == (_ConvNd, _ConvTransposeMixin)
    assert pw._get_pool() == (_AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd, _AvgPoolNd, _MaxPoolNd)
    assert pw._get_norm() == (_BatchNorm, _InstanceNorm, torch.nn.SyncBatchNorm)
