"""mmcv's autograd ``Function`` classes (``RoIAlignFunction.apply``, ``NMSop.apply``, ...).

Each ``apply`` must give the functional op's result and the op's own gradients, take mmcv's
parameter list, and be a real ``torch.autograd.Function`` subclass at mmcv's path.
"""

from __future__ import annotations

import importlib
import inspect

import pytest
import torch
from helpers.mmcv_reference import load_reference
from torch.autograd import Function, gradcheck

from mmpar.ops.ball_query import BallQuery, ball_query
from mmpar.ops.furthest_point_sample import (
    FurthestPointSampling,
    FurthestPointSamplingWithDist,
    furthest_point_sample,
    furthest_point_sample_with_dist,
)
from mmpar.ops.knn import KNN, knn
from mmpar.ops.nms import NMSop, SoftNMSop, nms, soft_nms
from mmpar.ops.roipoint_pool3d import RoIPointPool3d, RoIPointPool3dFunction
from mmpar.ops.sync_bn import SyncBatchNormFunction

# The op modules (mmpar.ops' attributes of the same names are the functions).
active_rotated_filter = importlib.import_module("mmpar.ops.active_rotated_filter")
assign_score_withk = importlib.import_module("mmpar.ops.assign_score_withk")
carafe = importlib.import_module("mmpar.ops.carafe")
chamfer_distance = importlib.import_module("mmpar.ops.chamfer_distance")
corner_pool = importlib.import_module("mmpar.ops.corner_pool")
deform_conv = importlib.import_module("mmpar.ops.deform_conv")
focal_loss = importlib.import_module("mmpar.ops.focal_loss")
fused_bias_leakyrelu = importlib.import_module("mmpar.ops.fused_bias_leakyrelu")
gather_points = importlib.import_module("mmpar.ops.gather_points")
group_points = importlib.import_module("mmpar.ops.group_points")
masked_conv = importlib.import_module("mmpar.ops.masked_conv")
modulated_deform_conv = importlib.import_module("mmpar.ops.modulated_deform_conv")
multi_scale_deform_attn = importlib.import_module("mmpar.ops.multi_scale_deform_attn")
psa_mask = importlib.import_module("mmpar.ops.psa_mask")
riroi_align_rotated = importlib.import_module("mmpar.ops.riroi_align_rotated")
roi_align = importlib.import_module("mmpar.ops.roi_align")
roi_align_rotated = importlib.import_module("mmpar.ops.roi_align_rotated")
roi_pool = importlib.import_module("mmpar.ops.roi_pool")
roiaware_pool3d = importlib.import_module("mmpar.ops.roiaware_pool3d")
rotated_feature_align = importlib.import_module("mmpar.ops.rotated_feature_align")
three_interpolate = importlib.import_module("mmpar.ops.three_interpolate")
three_nn = importlib.import_module("mmpar.ops.three_nn")
tin_shift = importlib.import_module("mmpar.ops.tin_shift")
upfirdn2d = importlib.import_module("mmpar.ops.upfirdn2d")

