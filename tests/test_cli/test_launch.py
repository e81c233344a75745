"""on_rank_zero: rank 0 runs the check, every rank gets its result or raises its error.

check_shared_work_dir: every rank sees rank 0's work dir, or auto-resume is refused.
"""

import logging
from unittest import mock

import pytest

import mmpar.utils.dist as dist_module
from mmpar.cli import (
    UsageError,
    WorkDirLock,
    WorkDirLockedError,
    check_shared_work_dir,
    on_rank_zero,
)
from mmpar.cli.workdir_lock import read_holder


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


def _views(monkeypatch, views):
    """Pretend rank 0 of 2 gathered ``views`` (rank, host, sees rank 0's lock file)."""
    _world(monkeypatch, rank=0)
    monkeypatch.setattr(dist_module, "collect_results", lambda results, size: views)


def test_shared_work_dir_is_not_checked_without_distribution(tmp_path, caplog):
    with WorkDirLock(tmp_path / "w") as lock:
        check_shared_work_dir(lock, auto_resume=True)  # no group: nothing to compare, no error
    assert caplog.records == []


@pytest.mark.parametrize("auto_resume", [False, True])
def test_shared_work_dir_seen_by_every_rank_passes(monkeypatch, tmp_path, caplog, auto_resume):
    _views(monkeypatch, [(0, "n0", True), (1, "n1", True)])
    with WorkDirLock(tmp_path / "w") as lock:
        check_shared_work_dir(lock, auto_resume)
    assert caplog.records == []


def test_node_local_work_dir_warns_when_training_and_refuses_auto_resume(monkeypatch, tmp_path):
    _views(monkeypatch, [(0, "n0", True), (1, "n1", True), (2, "n2", False), (3, "n2", False)])
    logger = logging.getLogger("test_shared_work_dir")
    with WorkDirLock(tmp_path / "w") as lock:
        with mock.patch.object(logger, "warning") as warning:
            check_shared_work_dir(lock, auto_resume=False, logger=logger)
        where = (
            f'work_dir "{lock.work_dir}" is not shared by all ranks: rank(s) 2 (host n2), '
            f"3 (host n2) do not see rank 0's lock file {lock.path} there"
        )
        warning.assert_called_once()
        assert warning.call_args.args[0].startswith(f"{where}; checkpoints and logs are written")
        with pytest.raises(UsageError) as err:
            check_shared_work_dir(lock, auto_resume=True, logger=logger)
        assert str(err.value).startswith(f"{where}. Auto-resume needs it")
        assert "filesystem all nodes mount at the same path" in str(err.value)


def test_other_ranks_compare_rank_zeros_lock_identity(monkeypatch, tmp_path):
    # Rank 1 reads its own work dir's lock file and reports whether it holds rank 0's identity.
    reported = []
    monkeypatch.setattr(dist_module, "get_dist_info", lambda: (1, 2))
    monkeypatch.setattr(
        dist_module, "collect_results", lambda results, size: reported.extend(results)
    )
    with WorkDirLock(tmp_path / "shared") as lock:
        # Rank 0's broadcasts: its lock file's identity, then its finding (none here).
        for work_dir in (tmp_path / "shared", tmp_path / "local"):
            received = iter([read_holder(lock.path), None])
            monkeypatch.setattr(
                dist_module, "broadcast_object", lambda obj, src=0, r=received: next(r)
            )
            check_shared_work_dir(WorkDirLock(work_dir), auto_resume=True)  # not acquired: rank 1
    assert [(rank, sees) for rank, _, sees in reported] == [(1, True), (1, False)]


def test_no_lock_file_to_compare_skips_the_check(monkeypatch, tmp_path):
    # Rank 0 could not lock (a filesystem without flock): nothing is compared or refused.
    sent = _world(monkeypatch, rank=0)
    check_shared_work_dir(WorkDirLock(tmp_path / "w"), auto_resume=True)
    assert sent == [None]


@pytest.fixture
def torchrun_with_cuda(monkeypatch):
    """A torchrun environment on a (pretend) CUDA machine; records init_process_group."""
    import torch
    import torch.distributed as dist

    for name, value in dict(
        RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="1"
    ).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TORCHELASTIC_RESTART_COUNT", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "set_device", lambda device: None)
    calls = []
    monkeypatch.setattr(dist, "init_process_group", lambda **kw: calls.append(kw))
    return calls


@pytest.mark.parametrize("dist_params", [{}, {"backend": "nccl"}])
def test_fsdp_cpu_offload_gets_a_gloo_backend_for_cpu_tensors(torchrun_with_cuda, dist_params):
    # grad_clip's norm of offloaded (CPU) gradients is a collective on CPU tensors: nccl alone
    # has no backend for them (pytorch#148532).
    from mmpar.cli import init_launcher

    wrapper = dict(type="MMFullyShardedDataParallel", cpu_offload=True)
    assert init_launcher("pytorch", dist_params, model_wrapper=wrapper)
    assert torchrun_with_cuda[0]["backend"] == "cpu:gloo,cuda:nccl"


def test_without_cpu_offload_the_backend_is_left_alone(torchrun_with_cuda):
    from mmpar.cli import init_launcher

    init_launcher("pytorch", {}, model_wrapper=dict(type="MMFullyShardedDataParallel"))
    init_launcher("pytorch", {"backend": "gloo"}, model_wrapper=dict(cpu_offload=True))
    assert [call["backend"] for call in torchrun_with_cuda] == ["nccl", "gloo"]
