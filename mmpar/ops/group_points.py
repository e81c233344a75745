"""mmcv.ops.group_points: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import POINT_CLOUD, unsupported_class, unsupported_function

__all__ = ["GroupAll", "QueryAndGroup", "grouping_operation"]

GroupAll = unsupported_class("GroupAll", POINT_CLOUD, __name__)
QueryAndGroup = unsupported_class("QueryAndGroup", POINT_CLOUD, __name__)
grouping_operation = unsupported_function("grouping_operation", POINT_CLOUD, __name__)
