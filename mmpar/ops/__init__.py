"""mmcv.ops without compiling: every public name of mmcv 1.7.2's ``mmcv.ops``, at its path.

Three kinds of names (the table in ``docs/migrating_from_mmcv.md`` lists each):

- on torchvision's kernels, with mmcv's signatures and return values: ``nms``,
  ``batched_nms``, ``RoIAlign``, ``RoIPool``, ``DeformConv2d``, ``ModulatedDeformConv2d``,
  the focal losses, ...;
- in plain PyTorch: ``point_sample``, ``CARAFE``, ``CornerPool``, ``soft_nms``,
  ``bbox_overlaps``, the rotated-box family (``box_iou_rotated``, ``nms_rotated``,
  ``RoIAlignRotated``, ``convex_iou``, ...), the 3D point-cloud ops (``furthest_point_sample``,
  ``ball_query``, ``points_in_boxes_*``, ``nms3d``, ``RoIAwarePool3d``, ...;
  ``docs/ops_point_cloud.md``), ``BorderAlign``, ``Correlation``, ``DeformRoIPool``,
  ``PrRoIPool``, ...;
- in numpy, on CPU copies as in mmcv: text detection's ``pixel_group`` and ``contour_expand``.

:class:`UnsupportedOpError` (a ``NotImplementedError``) stays for stand-ins: none is left, but
the port tool still recognises one should a name ever need it again.

Each op module also has the rest of its mmcv module's names: mmcv's autograd ``Function``
classes (``mmpar.ops.roi_align.RoIAlignFunction``, ``mmpar.ops.nms.NMSop``, ...; see
``mmpar.ops._autograd``) and the helpers mmcv imports there.

Importing this package registers what importing ``mmcv.ops`` did: ``'DCN'``, ``'DCNv2'``,
``'SAC'`` and the sparse convolutions in ``CONV_LAYERS``, ``'MMSyncBN'`` in ``NORM_LAYERS``,
``'carafe'`` in ``UPSAMPLE_LAYERS``, ``CrissCrossAttention`` in ``PLUGIN_LAYERS`` and
``MultiScaleDeformableAttention`` in ``ATTENTION``.
"""

# mmcv.ops has it (mmcv.utils'); mmcv defines its *_MLU layers only when it is True.
from mmpar.utils import IS_MLU_AVAILABLE as IS_MLU_AVAILABLE

from ._unsupported import UnsupportedOpError
from .active_rotated_filter import active_rotated_filter
from .assign_score_withk import assign_score_withk
from .ball_query import ball_query
from .bbox import bbox_overlaps
from .border_align import BorderAlign, border_align
from .box_iou_quadri import box_iou_quadri
from .box_iou_rotated import box_iou_rotated
from .carafe import CARAFE, CARAFENaive, CARAFEPack, carafe, carafe_naive
from .cc_attention import CrissCrossAttention
from .chamfer_distance import chamfer_distance
from .contour_expand import contour_expand
from .convex_iou import convex_giou, convex_iou
from .corner_pool import CornerPool
from .correlation import Correlation
from .deform_conv import DeformConv2d, DeformConv2dPack, deform_conv2d
from .deform_roi_pool import (
    DeformRoIPool,
    DeformRoIPoolPack,
    ModulatedDeformRoIPoolPack,
    deform_roi_pool,
)
from .deprecated_wrappers import Conv2d_deprecated as Conv2d
from .deprecated_wrappers import ConvTranspose2d_deprecated as ConvTranspose2d
from .deprecated_wrappers import Linear_deprecated as Linear
from .deprecated_wrappers import MaxPool2d_deprecated as MaxPool2d
from .diff_iou_rotated import diff_iou_rotated_2d, diff_iou_rotated_3d
from .focal_loss import SigmoidFocalLoss, SoftmaxFocalLoss, sigmoid_focal_loss, softmax_focal_loss
from .furthest_point_sample import furthest_point_sample, furthest_point_sample_with_dist
from .fused_bias_leakyrelu import FusedBiasLeakyReLU, fused_bias_leakyrelu
from .gather_points import gather_points
from .group_points import GroupAll, QueryAndGroup, grouping_operation
from .info import get_compiler_version, get_compiling_cuda_version, get_onnxruntime_op_path
from .iou3d import (
    boxes_iou3d,
    boxes_iou_bev,
    boxes_overlap_bev,
    nms3d,
    nms3d_normal,
    nms_bev,
    nms_normal_bev,
)
from .knn import knn
from .masked_conv import MaskedConv2d, masked_conv2d
from .min_area_polygons import min_area_polygons
from .modulated_deform_conv import (
    ModulatedDeformConv2d,
    ModulatedDeformConv2dPack,
    modulated_deform_conv2d,
)
from .multi_scale_deform_attn import MultiScaleDeformableAttention
from .nms import batched_nms, nms, nms_match, nms_quadri, nms_rotated, soft_nms
from .pixel_group import pixel_group
from .point_sample import SimpleRoIAlign, point_sample, rel_roi_point_to_rel_img_point
from .points_in_boxes import points_in_boxes_all, points_in_boxes_cpu, points_in_boxes_part
from .points_in_polygons import points_in_polygons
from .points_sampler import PointsSampler
from .prroi_pool import PrRoIPool, prroi_pool
from .psa_mask import PSAMask
from .riroi_align_rotated import RiRoIAlignRotated, riroi_align_rotated
from .roi_align import RoIAlign, roi_align
from .roi_align_rotated import RoIAlignRotated, roi_align_rotated
from .roi_pool import RoIPool, roi_pool
from .roiaware_pool3d import RoIAwarePool3d
from .roipoint_pool3d import RoIPointPool3d
from .rotated_feature_align import rotated_feature_align
from .saconv import SAConv2d
from .scatter_points import DynamicScatter, dynamic_scatter
from .sparse_conv import (
    SparseConv2d,
    SparseConv3d,
    SparseConvTranspose2d,
    SparseConvTranspose3d,
    SparseInverseConv2d,
    SparseInverseConv3d,
    SubMConv2d,
    SubMConv3d,
)
from .sparse_modules import SparseModule, SparseSequential
from .sparse_pool import SparseMaxPool2d, SparseMaxPool3d
from .sparse_structure import SparseConvTensor, scatter_nd
from .sync_bn import SyncBatchNorm
from .three_interpolate import three_interpolate
from .three_nn import three_nn
from .tin_shift import TINShift, tin_shift
from .upfirdn2d import upfirdn2d
from .voxelize import Voxelization, voxelization

