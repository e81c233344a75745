import pytest
import torch

from mmpar.parallel import DataContainer, collate, gather, scatter, scatter_kwargs


def _batch(n):
    return [
        {
            "img": DataContainer(torch.full((1, 2, 2 + i), float(i)), stack=True),
            "img_metas": DataContainer({"idx": i}, cpu_only=True),
            "gt": DataContainer(torch.full((i + 1, 4), float(i))),
            "label": i,
        }
        for i in range(n)
    ]


@pytest.mark.parametrize("target", [[-1], [], None])
def test_cpu_scatter_keeps_every_chunk(target):
    data = collate(_batch(5), samples_per_gpu=2)
    out = scatter(data, target)
    assert len(out) == 3
    assert [o["label"].tolist() for o in out] == [[0, 1], [2, 3], [4]]
    assert [o["img_metas"] for o in out] == [
        [{"idx": 0}, {"idx": 1}],
        [{"idx": 2}, {"idx": 3}],
        [{"idx": 4}],
    ]
    assert [tuple(o["img"].shape) for o in out] == [(2, 1, 2, 3), (2, 1, 2, 5), (1, 1, 2, 6)]
    assert [len(o["gt"]) for o in out] == [2, 2, 1]
    assert torch.equal(out[2]["gt"][0], torch.full((5, 4), 4.0))
    for o in out:
        assert o["img"].device.type == "cpu"


def test_scatter_kwargs_gives_kwargs_to_every_chunk_and_pads():
    data = collate(_batch(4), samples_per_gpu=2)
    opt = object()
    inputs, kwargs = scatter_kwargs((data,), {"optimizer": opt}, [-1])
    assert len(inputs) == len(kwargs) == 2
    assert all(k["optimizer"] is opt for k in kwargs)
    assert isinstance(inputs[0], tuple) and inputs[1][0]["label"].tolist() == [2, 3]
    inputs, kwargs = scatter_kwargs((data,), None, [-1])
    assert kwargs == ({}, {})
    inputs, kwargs = scatter_kwargs((), {"data": data}, [-1])
    assert inputs == ((), ()) and kwargs[1]["data"]["label"].tolist() == [2, 3]


def test_plain_tensors_split_with_chunks_and_whole_without():
    data = collate(_batch(4), samples_per_gpu=2)
    extra = torch.arange(4)
    out = scatter((data, extra, "tag"), [-1])
    assert [o[1].tolist() for o in out] == [[0, 1], [2, 3]]
    assert [o[2] for o in out] == ["tag", "tag"]
    (only,) = scatter((torch.arange(6),), [-1])
    assert only[0].tolist() == list(range(6))


def test_scatter_rejects_uncollated_and_inconsistent():
    with pytest.raises(TypeError, match=r"inputs\['img'\].*collate"):
        scatter({"img": DataContainer(torch.zeros(3), stack=True)}, [-1])
    a = collate(_batch(4), 2)
    b = collate(_batch(4), 4)
    with pytest.raises(ValueError, match="2 chunks.*1"):
        scatter((a["img"], b["img"]), [-1])


def test_scatter_more_chunks_than_gpus_is_an_error():
    data = collate(_batch(3), samples_per_gpu=1)
    with pytest.raises(ValueError, match="3 device chunks but only 2 target GPUs"):
        scatter(data, [0, 1])


