"""mmcv 1.x's ``mmcv.cnn.utils``: FLOPs counting, conv-BN fusion, SyncBN reverting, weight init."""

from . import weight_init
from .flops_counter import get_model_complexity_info
from .fuse_conv_bn import fuse_conv_bn
from .sync_bn import revert_sync_batchnorm
from .weight_init import *  # noqa: F403 (its names are listed once, in weight_init.__all__)

# mmcv's cnn.utils re-exports weight_init's names except its three helpers.
_NOT_REEXPORTED = ("BaseInit", "trunc_normal_", "update_init_info")
__all__ = [
    *(name for name in weight_init.__all__ if name not in _NOT_REEXPORTED),
    "fuse_conv_bn",
    "get_model_complexity_info",
    "revert_sync_batchnorm",
]