# mmcv 1.7.2's Function classes and the parameters of their ``forward`` after ``ctx`` (read
# from mmcv's source). The four of border_align, correlation, deform_roi_pool and prroi_pool
# are still gaps (mmcv_1_7_2_names_missing.json).
MMCV_FORWARD_PARAMS = {
    "active_rotated_filter.ActiveRotatedFilterFunction": "input indices",
    "assign_score_withk.AssignScoreWithK": (
        "scores point_features center_features knn_idx aggregate"
    ),
    "ball_query.BallQuery": (
        "min_radius max_radius sample_num xyz center_xyz xyz_batch_cnt center_xyz_batch_cnt"
    ),
    "carafe.CARAFEFunction": "features masks kernel_size group_size scale_factor",
    "carafe.CARAFENaiveFunction": "features masks kernel_size group_size scale_factor",
    "chamfer_distance.ChamferDistanceFunction": "xyz1 xyz2",
    "corner_pool.BottomPoolFunction": "input",
    "corner_pool.LeftPoolFunction": "input",
    "corner_pool.RightPoolFunction": "input",
    "corner_pool.TopPoolFunction": "input",
    "deform_conv.DeformConv2dFunction": (
        "input offset weight stride padding dilation groups deform_groups bias im2col_step"
    ),
    "diff_iou_rotated.SortVertices": "vertices mask num_valid",
    "focal_loss.SigmoidFocalLossFunction": "input target gamma alpha weight reduction",
    "focal_loss.SoftmaxFocalLossFunction": "input target gamma alpha weight reduction",
    "furthest_point_sample.FurthestPointSampling": "points_xyz num_points",
    "furthest_point_sample.FurthestPointSamplingWithDist": "points_dist num_points",
    "fused_bias_leakyrelu.FusedBiasLeakyReLUFunction": "input bias negative_slope scale",
    "fused_bias_leakyrelu.FusedBiasLeakyReLUFunctionBackward": (
        "grad_output out negative_slope scale"
    ),
    "gather_points.GatherPoints": "features indices",
    "group_points.GroupingOperation": "features indices features_batch_cnt indices_batch_cnt",
    "knn.KNN": "k xyz center_xyz transposed",
    "masked_conv.MaskedConv2dFunction": "features mask weight bias padding stride",
    "modulated_deform_conv.ModulatedDeformConv2dFunction": (
        "input offset mask weight bias stride padding dilation groups deform_groups"
    ),
    "multi_scale_deform_attn.MultiScaleDeformableAttnFunction": (
        "value value_spatial_shapes value_level_start_index sampling_locations "
        "attention_weights im2col_step"
    ),
    "nms.NMSop": "bboxes scores iou_threshold offset score_threshold max_num",
    "nms.SoftNMSop": "boxes scores iou_threshold sigma min_score method offset",
    "psa_mask.PSAMaskFunction": "input psa_type mask_size",
    "riroi_align_rotated.RiRoIAlignRotatedFunction": (
        "features rois out_size spatial_scale num_samples num_orientations clockwise"
    ),
    "roi_align.RoIAlignFunction": (
        "input rois output_size spatial_scale sampling_ratio pool_mode aligned"
    ),
    "roi_align_rotated.RoIAlignRotatedFunction": (
        "input rois output_size spatial_scale sampling_ratio aligned clockwise"
    ),
    "roi_pool.RoIPoolFunction": "input rois output_size spatial_scale",
    "roiaware_pool3d.RoIAwarePool3dFunction": (
        "rois pts pts_feature out_size max_pts_per_voxel mode"
    ),
    "roipoint_pool3d.RoIPointPool3dFunction": "points point_features boxes3d num_sampled_points",
    "rotated_feature_align.RotatedFeatureAlignFunction": (
        "features best_rbboxes spatial_scale points"
    ),
    "sync_bn.SyncBatchNormFunction": (
        "input running_mean running_var weight bias momentum eps group group_size stats_mode"
    ),
    "three_interpolate.ThreeInterpolate": "features indices weight",
    "three_nn.ThreeNN": "target source",
    "tin_shift.TINShiftFunction": "input shift",
    "upfirdn2d.UpFirDn2d": "input kernel up down pad",
    "upfirdn2d.UpFirDn2dBackward": (
        "grad_output kernel grad_kernel up down pad g_pad in_size out_size"
    ),
}


@pytest.mark.parametrize("dotted", sorted(MMCV_FORWARD_PARAMS))
def test_a_function_class_at_its_mmcv_path_with_mmcv_parameters(dotted):
    module_name, _, name = dotted.rpartition(".")
    cls = getattr(importlib.import_module(f"mmpar.ops.{module_name}"), name)
    assert isinstance(cls, type) and issubclass(cls, Function)
    assert cls.__name__ == name and cls.__module__ == f"mmpar.ops.{module_name}"
    params = list(inspect.signature(cls.forward).parameters)
    assert params[0] == "ctx" and params[1:] == MMCV_FORWARD_PARAMS[dotted].split()


