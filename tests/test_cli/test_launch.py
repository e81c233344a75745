"""on_rank_zero: rank 0 runs the check, every rank gets its result or raises its error."""

import pytest

import mmpar.utils.dist as dist_module
from mmpar.cli import WorkDirLockedError, on_rank_zero


def _world(monkeypatch, rank, rank0_outcome=None):
    """Pretend to be ``rank`` of 2; the broadcast delivers ``rank0_outcome`` off rank 0."""
    sent = []

    def broadcast(obj, src=0):
        sent.append(obj)
        return obj if rank == 0 else rank0_outcome

    monkeypatch.setattr(dist_module, "get_dist_info", lambda: (rank, 2))
    monkeypatch.setattr(dist_module, "broadcast_object", broadcast)
    return sent


def test_without_distribution_it_is_a_plain_call():
    assert on_rank_zero(lambda: 7) == 7
    with pytest.raises(WorkDirLockedError, match="busy"):
        on_rank_zero(lambda: (_ for _ in ()).throw(WorkDirLockedError("busy")))


def test_rank_zero_runs_it_and_sends_result_or_error(monkeypatch):
    sent = _world(monkeypatch, rank=0)
    assert on_rank_zero(lambda: "name") == "name"
    error = WorkDirLockedError('work_dir "w" is in use by another run')

    def locked():
        raise error

    with pytest.raises(WorkDirLockedError) as info:
        on_rank_zero(locked)
    assert info.value is error
    assert sent == [("name", None), (None, error)]


def test_other_ranks_do_not_run_it_and_raise_rank_zeros_error(monkeypatch):
    def must_not_run():
        raise AssertionError("only rank 0 runs the check")

    _world(monkeypatch, rank=1, rank0_outcome=("20240101_000000_abcdef", None))
    assert on_rank_zero(must_not_run) == "20240101_000000_abcdef"
    _world(monkeypatch, rank=1, rank0_outcome=(None, WorkDirLockedError("held by pid 12")))
    with pytest.raises(WorkDirLockedError, match="held by pid 12"):
        on_rank_zero(must_not_run)
