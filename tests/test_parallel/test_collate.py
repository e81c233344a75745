import numpy as np
import pytest
import torch
from torch.utils.data import default_collate

from mmpar.parallel import DataContainer, collate
from mmpar.parallel.collate import merge_chunks, pad_and_stack


def _img(c, h, w, fill):
    return torch.full((c, h, w), float(fill))


def test_stack_pads_last_two_dims_per_chunk():
    batch = [
        {"img": DataContainer(_img(3, 2 + i, 5 - i, i + 1), stack=True, padding_value=-1)}
        for i in range(5)
    ]
    out = collate(batch, samples_per_gpu=2)["img"]
    assert isinstance(out, DataContainer) and out.stack and not out.cpu_only
    assert out.padding_value == -1
    shapes = [tuple(c.shape) for c in out.data]
    # chunk maxima: (3, 4, 5) for samples 0-1, (3, 6, 3) for 2-3, last chunk smaller
    assert shapes == [(2, 3, 3, 5), (2, 3, 5, 3), (1, 3, 6, 1)]
    c0 = out.data[0]
    # sample 0 is (3, 2, 5): bottom row is padding
    expected0 = torch.cat([_img(3, 2, 5, 1), torch.full((3, 1, 5), -1.0)], dim=1)
    assert torch.equal(c0[0], expected0)
    # sample 1 is (3, 3, 4): right column is padding
    assert torch.equal(c0[1, :, :, :4], _img(3, 3, 4, 2))
    assert (c0[1, :, :, 4] == -1).all()


@pytest.mark.parametrize(
    ("pad_dims", "shapes", "expected"),
    [
        (1, [(2, 3), (2, 5)], (2, 2, 5)),
        (2, [(1, 2, 3), (1, 4, 1)], (2, 1, 4, 3)),
        (3, [(1, 2, 3), (2, 1, 4)], (2, 2, 2, 4)),
        (None, [(2, 3), (2, 3)], (2, 2, 3)),
    ],
)
def test_pad_dims_variants(pad_dims, shapes, expected):
    batch = [
        DataContainer(torch.ones(s), stack=True, pad_dims=pad_dims, padding_value=9) for s in shapes
    ]
    out = collate(batch, samples_per_gpu=len(shapes))
    (stacked,) = out.data
    assert tuple(stacked.shape) == expected
    for i, s in enumerate(shapes):
        region = stacked[i][tuple(slice(0, n) for n in s)]
        assert (region == 1).all()
        assert int((stacked[i] == 9).sum()) == stacked[i].numel() - region.numel()


def test_mismatched_leading_dims_names_field_and_shapes():
    batch = [
        {"inputs": {"img": DataContainer(torch.zeros(3, 4, 4), stack=True)}},
        {"inputs": {"img": DataContainer(torch.zeros(1, 4, 4), stack=True)}},
    ]
    with pytest.raises(ValueError) as err:
        collate(batch, samples_per_gpu=2)
    msg = str(err.value)
    assert "batch['inputs']['img']" in msg
    assert "(1, 4, 4)" in msg and "(3, 4, 4)" in msg and "sample 1" in msg


def test_mismatched_ranks_and_pad_dims_none_raise():
    with pytest.raises(ValueError, match=r"\(4, 4\).*\(3, 4, 4\)"):
        collate(
            [
                DataContainer(torch.zeros(3, 4, 4), stack=True),
                DataContainer(torch.zeros(4, 4), stack=True),
            ],
            2,
        )
    with pytest.raises(ValueError, match="pad_dims=None"):
        collate(
            [
                DataContainer(torch.zeros(2, 3), stack=True, pad_dims=None),
                DataContainer(torch.zeros(2, 4), stack=True, pad_dims=None),
            ],
            2,
        )
    with pytest.raises(ValueError, match="fewer than pad_dims=2"):
        collate([DataContainer(torch.zeros(3), stack=True)], 1)


def test_chunks_are_padded_independently_only_within_chunk():
    batch = [
        DataContainer(torch.zeros(1, 1, 1), stack=True),
        DataContainer(torch.zeros(1, 8, 8), stack=True),
    ]
    out = collate(batch, samples_per_gpu=1)
    assert [tuple(c.shape) for c in out.data] == [(1, 1, 1, 1), (1, 1, 8, 8)]


def test_cpu_only_and_stack_false_keep_lists_per_chunk():
    metas = [{"filename": f"{i}.jpg", "shape": (i, i)} for i in range(3)]
    boxes = [torch.rand(i + 1, 4) for i in range(3)]
    batch = [
        {"meta": DataContainer(m, cpu_only=True), "boxes": DataContainer(b)}
        for m, b in zip(metas, boxes)
    ]
    out = collate(batch, samples_per_gpu=2)
    assert out["meta"].cpu_only and out["meta"].data == [metas[:2], metas[2:]]
    assert not out["boxes"].stack and not out["boxes"].cpu_only
    assert [len(c) for c in out["boxes"].data] == [2, 1]
    assert out["boxes"].data[0][1] is boxes[1]


