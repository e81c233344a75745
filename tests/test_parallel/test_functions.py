"""mmcv's low-level ``mmpar.parallel._functions`` (CPU paths here; CUDA ones are marked)."""

import pytest
import torch

from mmpar.parallel._functions import Scatter, get_input_device, scatter, synchronize_stream


def test_scatter_forward_on_cpu_returns_every_chunk():
    chunks = [torch.zeros(2, 3), torch.ones(1, 3), torch.full((2, 3), 2.0)]
    out = Scatter.forward([-1], chunks)
    assert isinstance(out, tuple) and len(out) == 3
    assert all(torch.equal(a, b) for a, b in zip(out, chunks))
    (single,) = Scatter.forward([-1], torch.arange(4))
    assert single.tolist() == [0, 1, 2, 3]


def test_list_items_go_to_consecutive_devices():
    # 'meta' stands in for a second device without a GPU: 3 items on 2 devices -> 2 + 1.
    out = scatter([torch.zeros(1), torch.zeros(2), torch.zeros(3)], ["cpu", "meta"])
    assert [t.device.type for t in out] == ["cpu", "cpu", "meta"]
    out = Scatter.forward(["cpu", "meta"], [[torch.zeros(1)], [torch.zeros(2)]])
    assert [t[0].device.type for t in out] == ["cpu", "meta"]


def test_scatter_makes_tensors_contiguous():
    t = torch.arange(6).reshape(2, 3).t()
    assert not t.is_contiguous()
    assert scatter(t, [-1]).is_contiguous()


def test_get_input_device_and_sync_on_cpu():
    assert get_input_device([torch.zeros(1), [torch.zeros(2)]]) == -1
    assert get_input_device([]) == -1
    synchronize_stream([torch.zeros(1), torch.zeros(2)], [-1], [None])  # nothing to wait for


@pytest.mark.parametrize("fn", [get_input_device, lambda x: scatter(x, [-1])])
def test_unknown_types_are_type_errors(fn):
    with pytest.raises(TypeError, match="got dict"):
        fn({"a": torch.zeros(1)})
    with pytest.raises(TypeError, match="got str"):
        fn([torch.zeros(1), "x"])
    with pytest.raises(TypeError, match="synchronize_stream.*got int"):
        synchronize_stream(3, [-1], [None])


@pytest.mark.cuda
def test_cpu_to_gpu_copies_use_a_side_stream_and_are_synchronised():
    chunks = [torch.rand(64, 64) for _ in range(2)]
    out = Scatter.forward([0], chunks)
    assert all(t.is_cuda and t.device.index == 0 for t in out)
    assert get_input_device(list(out)) == 0
    # The current stream waited for the copies: reading on it sees the data.
    assert all(torch.equal(a.cpu(), b) for a, b in zip(out, chunks))