def test_deform_conv_serves_the_modulated_function_as_mmcv_imports_it():
    # (tests/test_mmcv_compat/test_public_names.py checks every name at its mmcv path.)
    from mmpar.ops.deform_conv import ModulatedDeformConv2dFunction

    assert ModulatedDeformConv2dFunction is modulated_deform_conv.ModulatedDeformConv2dFunction
    with pytest.raises(AttributeError, match="no attribute 'NoSuchFunction'"):
        deform_conv.NoSuchFunction  # noqa: B018


def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def _rand(*shape, g, scale=1.0, shift=0.0):
    return torch.rand(*shape, generator=g) * scale + shift


def _case_roi_align(g):
    x = torch.randn(2, 3, 8, 8, generator=g)
    rois = torch.tensor([[0, 1.0, 1.2, 6.3, 5.1], [1, 0.5, 2.0, 7.0, 7.5]])
    return (x, rois, (2, 3), 1.0, 2), (0,)


def _case_roi_align_max(g):
    x = torch.randn(1, 2, 8, 8, generator=g)
    rois = torch.tensor([[0, 1.0, 1.2, 6.3, 5.1]])
    return (x, rois, 2, 0.5, 2, "max", False), (0,)


def _case_roi_pool(g):
    x = torch.randn(2, 3, 8, 8, generator=g)
    rois = torch.tensor([[0, 1.0, 1.0, 6.0, 5.0], [1, 0.0, 2.0, 7.0, 7.0]])
    return (x, rois, 2, 1.0), (0,)


def _case_roi_align_rotated(g):
    x = torch.randn(1, 2, 8, 8, generator=g)
    rois = torch.tensor([[0, 4.0, 4.0, 5.0, 3.0, 0.4]])
    return (x, rois, 2, 1.0, 2, True, False), (0,)


def _case_riroi(g):
    x = torch.randn(1, 4, 8, 8, generator=g)
    rois = torch.tensor([[0, 4.0, 4.0, 5.0, 3.0, 0.4]])
    return (x, rois, 2, 1.0, 2, 2, False), (0,)


def _case_rotated_feature_align(g):
    x = torch.randn(1, 2, 6, 6, generator=g)
    boxes = torch.cat(
        [_rand(1, 6, 6, 2, g=g, scale=40), _rand(1, 6, 6, 2, g=g, scale=8, shift=4)], -1
    )
    boxes = torch.cat([boxes, _rand(1, 6, 6, 1, g=g, scale=3)], -1)
    return (x, boxes, 0.125, 5), (0,)


def _case_masked_conv(g):
    x = torch.randn(1, 2, 5, 5, generator=g)
    mask = (torch.rand(1, 5, 5, generator=g) > 0.5).float()
    weight = torch.randn(3, 2, 3, 3, generator=g)
    bias = torch.randn(3, generator=g)
    return (x, mask, weight, bias, 1, 1), (0, 2, 3)


def _case_carafe(g):
    x = torch.randn(1, 4, 3, 3, generator=g)
    masks = torch.softmax(torch.randn(1, 9 * 2, 6, 6, generator=g), 1)
    return (x, masks, 3, 2, 2), (0, 1)


def _case_focal(g):
    logits = torch.randn(5, 3, generator=g)
    target = torch.tensor([0, 2, 1, 1, 0])
    return (logits, target, 2.0, 0.25, torch.rand(3, generator=g), "mean"), (0,)


def _case_fused_bias_leakyrelu(g):
    return (torch.randn(2, 3, 4, generator=g), torch.randn(3, generator=g), 0.2, 2**0.5), (0, 1)


def _case_psa_mask(g):
    return (torch.randn(1, 9, 4, 4, generator=g), "distribute", (3, 3)), (0,)


