import os
import stat

import pytest
import torch
import torch.distributed as dist
from helpers import free_port

import mmpar.runner
from mmpar.runner import dist_utils
from mmpar.runner.dist_utils import destroy_dist, get_dist_info, init_dist
from mmpar.utils import dist as utils_dist

TORCHRUN_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
SLURM_VARS = ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_NODELIST", "SLURM_LOCALID")
MPI_VARS = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK")


@pytest.fixture
def clean_env():
    """Remove launcher variables; restore the whole environment afterwards."""
    saved = dict(os.environ)
    for name in TORCHRUN_VARS + SLURM_VARS + MPI_VARS:
        os.environ.pop(name, None)
    try:
        yield os.environ
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def recorded_init(monkeypatch):
    calls = []
    monkeypatch.setattr(dist, "init_process_group", lambda **kw: calls.append(kw))
    return calls


def _one_process_torchrun(env):
    """The variables torchrun sets, for a job of one process on a free port."""
    env.update(
        RANK="0",
        LOCAL_RANK="0",
        WORLD_SIZE="1",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(free_port()),
    )


def test_unknown_launcher_lists_valid_ones():
    with pytest.raises(ValueError, match="unknown launcher 'torchrun'.*pytorch, slurm, mpi"):
        init_dist("torchrun")


def test_pytorch_missing_env_names_variables(clean_env):
    clean_env["RANK"] = "0"
    with pytest.raises(RuntimeError) as err:
        init_dist("pytorch")
    msg = str(err.value)
    # exactly the missing ones (RANK is set)
    assert "variable(s) LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT not set" in msg
    assert "torchrun" in msg and "--launcher none" in msg


