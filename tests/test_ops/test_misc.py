"""bbox_overlaps, SyncBatchNorm, build info and the deprecated layer wrappers of mmpar.ops."""

import warnings

import pytest
import torch

from mmpar import cnn
from mmpar.cnn import NORM_LAYERS, build_norm_layer
from mmpar.ops import (
    Conv2d,
    ConvTranspose2d,
    Linear,
    MaxPool2d,
    SyncBatchNorm,
    bbox_overlaps,
    get_compiler_version,
    get_compiling_cuda_version,
    get_onnxruntime_op_path,
)


def _ref_overlap(a, b, mode, offset):
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]) + offset)
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]) + offset)
    inter = iw * ih
    area = lambda r: (r[2] - r[0] + offset) * (r[3] - r[1] + offset)  # noqa: E731
    return inter / (area(a) if mode == "iof" else area(a) + area(b) - inter)


@pytest.mark.parametrize("mode", ["iou", "iof"])
@pytest.mark.parametrize("offset", [0, 1])
def test_bbox_overlaps_pairwise_and_aligned(mode, offset):
    g = torch.Generator().manual_seed(0)
    xy = torch.rand(5, 2, generator=g) * 10
    b1 = torch.cat([xy, xy + torch.rand(5, 2, generator=g) * 8 + 1], 1)
    xy = torch.rand(5, 2, generator=g) * 10
    b2 = torch.cat([xy, xy + torch.rand(5, 2, generator=g) * 8 + 1], 1)
    out = bbox_overlaps(b1, b2[:3], mode, offset=offset)
    ref = [[_ref_overlap(a, b, mode, offset) for b in b2[:3].tolist()] for a in b1.tolist()]
    assert torch.allclose(out, torch.tensor(ref), atol=1e-6)
    aligned = bbox_overlaps(b1, b2, mode, aligned=True, offset=offset)
    diag = [_ref_overlap(a, b, mode, offset) for a, b in zip(b1.tolist(), b2.tolist())]
    assert torch.allclose(aligned, torch.tensor(diag), atol=1e-6)
    assert bbox_overlaps(b1[:0], b2).shape == (0, 5)
    assert bbox_overlaps(b1[:0], b2[:0], aligned=True).shape == (0,)


def test_bbox_overlaps_aligned_with_unequal_counts_names_both():
    boxes = torch.tensor([[0.0, 0, 2, 2], [1, 1, 3, 3], [0, 0, 1, 1]])
    with pytest.raises(
        ValueError, match=r"^bbox_overlaps: .* got 3 and 2; use aligned=False"
    ) as info:
        bbox_overlaps(boxes, boxes[:2], aligned=True)
    assert isinstance(info.value, AssertionError)  # mmcv asserts


def test_sync_batch_norm_is_registered_and_acts_as_batch_norm_in_one_process():
    assert NORM_LAYERS.get("MMSyncBN") is SyncBatchNorm
    name, layer = build_norm_layer(dict(type="MMSyncBN"), 3)
    assert isinstance(layer, torch.nn.SyncBatchNorm) and name.startswith("bn")
    plain = torch.nn.BatchNorm2d(3)
    assert list(layer.state_dict()) == list(plain.state_dict())
    plain.load_state_dict(layer.state_dict())  # mmcv initialises the scale at random
    x = torch.randn(4, 3, 2, 2)
    assert torch.allclose(layer(x), plain(x), atol=1e-6)
    assert torch.allclose(layer.running_mean, plain.running_mean)


def test_build_info_answers_as_mmcv_without_compiled_ops():
    assert get_onnxruntime_op_path() == ""
    assert get_compiling_cuda_version() == "not available"
    assert isinstance(get_compiler_version(), str)


@pytest.mark.parametrize(
    ("wrapper", "base", "args"),
    [
        (Conv2d, cnn.Conv2d, (2, 2, 3)),
        (ConvTranspose2d, cnn.ConvTranspose2d, (2, 2, 3)),
        (Linear, cnn.Linear, (2, 2)),
        (MaxPool2d, cnn.MaxPool2d, (2,)),
    ],
)
def test_deprecated_wrappers_warn_and_are_the_cnn_layers(wrapper, base, args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layer = wrapper(*args)
    assert isinstance(layer, base)
    assert any(
        issubclass(w.category, DeprecationWarning) and "mmcv.cnn" in str(w.message) for w in caught
    )