def test_gather_dict_outputs_weights_by_num_samples():
    outs = [
        {
            "loss": torch.tensor(1.0, requires_grad=True),
            "log_vars": {"loss": 1.0, "acc": 0.5},
            "num_samples": 1,
            "pred": torch.zeros(1, 3),
            "names": ["a"],
        },
        {
            "loss": torch.tensor(4.0, requires_grad=True),
            "log_vars": {"loss": 4.0, "acc": 1.0},
            "num_samples": 3,
            "pred": torch.ones(3, 3),
            "names": ["b", "c", "d"],
        },
    ]
    g = gather(outs, -1)
    assert g["num_samples"] == 4
    assert g["loss"].item() == pytest.approx((1 * 1 + 4 * 3) / 4)
    assert g["log_vars"] == pytest.approx({"loss": 13 / 4, "acc": (0.5 + 3.0) / 4})
    assert tuple(g["pred"].shape) == (4, 3) and g["pred"][1:].eq(1).all()
    assert g["names"] == ["a", "b", "c", "d"]
    g["loss"].backward()
    assert outs[0]["loss"].grad.item() == pytest.approx(0.25)
    assert outs[1]["loss"].grad.item() == pytest.approx(0.75)


def test_gather_without_num_samples_and_tuples():
    g = gather([(torch.tensor(2.0), torch.zeros(2)), (torch.tensor(4.0), torch.ones(1))], "cpu")
    assert isinstance(g, tuple) and g[0].item() == pytest.approx(3.0)
    assert g[1].tolist() == [0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="keys"):
        gather([{"a": 1}, {"b": 1}], -1)
    with pytest.raises(ValueError, match="non-empty"):
        gather([], -1)


@pytest.mark.cuda
def test_scatter_to_cuda_pins_and_keeps_cpu_only():
    data = collate(_batch(2), samples_per_gpu=2)
    (out,) = scatter(data, [0])
    assert out["img"].is_cuda and out["label"].is_cuda and out["gt"][0].is_cuda
    assert out["img_metas"] == [{"idx": 0}, {"idx": 1}]
    torch.cuda.synchronize()
    assert torch.equal(out["img"].cpu(), data["img"].data[0])


@pytest.mark.cuda
def test_scatter_plain_tensor_to_gpus_splits():
    # At least two targets, so a single-GPU machine splits too (two chunks on cuda:0).
    n = torch.cuda.device_count()
    targets = [i % n for i in range(max(n, 2))]
    out = scatter((torch.arange(3 * len(targets)),), targets)
    assert len(out) == len(targets)
    assert [o[0].device.index for o in out] == targets
    assert [o[0].tolist() for o in out] == [[3 * i, 3 * i + 1, 3 * i + 2] for i in range(len(out))]


def test_device_target_path_on_meta_devices():
    # 'meta' exercises the non-CPU branch (chunk i -> device i, plain tensors split) without a GPU.
    data = collate(_batch(3), samples_per_gpu=2)
    out = scatter((data, torch.arange(3)), ["meta", "meta"])
    assert len(out) == 2
    assert all(o[0]["img"].device.type == "meta" for o in out)
    assert all(g.device.type == "meta" for o in out for g in o[0]["gt"])
    assert out[1][0]["img_metas"] == [{"idx": 2}]  # cpu_only: untouched objects
    assert [tuple(o[1].shape) for o in out] == [(2,), (1,)]
    plain = scatter((torch.arange(6),), ["meta", "meta", "meta"])
    assert [tuple(o[0].shape) for o in plain] == [(2,), (2,), (2,)]
    short = scatter((torch.arange(2),), ["meta", "meta", "meta"])
    assert len(short) == 2  # never more pieces than rows


@pytest.mark.parametrize("n", [1, 3, 5, 7])
@pytest.mark.parametrize("target", [[-1, -1], ["cpu", "cpu"], [torch.device("cpu")] * 2])
def test_plain_batch_splits_over_two_cpu_devices_without_dropping_samples(n, target):
    batch = collate([{"x": torch.full((2,), float(i)), "y": i, "name": f"{i}"} for i in range(n)])
    out = scatter(batch, target)
    assert len(out) == min(n, 2)
    got = torch.cat([o["x"] for o in out])
    assert torch.equal(got, batch["x"])  # every sample kept, in order
    assert [len(o["x"]) for o in out] == [len(c) for c in torch.arange(n).tensor_split(len(out))]
    # Each device's names and labels belong to its rows.
    for o in out:
        assert o["y"].tolist() == [int(v) for v in o["x"][:, 0]]
        assert o["name"] == [str(v) for v in o["y"].tolist()]


