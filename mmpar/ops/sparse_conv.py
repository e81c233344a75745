"""mmcv.ops.sparse_conv: not provided (it needs a compiled mmcv-full kernel).

The layers are registered in ``CONV_LAYERS`` under their names as in mmcv, so a config naming
one fails when the layer is built, with the error saying what to use.
"""

from __future__ import annotations

from mmpar.cnn import CONV_LAYERS

from ._unsupported import SPARSE_CONV, unsupported_class

__all__ = [
    "SparseConv2d",
    "SparseConv3d",
    "SparseConvTranspose2d",
    "SparseConvTranspose3d",
    "SparseInverseConv2d",
    "SparseInverseConv3d",
    "SubMConv2d",
    "SubMConv3d",
]


def _layer(name: str) -> type:
    return CONV_LAYERS.register_module(module=unsupported_class(name, SPARSE_CONV, __name__))


SparseConv2d = _layer("SparseConv2d")
SparseConv3d = _layer("SparseConv3d")
# mmcv registers SparseConv4d and SubMConv4d too, without exporting them from mmcv.ops.
SparseConv4d = _layer("SparseConv4d")
SparseConvTranspose2d = _layer("SparseConvTranspose2d")
SparseConvTranspose3d = _layer("SparseConvTranspose3d")
SparseInverseConv2d = _layer("SparseInverseConv2d")
SparseInverseConv3d = _layer("SparseInverseConv3d")
SubMConv2d = _layer("SubMConv2d")
SubMConv3d = _layer("SubMConv3d")
SubMConv4d = _layer("SubMConv4d")
