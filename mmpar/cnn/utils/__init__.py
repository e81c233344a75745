"""mmcv 1.x's ``mmcv.cnn.utils``: FLOPs counting, conv-BN fusion, SyncBN reverting, weight init."""

from .flops_counter import get_model_complexity_info
from .fuse_conv_bn import fuse_conv_bn
from .sync_bn import revert_sync_batchnorm
from .weight_init import (
    INITIALIZERS,
    Caffe2XavierInit,
    ConstantInit,
    KaimingInit,
    NormalInit,
    PretrainedInit,
    TruncNormalInit,
    UniformInit,
    XavierInit,
    bias_init_with_prob,
    caffe2_xavier_init,
    constant_init,
    initialize,
    kaiming_init,
    normal_init,
    trunc_normal_init,
    uniform_init,
    xavier_init,
)

__all__ = [
    "INITIALIZERS",
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
    "fuse_conv_bn",
    "get_model_complexity_info",
    "initialize",
    "kaiming_init",
    "normal_init",
    "revert_sync_batchnorm",
    "trunc_normal_init",
    "uniform_init",
    "xavier_init",
]