def _case_deform_conv(g):
    x = torch.randn(1, 2, 5, 5, generator=g)
    offset = torch.randn(1, 18, 5, 5, generator=g) * 0.7
    weight = torch.randn(3, 2, 3, 3, generator=g)
    return (x, offset, weight, 1, 1), (0, 1, 2)


def _case_modulated_deform_conv(g):
    x = torch.randn(1, 2, 5, 5, generator=g)
    offset = torch.randn(1, 18, 5, 5, generator=g) * 0.7
    mask = torch.rand(1, 9, 5, 5, generator=g)
    weight = torch.randn(3, 2, 3, 3, generator=g)
    return (x, offset, mask, weight, torch.randn(3, generator=g), 1, 1), (0, 1, 2, 3, 4)


def _case_msda(g):
    shapes = torch.tensor([[4, 4], [2, 2]])
    value = torch.randn(1, 20, 2, 3, generator=g)
    locations = torch.rand(1, 5, 2, 2, 2, 2, generator=g)
    weights = torch.softmax(torch.randn(1, 5, 2, 4, generator=g), -1).view(1, 5, 2, 2, 2)
    return (value, shapes, torch.tensor([0, 16]), locations, weights, 64), (0, 3, 4)


def _case_tin_shift(g):
    return (torch.randn(2, 4, 6, 5, generator=g), torch.tensor([[1, -2], [0, 3]])), (0,)


def _case_upfirdn2d(g):
    kernel = torch.rand(3, 3, generator=g)
    return (torch.randn(1, 2, 5, 4, generator=g), kernel, (2, 2), (1, 1), (1, 1, 1, 1)), (0,)


def _case_corner_pool(g):
    return (torch.randn(1, 2, 4, 5, generator=g),), (0,)


def _case_active_rotated_filter(g):
    orientations, rotations = 4, 2
    indices = torch.stack(
        [torch.randperm(orientations * 9, generator=g) + 1 for _ in range(rotations)], -1
    )
    weight = torch.randn(2, 3, orientations, 3, 3, generator=g)
    return (weight, indices.view(orientations, 3, 3, rotations)), (0,)


def _case_assign_score(g):
    scores = torch.rand(1, 4, 3, 2, generator=g)
    points = torch.randn(1, 6, 2, 5, generator=g)
    centres = torch.randn(1, 6, 2, 5, generator=g)
    knn_idx = torch.randint(0, 6, (1, 4, 3), generator=g)
    return (scores, points, centres, knn_idx, "sum"), (0, 1, 2)


def _case_chamfer(g):
    return (torch.randn(1, 6, 2, generator=g), torch.randn(1, 5, 2, generator=g)), (0, 1)


def _case_gather_points(g):
    idx = torch.randint(0, 6, (2, 4), generator=g, dtype=torch.int32)
    return (torch.randn(2, 3, 6, generator=g), idx), (0,)


def _case_grouping(g):
    idx = torch.randint(0, 6, (2, 4, 3), generator=g, dtype=torch.int32)
    return (torch.randn(2, 3, 6, generator=g), idx), (0,)


def _case_three_interpolate(g):
    idx = torch.randint(0, 6, (2, 4, 3), generator=g, dtype=torch.int32)
    weight = torch.softmax(torch.randn(2, 4, 3, generator=g), -1)
    return (torch.randn(2, 3, 6, generator=g), idx, weight), (0, 2)


def _case_roiaware(g):
    rois = torch.tensor([[0.0, 0.0, -1.0, 4.0, 3.0, 2.0, 0.3]])
    pts = torch.cat([_rand(30, 2, g=g, scale=4, shift=-2), _rand(30, 1, g=g, scale=2, shift=-1)], 1)
    return (rois, pts, torch.randn(30, 3, generator=g), 2, 8, 1), (2,)


