"""Every name of mmcv 1.7.2's mmcv.ops imports at its path; the unprovided ones fail clearly."""

import importlib

import pytest
import torch

import mmpar.ops
from mmpar.cnn import CONV_LAYERS, ConvAWS2d
from mmpar.ops import UnsupportedOpError
from mmpar.ops._unsupported import unsupported_class
from mmpar.utils import Registry

# mmcv 1.7.2's mmcv/ops/__init__.py: submodule -> the names it re-exports from it.
MMCV_OPS = {
    "active_rotated_filter": ["active_rotated_filter"],
    "assign_score_withk": ["assign_score_withk"],
    "ball_query": ["ball_query"],
    "bbox": ["bbox_overlaps"],
    "border_align": ["BorderAlign", "border_align"],
    "box_iou_quadri": ["box_iou_quadri"],
    "box_iou_rotated": ["box_iou_rotated"],
    "carafe": ["CARAFE", "CARAFENaive", "CARAFEPack", "carafe", "carafe_naive"],
    "cc_attention": ["CrissCrossAttention"],
    "chamfer_distance": ["chamfer_distance"],
    "contour_expand": ["contour_expand"],
    "convex_iou": ["convex_giou", "convex_iou"],
    "corner_pool": ["CornerPool"],
    "correlation": ["Correlation"],
    "deform_conv": ["DeformConv2d", "DeformConv2dPack", "deform_conv2d"],
    "deform_roi_pool": [
        "DeformRoIPool",
        "DeformRoIPoolPack",
        "ModulatedDeformRoIPoolPack",
        "deform_roi_pool",
    ],
    "deprecated_wrappers": ["Conv2d", "ConvTranspose2d", "Linear", "MaxPool2d"],
    "diff_iou_rotated": ["diff_iou_rotated_2d", "diff_iou_rotated_3d"],
    "focal_loss": [
        "SigmoidFocalLoss",
        "SoftmaxFocalLoss",
        "sigmoid_focal_loss",
        "softmax_focal_loss",
    ],
    "furthest_point_sample": ["furthest_point_sample", "furthest_point_sample_with_dist"],
    "fused_bias_leakyrelu": ["FusedBiasLeakyReLU", "fused_bias_leakyrelu"],
    "gather_points": ["gather_points"],
    "group_points": ["GroupAll", "QueryAndGroup", "grouping_operation"],
    "info": ["get_compiler_version", "get_compiling_cuda_version", "get_onnxruntime_op_path"],
    "iou3d": [
        "boxes_iou3d",
        "boxes_iou_bev",
        "boxes_overlap_bev",
        "nms3d",
        "nms3d_normal",
        "nms_bev",
        "nms_normal_bev",
    ],
    "knn": ["knn"],
    "masked_conv": ["MaskedConv2d", "masked_conv2d"],
    "min_area_polygons": ["min_area_polygons"],
    "modulated_deform_conv": [
        "ModulatedDeformConv2d",
        "ModulatedDeformConv2dPack",
        "modulated_deform_conv2d",
    ],
    "multi_scale_deform_attn": ["MultiScaleDeformableAttention"],
    "nms": ["batched_nms", "nms", "nms_match", "nms_quadri", "nms_rotated", "soft_nms"],
    "pixel_group": ["pixel_group"],
    "point_sample": ["SimpleRoIAlign", "point_sample", "rel_roi_point_to_rel_img_point"],
    "points_in_boxes": ["points_in_boxes_all", "points_in_boxes_cpu", "points_in_boxes_part"],
    "points_in_polygons": ["points_in_polygons"],
    "points_sampler": ["PointsSampler"],
    "prroi_pool": ["PrRoIPool", "prroi_pool"],
    "psa_mask": ["PSAMask"],
    "riroi_align_rotated": ["RiRoIAlignRotated", "riroi_align_rotated"],
    "roi_align": ["RoIAlign", "roi_align"],
    "roi_align_rotated": ["RoIAlignRotated", "roi_align_rotated"],
    "roi_pool": ["RoIPool", "roi_pool"],
    "roiaware_pool3d": ["RoIAwarePool3d"],
    "roipoint_pool3d": ["RoIPointPool3d"],
    "rotated_feature_align": ["rotated_feature_align"],
    "saconv": ["SAConv2d"],
    "scatter_points": ["DynamicScatter", "dynamic_scatter"],
    "sparse_conv": [
        "SparseConv2d",
        "SparseConv3d",
        "SparseConvTranspose2d",
        "SparseConvTranspose3d",
        "SparseInverseConv2d",
        "SparseInverseConv3d",
        "SubMConv2d",
        "SubMConv3d",
    ],
    "sparse_modules": ["SparseModule", "SparseSequential"],
    "sparse_pool": ["SparseMaxPool2d", "SparseMaxPool3d"],
    "sparse_structure": ["SparseConvTensor", "scatter_nd"],
    "sync_bn": ["SyncBatchNorm"],
    "three_interpolate": ["three_interpolate"],
    "three_nn": ["three_nn"],
    "tin_shift": ["TINShift", "tin_shift"],
    "upfirdn2d": ["upfirdn2d"],
    "voxelize": ["Voxelization", "voxelization"],
}

