"""pixel_group (PAN) and contour_expand (PSENet) against mmcv-full's CPU kernels and their loops.

The stored cases (scripts/mmcv_reference/text.py) come from mmcv-full 1.7.2's compiled kernels;
the results must be equal, float for float. The property tests run random small maps through
a one-pixel-at-a-time queue written from the C++ kernels, against the level-at-a-time arrays of
mmpar/ops/_region_growing.py.
"""

from collections import deque

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mmpar.ops import contour_expand, pixel_group
from mmpar.ops._region_growing import DtypeError
from mmpar.utils.compat_errors import CheckTypeError, CheckValueError
from tests.helpers.mmcv_reference import load_reference, reference_cases

PIXEL_GROUP_KEYS = ("score", "mask", "embedding", "kernel_label", "kernel_contour")


def _ragged(flat: torch.Tensor, lengths: torch.Tensor) -> list[list[float]]:
    return [chunk.tolist() for chunk in flat.split(lengths.tolist())]


@pytest.mark.parametrize("case", [c for c in reference_cases("text") if c.startswith("pixel_")])
def test_pixel_group_equals_mmcv_full(case):
    ref = load_reference("text", case)
    args = [ref[key].numpy() for key in PIXEL_GROUP_KEYS]
    num, thr = int(ref["kernel_region_num"]), float(ref["distance_threshold"])
    expected = _ragged(ref["out_flat"], ref["out_lengths"])
    assert pixel_group(*args, num, thr) == expected
    # Tensors (as mmocr passes them after .cpu()) give the same lists.
    assert pixel_group(*(ref[key] for key in PIXEL_GROUP_KEYS), num, thr) == expected


@pytest.mark.parametrize("case", [c for c in reference_cases("text") if c.startswith("contour")])
def test_contour_expand_equals_mmcv_full(case):
    ref = load_reference("text", case)
    args = (int(ref["min_kernel_area"]), int(ref["kernel_num"]))
    got = contour_expand(ref["kernel_mask"].numpy(), ref["internal_kernel_label"].numpy(), *args)
    assert got == ref["out"].tolist()
    assert contour_expand(ref["kernel_mask"], ref["internal_kernel_label"], *args) == got


def test_contour_expand_grows_over_the_first_mask_in_every_round():
    # mmcv 1.7.2's kernel reads kernel_mask[0] in every round. Growing over mask 1 first (as
    # PSENet means to) would give kernel 1 columns 0-3 ([1, 1, 1, 1, 2, 2]); over mask 0 the
    # two kernels meet half way. The stored "unnested" case shows the same on random masks.
    masks = np.zeros((3, 1, 6), np.uint8)
    masks[0, 0, :] = 1
    masks[1, 0, :4] = 1
    labels = np.array([[1, 0, 0, 0, 0, 2]], np.int32)
    masks[2] = labels > 0
    assert contour_expand(masks, labels, 1, 2) == [[1, 1, 1, 2, 2, 2]]
    # One mask: no round, only the small kernels dropped.
    assert contour_expand(masks[:1], np.array([[1, 0, 2, 2, 0, 0]], np.int32), 2, 2) == [
        [0, 0, 2, 2, 0, 0]
    ]


# --- the kernels' queues, one pixel at a time -------------------------------------------------


def _pixel_group_queue(score, mask, embedding, kernel_label, contour, num, threshold):
    """pixel_group_cpu's loops, with its float32 sums and its distance test."""
    height, width, channels = embedding.shape
    label = kernel_label.astype(np.int64).copy()
    sums = np.zeros((num, channels), np.float32)
    sizes = np.zeros(num, np.float32)
    queue = deque()
    for y in range(height):
        for x in range(width):
            if label[y, x] > 0 and channels:
                for d in range(channels):
                    sums[label[y, x], d] = np.float32(sums[label[y, x], d] + embedding[y, x, d])
                sizes[label[y, x]] += 1
                if contour[y, x]:
                    queue.append((y, x, label[y, x]))
    with np.errstate(divide="ignore", invalid="ignore"):
        means = sums / sizes[:, None]
    limit = np.float32(threshold) * np.float32(threshold)
    while queue:
        y, x, lab = queue.popleft()
        for dy, dx in ((0, -1), (0, 1), (-1, 0), (1, 0)):
            ty, tx = y + dy, x + dx
            if not (0 <= ty < height and 0 <= tx < width) or not mask[ty, tx] or label[ty, tx] > 0:
                continue
            dis = np.float32(0)
            for d in range(channels):
                diff = np.float32(means[lab, d] - embedding[ty, tx, d])
                dis = np.float32(np.float64(dis) + np.float64(diff) ** 2)
                if dis >= limit:
                    break
            if dis >= limit:
                continue
            queue.append((ty, tx, lab))
            label[ty, tx] = lab
    out = [[np.float32(0), np.float32(0)] for _ in range(num)]
    for y in range(height):
        for x in range(width):
            if label[y, x] > 0:
                row = out[label[y, x]]
                row += [float(x), float(y)]
                row[0] = np.float32(row[0] + np.float32(score[y, x]))
                row[1] += 1
    for row in out:
        if row[1] > 0:
            row[0] = np.float32(row[0]) / np.float32(row[1])
    return [[float(v) for v in row] for row in out]