def _roiaware_module(rois, pts, feats, out_size, max_pts, mode):
    pool = roiaware_pool3d.RoIAwarePool3d(out_size, max_pts, ("max", "avg")[mode])
    return pool(rois, pts, feats)


CASES = {
    "roi_align": (roi_align.RoIAlignFunction, roi_align.roi_align, _case_roi_align),
    "roi_align_max": (roi_align.RoIAlignFunction, roi_align.roi_align, _case_roi_align_max),
    "roi_pool": (roi_pool.RoIPoolFunction, roi_pool.roi_pool, _case_roi_pool),
    "roi_align_rotated": (
        roi_align_rotated.RoIAlignRotatedFunction,
        roi_align_rotated.roi_align_rotated,
        _case_roi_align_rotated,
    ),
    "riroi_align_rotated": (
        riroi_align_rotated.RiRoIAlignRotatedFunction,
        riroi_align_rotated.riroi_align_rotated,
        _case_riroi,
    ),
    "rotated_feature_align": (
        rotated_feature_align.RotatedFeatureAlignFunction,
        rotated_feature_align.rotated_feature_align,
        _case_rotated_feature_align,
    ),
    "masked_conv2d": (
        masked_conv.MaskedConv2dFunction,
        masked_conv.masked_conv2d,
        _case_masked_conv,
    ),
    "carafe": (carafe.CARAFEFunction, carafe.carafe, _case_carafe),
    "carafe_naive": (carafe.CARAFENaiveFunction, carafe.carafe_naive, _case_carafe),
    "sigmoid_focal_loss": (
        focal_loss.SigmoidFocalLossFunction,
        focal_loss.sigmoid_focal_loss,
        _case_focal,
    ),
    "softmax_focal_loss": (
        focal_loss.SoftmaxFocalLossFunction,
        focal_loss.softmax_focal_loss,
        _case_focal,
    ),
    "fused_bias_leakyrelu": (
        fused_bias_leakyrelu.FusedBiasLeakyReLUFunction,
        fused_bias_leakyrelu.fused_bias_leakyrelu,
        _case_fused_bias_leakyrelu,
    ),
    "psa_mask": (psa_mask.PSAMaskFunction, psa_mask.psa_mask, _case_psa_mask),
    "deform_conv2d": (
        deform_conv.DeformConv2dFunction,
        deform_conv.deform_conv2d,
        _case_deform_conv,
    ),
    "modulated_deform_conv2d": (
        modulated_deform_conv.ModulatedDeformConv2dFunction,
        modulated_deform_conv.modulated_deform_conv2d,
        _case_modulated_deform_conv,
    ),
    "multi_scale_deform_attn": (
        multi_scale_deform_attn.MultiScaleDeformableAttnFunction,
        lambda v, s, _start, loc, w, _step: (
            multi_scale_deform_attn.multi_scale_deformable_attn_pytorch(v, s, loc, w)
        ),
        _case_msda,
    ),
    "tin_shift": (tin_shift.TINShiftFunction, tin_shift.tin_shift, _case_tin_shift),
    "upfirdn2d": (upfirdn2d.UpFirDn2d, upfirdn2d.upfirdn2d, _case_upfirdn2d),
    "top_pool": (
        corner_pool.TopPoolFunction,
        corner_pool.CornerPool("top"),
        _case_corner_pool,
    ),
    "bottom_pool": (
        corner_pool.BottomPoolFunction,
        corner_pool.CornerPool("bottom"),
        _case_corner_pool,
    ),
    "left_pool": (
        corner_pool.LeftPoolFunction,
        corner_pool.CornerPool("left"),
        _case_corner_pool,
    ),
    "right_pool": (
        corner_pool.RightPoolFunction,
        corner_pool.CornerPool("right"),
        _case_corner_pool,
    ),
    "active_rotated_filter": (
        active_rotated_filter.ActiveRotatedFilterFunction,
        active_rotated_filter.active_rotated_filter,
        _case_active_rotated_filter,
    ),
    "assign_score_withk": (
        assign_score_withk.AssignScoreWithK,
        assign_score_withk.assign_score_withk,
        _case_assign_score,
    ),
    "chamfer_distance": (
        chamfer_distance.ChamferDistanceFunction,
        chamfer_distance.chamfer_distance,
        _case_chamfer,
    ),
    "gather_points": (
        gather_points.GatherPoints,
        gather_points.gather_points,
        _case_gather_points,
    ),
    "grouping_operation": (
        group_points.GroupingOperation,
        group_points.grouping_operation,
        _case_grouping,
    ),
    "three_interpolate": (
        three_interpolate.ThreeInterpolate,
        three_interpolate.three_interpolate,
        _case_three_interpolate,
    ),
    "roiaware_pool3d": (roiaware_pool3d.RoIAwarePool3dFunction, _roiaware_module, _case_roiaware),
}