# mmcv.ops's package-level aliases of names defined under another name in their submodule.
ALIASES = {
    "Conv2d": "Conv2d_deprecated",
    "ConvTranspose2d": "ConvTranspose2d_deprecated",
    "Linear": "Linear_deprecated",
    "MaxPool2d": "MaxPool2d_deprecated",
}
ALL_NAMES = sorted({n for names in MMCV_OPS.values() for n in names})

# Names mmpar implements (on torchvision or in PyTorch); every other one is a stand-in.
PROVIDED = {
    "bbox_overlaps",
    "CARAFE",
    "CARAFENaive",
    "CARAFEPack",
    "carafe",
    "carafe_naive",
    "CornerPool",
    "CrissCrossAttention",
    "DeformConv2d",
    "DeformConv2dPack",
    "deform_conv2d",
    "SigmoidFocalLoss",
    "SoftmaxFocalLoss",
    "sigmoid_focal_loss",
    "softmax_focal_loss",
    "get_compiler_version",
    "get_compiling_cuda_version",
    "get_onnxruntime_op_path",
    "MaskedConv2d",
    "masked_conv2d",
    "ModulatedDeformConv2d",
    "ModulatedDeformConv2dPack",
    "modulated_deform_conv2d",
    "MultiScaleDeformableAttention",
    "batched_nms",
    "nms",
    "nms_match",
    "soft_nms",
    "SimpleRoIAlign",
    "point_sample",
    "rel_roi_point_to_rel_img_point",
    "PSAMask",
    "RoIAlign",
    "roi_align",
    "RoIPool",
    "roi_pool",
    "SyncBatchNorm",
    "TINShift",
    "tin_shift",
    "Conv2d",
    "ConvTranspose2d",
    "Linear",
    "MaxPool2d",
    "FusedBiasLeakyReLU",
    "fused_bias_leakyrelu",
    "upfirdn2d",
    "SAConv2d",
    # The rotated / quadrilateral / polygon family.
    "active_rotated_filter",
    "box_iou_quadri",
    "box_iou_rotated",
    "convex_giou",
    "convex_iou",
    "diff_iou_rotated_2d",
    "diff_iou_rotated_3d",
    "min_area_polygons",
    "nms_quadri",
    "nms_rotated",
    "points_in_polygons",
    "RiRoIAlignRotated",
    "riroi_align_rotated",
    "RoIAlignRotated",
    "roi_align_rotated",
    "rotated_feature_align",
    # the point-cloud family (issue 34)
    "furthest_point_sample",
    "furthest_point_sample_with_dist",
    "PointsSampler",
    "ball_query",
    "knn",
    "three_nn",
    "three_interpolate",
    "gather_points",
    "grouping_operation",
    "QueryAndGroup",
    "GroupAll",
    "chamfer_distance",
    "assign_score_withk",
    "points_in_boxes_part",
    "points_in_boxes_cpu",
    "points_in_boxes_all",
    "boxes_iou_bev",
    "boxes_iou3d",
    "boxes_overlap_bev",
    "nms_bev",
    "nms_normal_bev",
    "nms3d",
    "nms3d_normal",
    "RoIAwarePool3d",
    "RoIPointPool3d",
    "Voxelization",
    "voxelization",
    "DynamicScatter",
    "dynamic_scatter",
    "SparseConvTensor",
    "scatter_nd",
    "SparseModule",
    "SparseSequential",
    "SparseConv2d",
    "SparseConv3d",
    "SparseConvTranspose2d",
    "SparseConvTranspose3d",
    "SparseInverseConv2d",
    "SparseInverseConv3d",
    "SubMConv2d",
    "SubMConv3d",
    "SparseMaxPool2d",
    "SparseMaxPool3d",
    "pixel_group",
    "contour_expand",
    "BorderAlign",
    "border_align",
    # optical flow and the deformable / precise RoI pooling (issue 34)
    "Correlation",
    "DeformRoIPool",
    "DeformRoIPoolPack",
    "ModulatedDeformRoIPoolPack",
    "deform_roi_pool",
    "PrRoIPool",
    "prroi_pool",
}
UNSUPPORTED = sorted(set(ALL_NAMES) - PROVIDED)


