"""mmpar.utils.dist: rank/world size, rank-0-only calls and collectives, with and without a
process group (process-group set-up is tested in tests/test_runner/test_dist_utils.py)."""

import pytest
import torch
import torch.distributed as dist

from mmpar.utils import dist as utils_dist
from mmpar.utils.dist import (
    all_reduce_dict,
    barrier,
    broadcast_object,
    collect_results,
    get_dist_info,
    is_distributed,
    master_only,
)


def test_helpers_without_distributed():
    assert not dist.is_initialized() and not is_distributed()
    assert get_dist_info() == (0, 1)
    barrier()
    data = {"loss": torch.tensor(2.0)}
    assert all_reduce_dict(data) == data
    with pytest.raises(ValueError, match="'mean' or 'sum'"):
        all_reduce_dict(data, op="max")
    assert broadcast_object([1, 2]) == [1, 2]
    assert collect_results(["a", "b", "c"], 2) == ["a", "b"]
    with pytest.raises(ValueError, match="got 1 results.*3 samples"):
        collect_results(["a"], 3)


def test_master_only_runs_on_rank_zero(monkeypatch):
    calls = []

    @master_only
    def save(x):
        """Doc kept."""
        calls.append(x)
        return x

    assert save(1) == 1 and calls == [1] and save.__doc__ == "Doc kept."
    monkeypatch.setattr(utils_dist, "get_dist_info", lambda: (1, 2))
    assert save(2) is None and calls == [1]


def test_helpers_in_a_world_of_one(gloo_group):
    assert is_distributed()  # the collectives below take their process-group path
    assert get_dist_info() == (0, 1)
    barrier()
    reduced = all_reduce_dict({"b": torch.tensor([1, 3]), "a": 2}, op="mean")
    assert list(reduced) == ["b", "a"]
    assert reduced["b"].tolist() == [1.0, 3.0] and reduced["a"] == 2.0
    assert all_reduce_dict({"x": torch.tensor(4)}, op="sum")["x"].item() == 4
    assert broadcast_object({"k": 1}) == {"k": 1}
    assert collect_results([3, 4, 5], 2) == [3, 4]
