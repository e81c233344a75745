import pytest
import torch

from mmpar.parallel import DataContainer


def test_data_container_properties_and_repr():
    dc = DataContainer(torch.zeros(3, 4, 5), stack=True, padding_value=7, pad_dims=1)
    assert dc.stack and not dc.cpu_only
    assert dc.padding_value == 7 and dc.pad_dims == 1
    assert dc.size() == torch.Size([3, 4, 5]) and dc.size(1) == 4 and dc.dim() == 3
    assert dc.datatype == "torch.FloatTensor"
    text = repr(dc)
    assert "(3, 4, 5)" in text and "torch.float32" in text and "stack=True" in text
    with pytest.raises(AttributeError):
        dc.data = 1
    with pytest.raises(AttributeError):
        dc.stack = False
    meta = DataContainer({"name": "a.jpg"}, cpu_only=True)
    assert meta.datatype is dict and "cpu_only=True" in repr(meta)
    with pytest.raises(TypeError, match="needs tensor data"):
        meta.size()


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "two"])
def test_data_container_rejects_bad_pad_dims(bad):
    with pytest.raises(ValueError, match="pad_dims"):
        DataContainer(torch.zeros(1), pad_dims=bad)


def test_tensor_only_methods_raise_attribute_error_as_mmcv():
    meta = DataContainer({"name": "a.jpg"}, cpu_only=True)
    for method in (meta.size, meta.dim):
        with pytest.raises(AttributeError, match="has no attribute .* for data of type"):
            method()


def test_assert_tensor_type_decorates_subclass_methods():
    from mmpar.parallel.data_container import assert_tensor_type

    class Boxes(DataContainer):
        @assert_tensor_type
        def numel(self):
            """Number of elements."""
            return self.data.numel()

    assert Boxes(torch.zeros(2, 4)).numel() == 8
    assert Boxes.numel.__name__ == "numel" and Boxes.numel.__doc__ == "Number of elements."
    with pytest.raises(AttributeError, match="Boxes has no attribute numel for data of type"):
        Boxes([1, 2]).numel()


def test_len_is_len_of_data():
    assert len(DataContainer([[1, 2], [3]])) == 2
    assert len(DataContainer(torch.zeros(5, 2))) == 5


@pytest.fixture
def fake_pinning(monkeypatch):
    """Tensor.pin_memory needs an accelerator: stand in a copy that remembers being pinned."""
    pinned = []

    def pin_memory(tensor, *args, **kwargs):
        copy = tensor.clone()
        pinned.append(copy)
        return copy

    monkeypatch.setattr(torch.Tensor, "pin_memory", pin_memory)
    return lambda tensor: any(tensor is p for p in pinned)


def test_loader_pin_thread_pins_data_container_chunks_but_not_cpu_only(fake_pinning):
    # What DataLoader(pin_memory=True)'s pin thread calls on each collated batch.
    from torch.utils.data._utils.pin_memory import pin_memory

    from mmpar.parallel import collate

    samples = [
        dict(
            img=DataContainer(torch.ones(1, 2, 2), stack=True),
            boxes=DataContainer(torch.zeros(i + 1, 4)),
            meta=DataContainer({"name": f"{i}.jpg", "scale": torch.ones(2)}, cpu_only=True),
        )
        for i in range(4)
    ]
    batch = collate(samples, samples_per_gpu=2)
    out = pin_memory(batch)
    assert isinstance(out["img"], DataContainer) and out["img"].stack
    assert len(out["img"].data) == 2 and all(fake_pinning(t) for t in out["img"].data)
    assert all(fake_pinning(t) for chunk in out["boxes"].data for t in chunk)
    assert out["boxes"].padding_value == batch["boxes"].padding_value
    assert out["meta"] is batch["meta"]  # cpu_only: never pinned, never copied
    assert not fake_pinning(out["meta"].data[0][0]["scale"])
    for before, after in zip(batch["img"].data, out["img"].data):
        assert torch.equal(before, after)