def _outputs(result):
    return result if isinstance(result, tuple) else (result,)


def _float_outputs(result):
    return [out for out in _outputs(result) if out.is_floating_point()]


def _grads(fn, args, positions, weights):
    """Gradients of sum(weight * output) for the inputs at ``positions``."""
    args = list(args)
    for i in positions:
        args[i] = args[i].detach().clone().requires_grad_()
    outs = _float_outputs(fn(*args))
    loss = sum((out * w).sum() for out, w in zip(outs, weights))
    return torch.autograd.grad(loss, [args[i] for i in positions], allow_unused=True)


@pytest.mark.parametrize("case", sorted(CASES))
def test_apply_gives_the_op_result_and_gradients(case):
    function, op, make = CASES[case]
    args, positions = make(_gen())
    expected = _outputs(op(*args))
    got = _outputs(function.apply(*args))
    assert len(got) == len(expected)
    for out, ref in zip(got, expected):
        assert out.dtype == ref.dtype and torch.equal(out, ref)
    weights = [torch.randn(out.shape, generator=_gen()) for out in _float_outputs(expected)]
    got_grads = _grads(function.apply, args, positions, weights)
    expected_grads = _grads(op, args, positions, weights)
    assert any(grad is not None and grad.abs().sum() > 0 for grad in expected_grads)
    for grad, ref in zip(got_grads, expected_grads):
        if ref is None:  # the op does not depend on it; the Function gives zeros
            assert grad is None or not grad.any()
        else:
            torch.testing.assert_close(grad, ref, rtol=0, atol=0)


def test_backward_passes_gradcheck_and_a_second_backward_of_the_outer_graph():
    x = torch.randn(1, 2, 6, 6, dtype=torch.float64, requires_grad=True)
    rois = torch.tensor([[0, 0.5, 1.0, 4.5, 5.0]], dtype=torch.float64)
    assert gradcheck(lambda t: roi_align.RoIAlignFunction.apply(t, rois, 2, 1.0, 2), (x,))
    out = roi_align.RoIAlignFunction.apply(x, rois, 2, 1.0, 2)
    (first,) = torch.autograd.grad(out.sum(), x, retain_graph=True)
    (second,) = torch.autograd.grad(out.sum(), x)
    assert torch.equal(first, second)


def test_defaults_follow_mmcv_forward():
    x = torch.randn(1, 2, 8, 8)
    rois = torch.tensor([[0, 1.0, 1.0, 6.0, 5.0]])
    expected = roi_align.roi_align(x, rois, 2, 1.0, 0, "avg", True)
    assert torch.equal(roi_align.RoIAlignFunction.apply(x, rois, 2), expected)