__all__ = [
    "CARAFE",
    "BorderAlign",
    "CARAFENaive",
    "CARAFEPack",
    "Conv2d",
    "ConvTranspose2d",
    "CornerPool",
    "Correlation",
    "CrissCrossAttention",
    "DeformConv2d",
    "DeformConv2dPack",
    "DeformRoIPool",
    "DeformRoIPoolPack",
    "DynamicScatter",
    "FusedBiasLeakyReLU",
    "GroupAll",
    "Linear",
    "MaskedConv2d",
    "MaxPool2d",
    "ModulatedDeformConv2d",
    "ModulatedDeformConv2dPack",
    "ModulatedDeformRoIPoolPack",
    "MultiScaleDeformableAttention",
    "PSAMask",
    "PointsSampler",
    "PrRoIPool",
    "QueryAndGroup",
    "RiRoIAlignRotated",
    "RoIAlign",
    "RoIAlignRotated",
    "RoIAwarePool3d",
    "RoIPointPool3d",
    "RoIPool",
    "SAConv2d",
    "SigmoidFocalLoss",
    "SimpleRoIAlign",
    "SoftmaxFocalLoss",
    "SparseConv2d",
    "SparseConv3d",
    "SparseConvTensor",
    "SparseConvTranspose2d",
    "SparseConvTranspose3d",
    "SparseInverseConv2d",
    "SparseInverseConv3d",
    "SparseMaxPool2d",
    "SparseMaxPool3d",
    "SparseModule",
    "SparseSequential",
    "SubMConv2d",
    "SubMConv3d",
    "SyncBatchNorm",
    "TINShift",
    "UnsupportedOpError",
    "Voxelization",
    "active_rotated_filter",
    "assign_score_withk",
    "ball_query",
    "batched_nms",
    "bbox_overlaps",
    "border_align",
    "box_iou_quadri",
    "box_iou_rotated",
    "boxes_iou3d",
    "boxes_iou_bev",
    "boxes_overlap_bev",
    "carafe",
    "carafe_naive",
    "chamfer_distance",
    "contour_expand",
    "convex_giou",
    "convex_iou",
    "deform_conv2d",
    "deform_roi_pool",
    "diff_iou_rotated_2d",
    "diff_iou_rotated_3d",
    "dynamic_scatter",
    "furthest_point_sample",
    "furthest_point_sample_with_dist",
    "fused_bias_leakyrelu",
    "gather_points",
    "get_compiler_version",
    "get_compiling_cuda_version",
    "get_onnxruntime_op_path",
    "grouping_operation",
    "knn",
    "masked_conv2d",
    "min_area_polygons",
    "modulated_deform_conv2d",
    "nms",
    "nms3d",
    "nms3d_normal",
    "nms_bev",
    "nms_match",
    "nms_normal_bev",
    "nms_quadri",
    "nms_rotated",
    "pixel_group",
    "point_sample",
    "points_in_boxes_all",
    "points_in_boxes_cpu",
    "points_in_boxes_part",
    "points_in_polygons",
    "prroi_pool",
    "rel_roi_point_to_rel_img_point",
    "riroi_align_rotated",
    "roi_align",
    "roi_align_rotated",
    "roi_pool",
    "rotated_feature_align",
    "scatter_nd",
    "sigmoid_focal_loss",
    "soft_nms",
    "softmax_focal_loss",
    "three_interpolate",
    "three_nn",
    "tin_shift",
    "upfirdn2d",
    "voxelization",
]
