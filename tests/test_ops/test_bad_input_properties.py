"""Generated bad input to ``mmpar.ops`` entry points: a valid result or one clear error.

The documented contract (docs/reliability.md): out-of-range batch or class indices, wrong
shapes and empty inputs give a ``ValueError`` / ``IndexError`` / ``TypeError`` whose message
names the op, or a valid result (finite numbers where the input was finite, the documented
shape); never memory garbage, a crash or a hang.

Inverted boxes (``x2 < x1`` or ``y2 < y1``, issue 36): the aligned RoIAlign refuses them as
mmcv's kernel asserts (one error naming the op, the row and the box); the other poolings give
what their kernels give, a finite map.

The batch-index checks of ``roi_align``/``RoIAlign``/``roi_pool`` (``mmpar/ops/_roi_checks.py``)
and empty ``batched_nms`` are what the properties below hold the ops to.
"""

import math

import pytest
import torch
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mmpar.ops import (
    RoIAlign,
    RoIAlignRotated,
    batched_nms,
    bbox_overlaps,
    deform_roi_pool,
    nms,
    prroi_pool,
    roi_align,
    roi_pool,
)
from mmpar.ops._roi_checks import InvertedRoIError

torch.set_num_threads(1)

CLEAR_ERRORS = (ValueError, IndexError, TypeError)
PROPERTY = settings(
    max_examples=15,
    deadline=3000,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure is reported as drawn
    suppress_health_check=[HealthCheck.too_slow],
)

COORD = st.floats(-8, 24) | st.sampled_from([math.nan, math.inf, -math.inf])


def _boxes(draw, n):
    values = draw(st.lists(COORD, min_size=4 * n, max_size=4 * n))
    return torch.tensor(values, dtype=torch.float32).reshape(n, 4)


def _clear(err, op):
    assert isinstance(err, CLEAR_ERRORS), f"{type(err).__name__}: {err}"
    assert op in str(err), f"the message does not name {op}: {err}"