def test_index_outputs_carry_no_gradient():
    g = _gen()
    xyz = torch.randn(2, 10, 3, generator=g, requires_grad=True)
    centres = xyz[:, :4].detach().clone().requires_grad_()
    idx = KNN.apply(3, xyz, centres)
    assert torch.equal(idx, knn(3, xyz, centres)) and not idx.requires_grad
    grouped = BallQuery.apply(0.0, 0.8, 5, xyz, centres)
    assert torch.equal(grouped, ball_query(0.0, 0.8, 5, xyz, centres))
    assert not grouped.requires_grad
    assert torch.equal(FurthestPointSampling.apply(xyz, 4), furthest_point_sample(xyz, 4))
    dist = torch.cdist(xyz, xyz)
    assert torch.equal(
        FurthestPointSamplingWithDist.apply(dist, 4), furthest_point_sample_with_dist(dist, 4)
    )
    # mmcv's ThreeNN has no gradient for its distances either.
    distance, nearest = three_nn.ThreeNN.apply(centres, xyz)
    ref_distance, ref_nearest = three_nn.three_nn(centres, xyz)
    assert torch.equal(distance, ref_distance) and torch.equal(nearest, ref_nearest)
    assert not nearest.requires_grad
    (grad,) = torch.autograd.grad(distance.sum(), centres, allow_unused=True)
    assert grad is None or not grad.any()


def test_nms_functions_take_mmcv_kernel_arguments():
    boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30], [0, 0, 9, 11.0]])
    scores = torch.tensor([0.9, 0.8, 0.7, 0.3])
    _, keep = nms(boxes, scores, 0.5, score_threshold=0.5)
    assert torch.equal(NMSop.apply(boxes, scores, 0.5, 0, 0.5, -1), keep)
    assert NMSop.apply(boxes, scores, 0.5, 0, 0, 1).tolist() == [0]
    for code, method in enumerate(["naive", "linear", "gaussian"]):
        dets, inds = SoftNMSop.apply(boxes, scores, 0.3, 0.5, 0.2, code, 0)
        ref_dets, ref_inds = soft_nms(boxes, scores, 0.3, 0.5, 0.2, method)
        # mmcv's soft_nms cuts the (N, 5) buffer to the kept rows.
        assert dets.shape == (4, 5) and len(ref_inds) < 4
        assert torch.equal(dets[: len(inds)], ref_dets) and torch.equal(inds, ref_inds)
        assert not dets[len(inds) :].any()


def test_roipoint_pool3d_function():
    g = _gen()
    points = _rand(1, 40, 3, g=g, scale=4, shift=-2)
    features = torch.randn(1, 40, 2, generator=g)
    boxes = torch.tensor([[[0.0, 0.0, -1.0, 2.0, 2.0, 2.0, 0.2], [9.0, 9, 9, 1, 1, 1, 0]]])
    pooled, empty = RoIPointPool3dFunction.apply(points, features, boxes, 6)
    ref_pooled, ref_empty = RoIPointPool3d(6)(points, features, boxes)
    assert torch.equal(pooled, ref_pooled) and torch.equal(empty, ref_empty)
    assert empty.tolist() == [[0, 1]]


def test_upfirdn2d_backward_is_the_adjoint():
    g = _gen()
    x = torch.randn(2, 3, 5, 4, generator=g, requires_grad=True)
    kernel = torch.rand(4, 3, generator=g)
    (up_x, up_y), (down_x, down_y), pad = (2, 1), (1, 2), (1, 2, 0, 2)
    out = upfirdn2d.UpFirDn2d.apply(x, kernel, (up_x, up_y), (down_x, down_y), pad)
    grad_out = torch.randn(out.shape, generator=g)
    (expected,) = torch.autograd.grad(out, x, grad_out)
    # The adjoint's padding, as mmcv's UpFirDn2d.forward works it out.
    kh, kw = kernel.shape
    out_h, out_w = out.shape[2:]
    g_pad = (
        kw - pad[0] - 1,
        4 * up_x - out_w * down_x + pad[0] - up_x + 1,
        kh - pad[2] - 1,
        5 * up_y - out_h * down_y + pad[2] - up_y + 1,
    )
    grad_in = upfirdn2d.UpFirDn2dBackward.apply(
        grad_out,
        kernel,
        torch.flip(kernel, [0, 1]),
        (up_x, up_y),
        (down_x, down_y),
        pad,
        g_pad,
        x.shape,
        (out_h, out_w),
    )
    torch.testing.assert_close(grad_in, expected)