def test_every_mmcv_ops_name_is_exported():
    assert len(ALL_NAMES) == 117
    assert set(ALL_NAMES) <= set(mmpar.ops.__all__)
    for name in ALL_NAMES:
        assert getattr(mmpar.ops, name) is not None


@pytest.mark.parametrize("module", sorted(MMCV_OPS))
def test_names_live_at_mmcvs_submodule_paths(module):
    sub = importlib.import_module(f"mmpar.ops.{module}")
    for name in MMCV_OPS[module]:
        assert getattr(sub, ALIASES.get(name, name)) is getattr(mmpar.ops, name), name


def test_every_mmcv_ops_name_is_provided_not_a_stand_in():
    assert UNSUPPORTED == []
    for name in ALL_NAMES:
        doc = getattr(getattr(mmpar.ops, name), "__doc__", None) or ""
        assert not doc.startswith("Not provided by mmpar"), name


def test_stand_in_classes_can_be_subclassed_checked_and_registered():
    # A stand-in made by the factory the unprovided ops use (ops keep becoming real).
    stand_in = unsupported_class("Probe", "something else", "mmpar.ops.probe")
    registry = Registry("probe")
    registry.register_module(module=stand_in)

    class Custom(stand_in):
        pass

    assert issubclass(Custom, torch.nn.Module) and registry.get("Probe") is stand_in
    assert not isinstance(torch.nn.Identity(), stand_in)
    with pytest.raises(UnsupportedOpError, match="mmcv.ops.Probe .*instead: something else"):
        Custom()
    assert stand_in.__module__ == "mmpar.ops.probe"
    assert mmpar.ops.ball_query.__name__ == "ball_query"


def test_compiled_only_layers_are_registered_under_mmcvs_names():
    assert issubclass(CONV_LAYERS.get("SAC"), ConvAWS2d)
    for name in ("SparseConv2d", "SparseConv3d", "SubMConv3d", "SparseInverseConv3d"):
        assert CONV_LAYERS.get(name) is getattr(mmpar.ops, name)
    assert CONV_LAYERS.get("SubMConv3d")(3, 3, 3).weight.shape == (3, 3, 3, 3, 3)


def test_importing_mmpar_ops_registers_what_mmcv_ops_registered():
    from mmpar.cnn.bricks import registry

    added = {
        name: sorted(k for k, v in reg.module_dict.items() if v.__module__.startswith("mmpar.ops."))
        for name in ("CONV_LAYERS", "NORM_LAYERS", "PLUGIN_LAYERS", "UPSAMPLE_LAYERS", "ATTENTION")
        for reg in [getattr(registry, name)]
    }
    assert added == {
        "CONV_LAYERS": sorted(
            ["DCN", "DCNv2", "SAC", "SparseConv2d", "SparseConv3d", "SparseConv4d",
             "SparseConvTranspose2d", "SparseConvTranspose3d", "SparseInverseConv2d",
             "SparseInverseConv3d", "SubMConv2d", "SubMConv3d", "SubMConv4d"]
        ),
        "NORM_LAYERS": ["MMSyncBN"],
        "PLUGIN_LAYERS": ["CrissCrossAttention"],
        "UPSAMPLE_LAYERS": ["carafe"],
        "ATTENTION": ["MultiScaleDeformableAttention"],
    }  # fmt: skip