def _contour_expand_queue(masks, labels, min_area, num):
    """contour_expand's kernel_dilate: rounds over kernel_mask[0] (its offsets are all zero)."""
    height, width = labels.shape
    area = np.bincount(labels.reshape(-1), minlength=num + 1)
    text = [[0] * width for _ in range(height)]
    queue = deque()
    for x in range(height):
        for y in range(width):
            if labels[x, y] and area[labels[x, y]] >= min_area:
                queue.append((x, y))
                text[x][y] = int(labels[x, y])
    for _ in range(len(masks) - 1):
        nxt = deque()
        while queue:
            x, y = queue.popleft()
            edge = True
            for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                tx, ty = x + dx, y + dy
                if not (0 <= tx < height and 0 <= ty < width):
                    continue
                if masks[0][tx, ty] == 0 or text[tx][ty] > 0:
                    continue
                queue.append((tx, ty))
                text[tx][ty] = text[x][y]
                edge = False
            if edge:
                nxt.append((x, y))
        queue = nxt
    return text


@st.composite
def text_maps(draw):
    height, width = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    channels = draw(st.sampled_from([0, 1, 2, 2, 3]))
    num = draw(st.integers(1, 4))
    kernel_label = draw(arrays(np.int32, (height, width), elements=st.integers(0, num - 1)))
    small = st.floats(-1, 1, width=32)
    return (
        draw(arrays(np.float32, (height, width), elements=st.floats(0, 1, width=32))),
        draw(arrays(np.bool_, (height, width), elements=st.sampled_from([True, True, False]))),
        draw(arrays(np.float32, (height, width, channels), elements=small)),
        kernel_label,
        draw(arrays(np.uint8, (height, width), elements=st.integers(0, 1))),
        num,
        draw(st.sampled_from([0.3, 1.5, 4.0])),
    )


@settings(max_examples=150, deadline=None)
@given(text_maps())
def test_pixel_group_follows_the_kernels_queue(maps):
    assert pixel_group(*maps) == _pixel_group_queue(*maps)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 7).flatmap(
        lambda h: st.tuples(
            arrays(np.uint8, st.tuples(st.integers(0, 3), st.just(h), st.just(5)),
                   elements=st.integers(0, 1)),
            arrays(np.int32, (h, 5), elements=st.integers(0, 3)),
            st.integers(0, 4),
        )
    )
)  # fmt: skip
def test_contour_expand_follows_the_kernels_queue(args):
    masks, labels, min_area = args
    assert contour_expand(masks, labels, min_area, 3) == _contour_expand_queue(
        masks, labels, min_area, 3
    )


# --- inputs --------------------------------------------------------------------------------


def _small_maps():
    label = np.array([[0, 1, 1], [0, 0, 2]], np.int32)
    return (
        np.full((2, 3), 0.5, np.float32),
        np.ones((2, 3), bool),
        np.zeros((2, 3, 2), np.float32),
        label,
        (label > 0).astype(np.uint8),
    )


def test_pixel_group_accepts_mmcvs_inputs_and_other_dtypes():
    score, mask, emb, label, contour = _small_maps()
    expected = pixel_group(score, mask, emb, label, contour, 3, 0.5)
    assert expected == [[0.0, 0.0], [0.5, 5.0, 0, 0, 1, 0, 2, 0, 0, 1, 1, 1], [0.5, 1.0, 2, 1]]
    assert all(type(v) is float for row in expected for v in row)
    wider = (score.astype(np.float64), mask.astype(np.uint8), emb, label.astype(np.int64))
    assert pixel_group(*wider, contour.astype(bool), 3, 0.5) == expected
    tensors = [torch.from_numpy(a) for a in (score, mask, emb, label, contour)]
    assert pixel_group(*tensors, 3, 0.5) == expected


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        (dict(score=[[0.5]]), CheckTypeError, "score must be a numpy array or a torch.Tensor"),
        (dict(num=3.0), CheckTypeError, "kernel_region_num must be an int"),
        (dict(thr=1), CheckTypeError, "distance_threshold must be a float"),
        (dict(mask=np.ones((3, 2), bool)), CheckValueError, r"mask has shape \(3, 2\)"),
        (dict(emb=np.zeros((2, 3), np.float32)), CheckValueError, "embedding must have 3 dim"),
        (dict(emb=np.zeros((3, 2, 1), np.float32)), CheckValueError, r"embedding must be \(H, W"),
        (dict(label=np.zeros((2, 3), np.float32)), DtypeError, "must hold integer labels"),
        (dict(num=2), ValueError, "label 2, outside 0..1"),
        (dict(label=np.full((2, 3), -1, np.int32)), ValueError, "label -1"),
    ],
)
def test_pixel_group_refuses_bad_input_in_one_line(change, error, match):
    score, mask, emb, label, contour = _small_maps()
    args = dict(score=score, mask=mask, emb=emb, label=label, contour=contour, num=3, thr=0.5)
    args.update(change)
    with pytest.raises(error, match=match) as info:
        pixel_group(*args.values())
    assert "pixel_group: " in str(info.value) and "\n" not in str(info.value)


def test_contour_expand_refuses_bad_input_in_one_line():
    masks, labels = np.ones((2, 2, 3), np.uint8), np.array([[0, 1, 1], [0, 0, 2]], np.int32)
    with pytest.raises(AssertionError, match="kernel_num must be an int"):
        contour_expand(masks, labels, 1, 2.0)
    with pytest.raises(AssertionError, match="kernel_mask must have 3 dimensions"):
        contour_expand(masks[0], labels, 1, 2)
    with pytest.raises(CheckValueError, match=r"give both the same \(H, W\)"):
        contour_expand(masks[:, :1], labels, 1, 2)
    with pytest.raises(ValueError, match="label 2, outside 0..1"):
        contour_expand(masks, labels, 1, 1)
    with pytest.raises(RuntimeError, match="integer labels"):  # mmcv: RuntimeError (dtype)
        contour_expand(masks, labels.astype(np.float64), 1, 2)
    assert contour_expand(np.zeros((2, 0, 3), np.uint8), labels[:0], 1, 2) == []