def test_plain_fields_follow_the_datacontainer_chunks():
    # 7 samples in chunks of 3: 3, 3, 1 (an even split would be 3, 2, 2).
    batch = [
        {
            "img": DataContainer(torch.zeros(1, 2, 2), stack=True),
            "label": i,
            "name": f"{i}.png",
            "meta": DataContainer({"i": i}, cpu_only=True),
        }
        for i in range(7)
    ]
    out = scatter(collate(batch, samples_per_gpu=3), [-1])
    assert [o["label"].tolist() for o in out] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [o["name"] for o in out] == [
        ["0.png", "1.png", "2.png"],
        ["3.png", "4.png", "5.png"],
        ["6.png"],
    ]
    assert [[m["i"] for m in o["meta"]] for o in out] == [o["label"].tolist() for o in out]
    assert [o["img"].shape[0] for o in out] == [3, 3, 1]


def test_lists_that_are_not_per_sample_are_repeated():
    data = collate(_batch(4), samples_per_gpu=2)
    out = scatter((data, ["a", "b", "c"], [1, 2, 3, 4]), [-1])
    assert [o[1] for o in out] == [["a", "b", "c"]] * 2  # length 3 != batch size 4
    # A list of atoms as long as the batch is per-sample data: it is cut with the chunks.
    assert [o[2] for o in out] == [[1, 2], [3, 4]]


def test_scatter_inputs_alias():
    from mmpar.parallel.scatter_gather import ScatterInputs

    assert torch.Tensor in ScatterInputs.__args__ and DataContainer in ScatterInputs.__args__


def test_one_cpu_target_passes_tensors_through_and_unwraps_containers():
    # One device: no copies, no splitting; each one-chunk DataContainer becomes its chunk.
    data = collate(_batch(3), samples_per_gpu=3)
    x, opt = torch.arange(6), object()
    for target in ([-1], [], None, ["cpu"], [torch.device("cpu")]):
        (inputs,), (kwargs,) = scatter_kwargs((data, x), {"optimizer": opt, "x": x}, target)
        assert inputs[1] is x and kwargs["x"] is x and kwargs["optimizer"] is opt
        assert inputs[0]["img"] is data["img"].data[0]
        assert inputs[0]["img_metas"] is data["img_metas"].data[0]  # cpu_only: as it is
        assert inputs[0]["gt"] is not data["gt"].data[0]  # a new list around the same boxes
        assert all(a is b for a, b in zip(inputs[0]["gt"], data["gt"].data[0]))
        assert inputs[0]["label"] is data["label"]
        (only,) = scatter((data, x), target)
        assert only[1] is x and only[0]["img"] is data["img"].data[0]
    assert scatter_kwargs((), None, [-1]) == ((), ())
    assert scatter_kwargs((x,), None, [-1]) == (((x,),), ({},))


def test_one_device_target_moves_all_but_cpu_only():
    data = collate(_batch(2), samples_per_gpu=2)
    (inputs,), (kwargs,) = scatter_kwargs((data,), {"extra": torch.zeros(2)}, ["meta"])
    assert inputs[0]["img"].device.type == "meta" and inputs[0]["label"].device.type == "meta"
    assert all(g.device.type == "meta" for g in inputs[0]["gt"])
    assert kwargs["extra"].device.type == "meta"
    assert inputs[0]["img_metas"] is data["img_metas"].data[0]


def test_one_target_with_several_chunks_keeps_the_general_rules():
    data = collate(_batch(3), samples_per_gpu=2)
    assert len(scatter(data, [-1])) == 2  # CPU: every chunk kept
    with pytest.raises(ValueError, match="2 device chunks but only 1 target"):
        scatter(data, ["meta"])
    with pytest.raises(TypeError, match="collate"):
        scatter_kwargs(({"img": DataContainer(torch.zeros(3), stack=True)},), None, [-1])