def test_pytorch_launcher_initializes_real_group(clean_env):
    _one_process_torchrun(clean_env)
    init_dist("pytorch")
    try:
        assert dist.get_backend() == ("nccl" if torch.cuda.is_available() else "gloo")
        assert get_dist_info() == (0, 1)
        with pytest.raises(RuntimeError, match="already initialized"):
            init_dist("pytorch")
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(torch.cuda.is_available(), reason="the hint is for machines without CUDA")
def test_nccl_without_cuda_names_gloo_as_the_way_out(clean_env):
    # Released configs say dist_params = dict(backend='nccl'); on a CPU machine torch's error
    # ("no GPUs found") does not say what to pass instead.
    _one_process_torchrun(clean_env)
    try:
        with pytest.raises(ValueError, match="needs CUDA.*dist_params.backend=gloo"):
            init_dist("pytorch", backend="nccl")
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def test_destroy_dist_ends_the_group_and_then_does_nothing(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'pg'}", rank=0, world_size=1)
    try:
        destroy_dist()
        assert not dist.is_initialized()
        assert get_dist_info() == (0, 1)
        destroy_dist()  # no group: nothing to do, no error
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def test_slurm_sets_env_from_scontrol(clean_env, recorded_init, tmp_path, monkeypatch):
    fake = tmp_path / "scontrol"
    fake.write_text(
        '#!/bin/sh\n[ "$1 $2 $3" = "show hostname node[3-4]" ] && printf "node3\\nnode4\\n"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    clean_env["PATH"] = f"{tmp_path}{os.pathsep}{clean_env.get('PATH', '')}"
    clean_env.pop("MASTER_ADDR", None)
    clean_env.pop("MASTER_PORT", None)
    clean_env.update(
        SLURM_PROCID="5", SLURM_NTASKS="8", SLURM_NODELIST="node[3-4]", SLURM_LOCALID="1"
    )
    (tmp_path / "node3").touch()  # the shell would glob an unquoted node[3-4] to this
    monkeypatch.chdir(tmp_path)
    init_dist("slurm", backend="gloo", port=29611)
    assert recorded_init == [{"backend": "gloo"}]
    assert clean_env["MASTER_ADDR"] == "node3" and clean_env["MASTER_PORT"] == "29611"
    assert (clean_env["RANK"], clean_env["WORLD_SIZE"], clean_env["LOCAL_RANK"]) == ("5", "8", "1")


def test_slurm_default_port_and_missing_pieces(clean_env, recorded_init, tmp_path):
    clean_env.update(SLURM_PROCID="0", SLURM_NTASKS="1", MASTER_ADDR="head")
    clean_env.pop("MASTER_PORT", None)
    with pytest.raises(RuntimeError, match="SLURM_NODELIST not set"):
        init_dist("slurm")
    clean_env["SLURM_NODELIST"] = "node1"
    init_dist("slurm")
    assert clean_env["MASTER_PORT"] == "29500" and clean_env["MASTER_ADDR"] == "head"
    del clean_env["MASTER_ADDR"]
    clean_env["PATH"] = str(tmp_path)  # no scontrol there
    with pytest.raises(RuntimeError, match="scontrol"):
        init_dist("slurm")


def test_slurm_failing_scontrol_is_a_clear_runtime_error(clean_env, recorded_init, tmp_path):
    fake = tmp_path / "scontrol"
    fake.write_text('#!/bin/sh\necho "scontrol: error: Invalid node name specified" >&2\nexit 1\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    clean_env["PATH"] = f"{tmp_path}{os.pathsep}{clean_env.get('PATH', '')}"
    clean_env.pop("MASTER_ADDR", None)
    clean_env.update(SLURM_PROCID="0", SLURM_NTASKS="2", SLURM_NODELIST="bad[")
    with pytest.raises(RuntimeError) as err:
        init_dist("slurm", backend="gloo")
    msg = str(err.value)
    assert "`scontrol show hostname bad[` did not print a host name" in msg
    assert "scontrol: error: Invalid node name" in msg
    assert "set MASTER_ADDR" in msg and recorded_init == []


def test_slurm_with_mocked_getoutput_as_mmcv_tests_do(clean_env, recorded_init, monkeypatch):
    # mmcv 1.x's own test of init_dist('slurm') patches subprocess.getoutput and
    # torch.distributed.init_process_group; no scontrol binary is needed.
    asked = []
    monkeypatch.setattr(
        dist_utils.subprocess, "getoutput", lambda cmd: asked.append(cmd) or "127.0.0.1"
    )
    clean_env.pop("MASTER_ADDR", None)
    clean_env.pop("MASTER_PORT", None)
    clean_env.update(SLURM_PROCID="0", SLURM_NTASKS="1", SLURM_NODELIST="[0]")
    init_dist("slurm")
    assert asked == ["scontrol show hostname '[0]' | head -n1"]  # mmcv's command, quoted
    assert clean_env["MASTER_ADDR"] == "127.0.0.1" and clean_env["MASTER_PORT"] == "29500"
    assert (clean_env["WORLD_SIZE"], clean_env["RANK"]) == ("1", "0")
    assert len(recorded_init) == 1
    init_dist("slurm", port=29505)
    assert clean_env["MASTER_PORT"] == "29505"
    del clean_env["MASTER_PORT"]
    clean_env["MASTER_PORT"] = "12345"
    init_dist("slurm")
    assert clean_env["MASTER_PORT"] == "12345"


def test_mpi_requires_master_addr(clean_env, recorded_init):
    clean_env.update(
        OMPI_COMM_WORLD_RANK="2", OMPI_COMM_WORLD_SIZE="4", OMPI_COMM_WORLD_LOCAL_RANK="0"
    )
    clean_env.pop("MASTER_ADDR", None)
    with pytest.raises(RuntimeError, match="MASTER_ADDR not set.*mpirun"):
        init_dist("mpi")
    clean_env["MASTER_ADDR"] = "10.0.0.1"
    init_dist("mpi", backend="gloo")
    assert recorded_init == [{"backend": "gloo"}]
    assert (clean_env["RANK"], clean_env["WORLD_SIZE"]) == ("2", "4")


def test_rank_helpers_and_collectives_keep_their_mmcv_paths():
    # They live in mmpar.utils.dist (tests/test_utils/test_dist.py); mmcv code imports them here.
    for name in utils_dist.__all__:
        if name in ("is_distributed", "gather_object"):  # mmpar's own, not mmcv names
            continue
        assert name in dist_utils.__all__, name
        assert getattr(dist_utils, name) is getattr(utils_dist, name), name
        assert getattr(mmpar.runner, name) is getattr(utils_dist, name), name


def test_nccl_waits_30_minutes_by_default(clean_env, recorded_init, monkeypatch):
    # nccl's own default (10 minutes) aborts a job while rank 0 evaluates or saves alone.
    from datetime import timedelta

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    clean_env.update(
        OMPI_COMM_WORLD_RANK="0",
        OMPI_COMM_WORLD_SIZE="1",
        OMPI_COMM_WORLD_LOCAL_RANK="0",
        MASTER_ADDR="127.0.0.1",
    )
    init_dist("mpi", backend="nccl")
    init_dist("mpi", backend="cpu:gloo,cuda:nccl")
    init_dist("mpi", backend="nccl", timeout=600)  # a config's number: seconds
    init_dist("mpi", backend="gloo")
    assert [call.get("timeout") for call in recorded_init] == [
        timedelta(minutes=30),
        timedelta(minutes=30),
        timedelta(seconds=600),
        None,  # gloo's default is 30 minutes already
    ]
