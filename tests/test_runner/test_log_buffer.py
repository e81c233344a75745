import pytest
import torch

from mmpar.runner import LogBuffer


def test_weighted_average_of_all_and_last_n():
    buf = LogBuffer()
    buf.update({"loss": 1.0, "acc": torch.tensor(0.5)}, count=1)
    buf.update({"loss": 4.0, "acc": 1.0}, count=3)
    assert buf.val_history["acc"] == [0.5, 1.0]  # tensors become python numbers
    assert buf.n_history["loss"] == [1, 3]
    assert not buf.ready
    buf.average()
    assert buf.ready
    assert buf.output["loss"] == pytest.approx((1 * 1 + 4 * 3) / 4)
    buf.average(1)
    assert buf.output["loss"] == pytest.approx(4.0)


def test_clear_output_keeps_history_and_clear_drops_all():
    buf = LogBuffer()
    buf.update({"loss": 2.0})
    buf.average()
    buf.clear_output()
    assert not buf.ready and not buf.output and buf.val_history["loss"] == [2.0]
    buf.clear()
    assert not buf.val_history and not buf.n_history


def test_update_rejects_non_dict():
    with pytest.raises(TypeError, match="dict"):
        LogBuffer().update([1.0])
