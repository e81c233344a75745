"""mmcv.ops.furthest_point_sample: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_function

__all__ = ["furthest_point_sample", "furthest_point_sample_with_dist"]

furthest_point_sample = unsupported_function("furthest_point_sample", POINT_CLOUD, __name__)
furthest_point_sample_with_dist = unsupported_function(
    "furthest_point_sample_with_dist", POINT_CLOUD, __name__
)