def test_strings_and_bytes_are_atoms_collated_into_lists():
    batch = [{"name": f"img{i}", "raw": bytes([i]) * 3} for i in range(3)]
    out = collate(batch, samples_per_gpu=2)
    assert out["name"] == ["img0", "img1", "img2"]  # mmcv recursed into the characters forever
    assert out["raw"] == [b"\x00" * 3, b"\x01" * 3, b"\x02" * 3]
    assert collate(["a", "bc"]) == ["a", "bc"]
    assert collate([None, None]) == [None, None]  # default_collate raises; we keep a list


def test_plain_tensors_and_numbers_are_stacked_whole_whatever_samples_per_gpu():
    batch = [
        (torch.full((2,), float(i)), i, 0.5 * i, np.array([i, i]), np.float32(i), True)
        for i in range(5)
    ]
    tensors, ints, floats, arrays, np_scalars, flags = collate(batch, samples_per_gpu=2)
    for value in (tensors, ints, floats, arrays, np_scalars, flags):
        assert type(value) is torch.Tensor and len(value) == 5
    assert torch.equal(tensors[2:4], torch.tensor([[2.0, 2.0], [3.0, 3.0]]))
    assert ints.dtype == torch.int64 and ints.tolist() == [0, 1, 2, 3, 4]
    assert floats.dtype == torch.float64 and floats.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert arrays.tolist() == [[i, i] for i in range(5)]
    assert np_scalars.dtype == torch.float32
    assert flags.dtype == torch.bool


def _same(ours, torchs):
    """Equal types, shapes, dtypes and values, recursively (torch keeps tuples of strings)."""
    if isinstance(torchs, torch.Tensor):
        assert type(ours) is torch.Tensor
        assert ours.shape == torchs.shape and ours.dtype == torchs.dtype
        assert torch.equal(ours, torchs)
    elif isinstance(torchs, dict):
        assert type(ours) is dict and list(ours) == list(torchs)
        for k in torchs:
            _same(ours[k], torchs[k])
    elif isinstance(torchs, (list, tuple)):
        assert type(ours) is list and len(ours) == len(torchs)
        for a, b in zip(ours, torchs):
            _same(a, b)
    else:
        assert ours == torchs


@pytest.mark.parametrize("samples_per_gpu", [1, 2, 4])
def test_plain_fields_equal_torch_default_collate(samples_per_gpu):
    g = torch.Generator().manual_seed(0)
    batch = [
        {
            "img": torch.rand(3, 4, 4, generator=g),
            "label": torch.tensor(i % 3),
            "int": i,
            "float": 0.25 * i,
            "flag": i % 2 == 0,
            "array": np.arange(6, dtype=np.float32).reshape(2, 3) + i,
            "np_int": np.int64(i),
            "np_float": np.float64(i) / 3,
            "name": f"{i}.jpg",
            "nested": {"a": [torch.ones(2) * i, 7], "b": (i, 2.0 * i)},
        }
        for i in range(4)
    ]
    ours = collate(batch, samples_per_gpu=samples_per_gpu)
    _same(ours, default_collate(batch))
    assert tuple(ours["img"].shape) == (4, 3, 4, 4)
    assert ours["name"] == ["0.jpg", "1.jpg", "2.jpg", "3.jpg"]


def test_the_issue_example_is_a_stacked_tensor():
    out = collate([dict(img=torch.ones(3, 4, 4), label=torch.tensor(0))] * 4)
    assert type(out["img"]) is torch.Tensor and tuple(out["img"].shape) == (4, 3, 4, 4)
    assert out["label"].tolist() == [0, 0, 0, 0]
    stacked = collate([torch.zeros(2), torch.ones(2)])  # a batch of bare tensors
    assert torch.equal(stacked, torch.tensor([[0.0, 0.0], [1.0, 1.0]]))


def test_mixed_datacontainer_and_plain_fields():
    batch = [
        {
            "img": DataContainer(torch.zeros(1, 2, 2 + i), stack=True),
            "img_metas": DataContainer({"i": i}, cpu_only=True),
            "gt_label": torch.tensor(i),
            "name": f"{i}.png",
        }
        for i in range(5)
    ]
    out = collate(batch, samples_per_gpu=2)
    assert isinstance(out["img"], DataContainer) and len(out["img"].data) == 3
    assert [tuple(c.shape) for c in out["img"].data] == [(2, 1, 2, 3), (2, 1, 2, 5), (1, 1, 2, 6)]
    assert out["img_metas"].data == [[{"i": 0}, {"i": 1}], [{"i": 2}, {"i": 3}], [{"i": 4}]]
    assert type(out["gt_label"]) is torch.Tensor and out["gt_label"].tolist() == [0, 1, 2, 3, 4]
    assert out["name"] == [f"{i}.png" for i in range(5)]