@PROPERTY
@given(data=st.data(), n=st.integers(0, 6), thr=st.floats(-0.5, 1.5))
def test_nms_keeps_valid_indices_or_raises_clearly(data, n, thr):
    boxes = _boxes(data.draw, n)
    scores = torch.tensor(data.draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    try:
        dets, keep = nms(boxes, scores, thr)
    except Exception as err:  # noqa: BLE001 (the property is about which errors)
        _clear(err, "nms")
        return
    assert dets.shape == (len(keep), 5)
    assert ((keep >= 0) & (keep < n)).all()


@PROPERTY
@given(
    data=st.data(),
    n=st.integers(1, 5),  # zero boxes: test_batched_nms_of_zero_boxes_is_empty
    cfg=st.sampled_from(
        [dict(type="nms", iou_threshold=0.5), dict(type="nms", iou_threshold=0.5, max_num=2),
         dict(type="soft_nms", iou_threshold=0.5), dict(type="nms", iou_threshold=0.5,
         score_threshold=0.3)]
    ),
)  # fmt: skip
def test_batched_nms_with_any_config_and_any_count(data, n, cfg):
    boxes = _boxes(data.draw, n).nan_to_num(0.0, 24.0, -8.0)
    scores = torch.tensor(data.draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    idxs = torch.tensor(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    try:
        dets, keep = batched_nms(boxes, scores, idxs, dict(cfg))
    except Exception as err:  # noqa: BLE001
        _clear(err, "batched_nms")
        return
    assert dets.shape[0] == keep.shape[0] <= n


@pytest.mark.parametrize(
    "cfg",
    [dict(type="nms", iou_threshold=0.5, max_num=2), dict(type="soft_nms", iou_threshold=0.5),
     dict(type="nms", iou_threshold=0.5, score_threshold=0.3)],
)  # fmt: skip
def test_batched_nms_of_zero_boxes_is_empty(cfg):
    # The corner the generated cases rarely hit: no boxes at all with a max_num, soft_nms or a
    # score threshold (issue 36: "crashes").
    empty = torch.zeros(0, 4)
    dets, keep = batched_nms(empty, torch.zeros(0), torch.zeros(0, dtype=torch.long), cfg)
    assert dets.shape == (0, 5) and keep.shape == (0,)


ROI_OPS = {
    "roi_align": lambda x, rois: roi_align(x, rois, (2, 2), 1.0, 0, "avg", True),
    "RoIAlign": lambda x, rois: RoIAlign((2, 2), 1.0, 0)(x, rois),
    "roi_pool": lambda x, rois: roi_pool(x, rois, (2, 2), 1.0),
}
ROI_OPS_WITHOUT_ALIGN = {"roi_pool": ROI_OPS["roi_pool"]}
# The RoI poolings of issue 34, drawn apart so the draws of the ops above stay as they were.
POOLING_OPS = {
    "deform_roi_pool": lambda x, rois: deform_roi_pool(x, rois, None, (2, 2), 1.0),
    "prroi_pool": lambda x, rois: prroi_pool(x, rois, (2, 2), 1.0),
}


@PROPERTY
@given(
    op=st.sampled_from(sorted(ROI_OPS)),
    batch_index=st.sampled_from([-1, 0, 1, 2, 7]),
    box=st.tuples(*[st.floats(-4, 12)] * 4),
)
def test_roi_ops_refuse_out_of_range_batch_indices(op, batch_index, box):
    _check_batch_index(ROI_OPS[op], op, batch_index, box)


@PROPERTY
@given(
    op=st.sampled_from(sorted(POOLING_OPS)),
    batch_index=st.sampled_from([-1, 0, 1, 2, 7]),
    box=st.tuples(*[st.floats(-4, 12)] * 4),
)
def test_roi_poolings_refuse_out_of_range_batch_indices(op, batch_index, box):
    _check_batch_index(POOLING_OPS[op], op, batch_index, box)


def _check_batch_index(call, op, batch_index, box):
    x = torch.ones(2, 1, 8, 8)
    rois = torch.tensor([[float(batch_index), *box]])
    try:
        out = call(x, rois)
    except Exception as err:  # noqa: BLE001
        inverted = box[2] < box[0] or box[3] < box[1]
        if batch_index in (0, 1) and inverted and isinstance(err, InvertedRoIError):
            return  # refused for its inverted box (aligned=True), not for its index
        assert batch_index not in (0, 1), f"a valid index was refused: {err}"
        _clear(err, op)
        return
    assert batch_index in (0, 1), f"batch index {batch_index} of a batch of 2 gave {out}"
    assert torch.isfinite(out).all() and out.abs().max() <= 1.0  # averages of ones (or 0)


@PROPERTY
@given(data=st.data(), m=st.integers(0, 4), n=st.integers(0, 4), aligned=st.booleans())
def test_bbox_overlaps_shapes(data, m, n, aligned):
    a, b = _boxes(data.draw, m), _boxes(data.draw, n)
    try:
        out = bbox_overlaps(a, b, aligned=aligned)
    except Exception as err:  # noqa: BLE001
        _clear(err, "bbox_overlaps")
        assert aligned and m != n, f"a valid pair was refused: {err}"
        assert isinstance(err, AssertionError)  # what mmcv's assert raised
        assert f"got {m} and {n}" in str(err)
        return
    assert out.shape == ((m,) if aligned else (m, n))
    finite = torch.isfinite(a).all() and torch.isfinite(b).all()
    if finite:
        assert torch.isfinite(out).all()


# Issue 36: an inverted box reached torchvision's kernel, which failed with a bare C++ error.
ALIGNED_OPS = {
    "roi_align": lambda x, rois, mode: roi_align(x, rois, (2, 2), 1.0, 0, mode, True),
    "RoIAlign": lambda x, rois, mode: RoIAlign((2, 2), 1.0, 0, mode)(x, rois),
}
ROI_OPS_WITHOUT_ALIGN.update(POOLING_OPS)
# Ops that take an inverted box as mmcv's kernels do (RoIAlign unaligned clamps it to 1 pixel,
# the others pool an empty or clamped bin).
LENIENT_OPS = {
    "roi_align unaligned": lambda x, rois: roi_align(x, rois, (2, 2), 1.0, 0, "max", False),
    "RoIAlign unaligned": lambda x, rois: RoIAlign((2, 2), 1.0, 2, aligned=False)(x, rois),
    **ROI_OPS_WITHOUT_ALIGN,
}


def _inverted_box(draw):
    x1, y1, x2, y2 = (draw(st.floats(-4, 20)) for _ in range(4))
    x1, x2 = sorted((x1, x2))
    y1, y2 = sorted((y1, y2))
    # Invert one axis or both, by at least a little: mmcv's assertion needs size < 0.
    flip = draw(st.sampled_from(["x", "y", "xy"]))
    if "x" in flip:
        x1, x2 = x2 + 0.25, x1
    if "y" in flip:
        y1, y2 = y2 + 0.25, y1
    return [0.0, x1, y1, x2, y2]


@PROPERTY
@given(
    data=st.data(), op=st.sampled_from(sorted(ALIGNED_OPS)), mode=st.sampled_from(["avg", "max"])
)
def test_aligned_roi_align_refuses_inverted_boxes(data, op, mode):
    x = torch.rand(1, 2, 16, 16)
    good = [0.0, 1.0, 1.0, 9.0, 9.0]
    bad = _inverted_box(data.draw)
    with pytest.raises(InvertedRoIError) as info:
        ALIGNED_OPS[op](x, torch.tensor([good, bad]), mode)
    assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)
    message = str(info.value)
    assert message.startswith(f"{op}: rois[1] = ") and "x2 < x1 or y2 < y1" in message
    assert "aligned=False" in message  # what to do


def test_the_issue_box_is_refused_once_and_clearly():
    rois = torch.tensor([[0, 11.17, 8.63, 2.86, 10.55]])
    with pytest.raises(ValueError, match=r"^RoIAlign: rois\[0\] = \[0\.0, 11\.1"):
        RoIAlign((2, 2), 1.0, 0)(torch.rand(1, 1, 16, 16), rois)


@PROPERTY
@given(data=st.data(), op=st.sampled_from(sorted(LENIENT_OPS)))
def test_other_roi_poolings_pool_inverted_boxes(data, op):
    x = torch.rand(1, 2, 16, 16)
    out = LENIENT_OPS[op](x, torch.tensor([_inverted_box(data.draw)]))
    assert out.shape == (1, 2, 2, 2)
    assert torch.isfinite(out).all()


@PROPERTY
@given(w=st.floats(-12, -0.01), h=st.floats(-12, 12), aligned=st.booleans())
def test_roi_align_rotated_with_a_negative_side(w, h, aligned):
    x = torch.rand(1, 2, 16, 16)
    rois = torch.tensor([[0.0, 8.0, 8.0, w, h, 0.3]])
    layer = RoIAlignRotated((2, 2), 1.0, 2, aligned=aligned)
    if aligned:  # mmcv's kernel asserts w, h >= 0 here
        with pytest.raises(ValueError, match="^roi_align_rotated: .*non-negative w and h"):
            layer(x, rois)
        return
    out = layer(x, rois)
    assert out.shape == (1, 2, 2, 2) and torch.isfinite(out).all()
