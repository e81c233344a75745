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
