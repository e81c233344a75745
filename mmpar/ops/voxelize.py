"""mmcv.ops.voxelize: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_class, unsupported_function

__all__ = ["Voxelization", "voxelization"]

Voxelization = unsupported_class("Voxelization", POINT_CLOUD, __name__)
voxelization = unsupported_function("voxelization", POINT_CLOUD, __name__)