def test_fused_bias_leakyrelu_backward_function():
    g = _gen()
    x = torch.randn(2, 3, 4, generator=g, requires_grad=True)
    bias = torch.randn(3, generator=g, requires_grad=True)
    out = fused_bias_leakyrelu.fused_bias_leakyrelu(x, bias, 0.1, 1.5)
    grad_out = torch.randn(out.shape, generator=g, requires_grad=True)
    grad_x, grad_bias = torch.autograd.grad(out, (x, bias), grad_out)
    backward = fused_bias_leakyrelu.FusedBiasLeakyReLUFunctionBackward
    got_x, got_bias = backward.apply(grad_out, out.detach(), 0.1, 1.5)
    torch.testing.assert_close(got_x, grad_x)
    torch.testing.assert_close(got_bias, grad_bias)
    # Differentiable in grad_output (mmcv's double backward): linear, so the slope itself.
    (second,) = torch.autograd.grad(got_x.sum(), grad_out)
    torch.testing.assert_close(second, torch.where(out > 0, 1.5, 0.15).detach())


def test_sync_batch_norm_function_in_one_process():
    g = _gen()
    x = torch.randn(4, 3, 2, 2, generator=g, requires_grad=True)
    weight = torch.rand(3, generator=g, requires_grad=True)
    bias = torch.randn(3, generator=g, requires_grad=True)
    mean, var = torch.zeros(3), torch.ones(3)
    out = SyncBatchNormFunction.apply(x, mean, var, weight, bias, 0.1, 1e-5, None, 1, "default")
    ref_mean, ref_var = torch.zeros(3), torch.ones(3)
    ref = torch.nn.functional.batch_norm(x, ref_mean, ref_var, weight, bias, True, 0.1, 1e-5)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(mean, ref_mean)
    torch.testing.assert_close(var, ref_var)
    grads = torch.autograd.grad((out * out).sum(), (x, weight, bias))
    ref_grads = torch.autograd.grad((ref * ref).sum(), (x, weight, bias))
    for got, expected in zip(grads, ref_grads):
        torch.testing.assert_close(got, expected)


@pytest.mark.parametrize(
    ("case", "function", "args"),
    [
        ("roi_align_function", "roi_align.RoIAlignFunction", ((2, 3), 0.8)),
        (
            "roi_align_rotated_function",
            "roi_align_rotated.RoIAlignRotatedFunction",
            (2, 1.0, 2, True, True),
        ),
    ],
)
def test_roi_functions_match_mmcv_full(case, function, args):
    ref = load_reference("autograd_functions", case)
    module_name, _, name = function.partition(".")
    cls = getattr(importlib.import_module(f"mmpar.ops.{module_name}"), name)
    x = ref["x"].clone().requires_grad_()
    out = cls.apply(x, ref["rois"], *args)  # mmcv's positional call, its defaults after
    torch.testing.assert_close(out, ref["out"])
    out.backward(ref["grad_out"])
    torch.testing.assert_close(x.grad, ref["grad_x"])


def test_nms_functions_match_mmcv_full():
    ref = load_reference("autograd_functions", "nms_functions")
    boxes, scores = ref["boxes"], ref["scores"]
    assert torch.equal(NMSop.apply(boxes, scores, 0.4, 0, 0.2, 10), ref["nms_inds"])
    for code in (0, 1, 2):
        dets, inds = SoftNMSop.apply(boxes, scores, 0.3, 0.5, 0.05, code, 0)
        assert torch.equal(inds, ref[f"soft_inds_{code}"])
        torch.testing.assert_close(dets[: len(inds)], ref[f"soft_dets_{code}"])