def test_plain_field_errors_keep_builtin_types_of_torch_and_mmcv():
    with pytest.raises(ValueError, match=r"batch\['x'\] of sample 1 has shape \(3,\)") as err:
        collate([{"x": torch.zeros(2)}, {"x": torch.zeros(3)}])
    assert isinstance(err.value, RuntimeError)  # what torch.stack raises under mmcv
    with pytest.raises(TypeError, match="dtype object"):
        collate([np.array([object()]), np.array([object()])])
    with pytest.raises(TypeError, match=r"batch\['x'\] is a number in sample 0 but a str"):
        collate([{"x": 1}, {"x": "a"}])
    with pytest.raises(AssertionError):  # mmcv asserted on DataContainer shape mismatches
        collate(
            [
                DataContainer(torch.zeros(3, 4, 4), stack=True),
                DataContainer(torch.zeros(1, 4, 4), stack=True),
            ],
            2,
        )


def test_mixed_dtypes_are_promoted():
    out = collate([torch.zeros(2, dtype=torch.uint8), torch.ones(2)])
    assert out.dtype == torch.float32 and out.tolist() == [[0.0, 0.0], [1.0, 1.0]]


def test_nested_dicts_and_sequences_keep_paths():
    batch = [{"a": {"b": [torch.zeros(2), "x", DataContainer(torch.ones(1))]}} for _ in range(2)]
    out = collate(batch, 1)
    assert isinstance(out["a"]["b"], list)
    assert tuple(out["a"]["b"][0].shape) == (2, 2)
    assert out["a"]["b"][1] == ["x", "x"]
    assert isinstance(out["a"]["b"][2], DataContainer) and len(out["a"]["b"][2].data) == 2
    bad = [{"a": [1, 2]}, {"a": [1]}]
    with pytest.raises(ValueError, match=r"batch\['a'\] has length 2 in sample 0 but 1"):
        collate(bad, 2)
    with pytest.raises(KeyError, match="sample 1 lacks key 'b'"):
        collate([{"a": 1, "b": 2}, {"a": 1}], 2)
    with pytest.raises(TypeError, match=r"batch\['a'\] is a DataContainer in sample 0"):
        collate([{"a": DataContainer(1)}, {"a": 1}], 2)


def test_flag_mismatch_between_samples():
    with pytest.raises(ValueError, match="flags"):
        collate([DataContainer(torch.zeros(1, 1), stack=True), DataContainer(torch.zeros(1, 1))], 2)


def test_bad_batch_and_samples_per_gpu():
    with pytest.raises(ValueError, match="empty"):
        collate([], 1)
    with pytest.raises(TypeError, match="list of samples"):
        collate({"a": 1}, 1)
    with pytest.raises(TypeError, match="list of samples"):
        collate("abc", 1)
    with pytest.raises(TypeError, match="list of samples"):
        collate(torch.zeros(3), 1)
    with pytest.raises(ValueError, match="samples_per_gpu must be >= 1"):
        collate([1], 0)
    with pytest.raises(TypeError, match="stack=False"):
        collate([DataContainer([1, 2], stack=True)], 1)


def test_stack_promotes_dtype_and_accepts_numpy():
    batch = [
        DataContainer(np.ones((1, 2, 2), np.uint8), stack=True),
        DataContainer(torch.ones(1, 3, 1), stack=True),
    ]
    (stacked,) = collate(batch, 2).data
    assert stacked.dtype == torch.float32 and tuple(stacked.shape) == (2, 1, 3, 2)


def test_pad_and_stack_places_each_tensor_top_left_and_pads_the_rest():
    a, b = torch.rand(3, 5, 2), torch.rand(3, 2, 6)
    out = pad_and_stack([a, b], 2, 0.0)
    assert tuple(out.shape) == (2, 3, 5, 6)
    assert torch.equal(out[0, :, :5, :2], a) and torch.equal(out[1, :, :2, :6], b)
    assert out[0, :, :, 2:].abs().sum() == 0 and out[1, :, 2:, :].abs().sum() == 0


def test_merge_chunks_equals_single_chunk_collate():
    batch = [
        {
            "img": DataContainer(torch.rand(3, 2 + i, 6 - i), stack=True, padding_value=5),
            "meta": DataContainer({"i": i}, cpu_only=True),
            "boxes": DataContainer(torch.rand(i, 4)),
            "label": i,
        }
        for i in range(5)
    ]
    merged = merge_chunks(collate(batch, 2))
    whole = collate(batch, 5)
    for key in ("img", "meta", "boxes"):
        assert len(merged[key].data) == 1
    assert torch.equal(merged["img"].data[0], whole["img"].data[0])
    assert merged["img"].padding_value == 5
    assert merged["meta"].data == whole["meta"].data
    assert len(merged["boxes"].data[0]) == len(whole["boxes"].data[0]) == 5
    assert all(torch.equal(x, y) for x, y in zip(merged["boxes"].data[0], whole["boxes"].data[0]))
    assert torch.equal(merged["label"], whole["label"])  # plain fields: batched whole already
