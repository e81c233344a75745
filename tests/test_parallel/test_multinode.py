"""Multi-node launching: torchrun with several agents, and SLURM jobs through ``srun``.

The launch scripts (``tools/dist_*.sh``, ``tools/slurm_*.sh``) are checked two ways:

* fast: with a recording stand-in for ``python``/``srun``, the exact command each script
  builds from its arguments and environment, and its usage errors;
* slow, real processes on this machine: two torchrun agents (``NNODES=2``, one process each,
  c10d or static rendezvous on 127.0.0.1) and a SLURM job step (``tools/slurm_train.sh`` run
  by ``_fake_srun.py``, with a fake ``scontrol`` that resolves the node list to 127.0.0.1)
  train configs/digits_lenet.py for one epoch to exactly the weights of one agent with two
  processes (``torch.equal``: the same data shards, the same gloo all-reduce order).

Not covered here: several real hosts, a real SLURM controller, NCCL (docs/distributed.md).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from helpers import free_port, import_path

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "tools"
CONFIG = "configs/digits_lenet.py"
FAKE_SRUN = Path(__file__).with_name("_fake_srun.py")
TRAIN_ARGS = ["--no-validate", "--cfg-options", "runner.max_epochs=1"]
TIMEOUT = 120  # seconds a launch may take before it counts as a hang
# Variables of the launchers that must not leak from the caller's environment into a test.
LAUNCH_VARS = (
    "NNODES",
    "NODE_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "PORT",
    "RDZV_ENDPOINT",
    "RDZV_ID",
    "LOCAL_ADDR",
    "GPUS",
    "GPUS_PER_NODE",
    "CPUS_PER_TASK",
    "TASKS_PER_NODE",
    "SRUN_ARGS",
    "PYTHON",
)


def _load_faults_module():
    # tests/reliability/test_dist_faults.py owns the subprocess environment and port helpers.
    path = REPO / "tests" / "reliability" / "test_dist_faults.py"
    return import_path(path, "mmpar_test_dist_faults")


faults = _load_faults_module()


def _env(**extra: str) -> dict:
    env = faults._env()
    for name in LAUNCH_VARS:
        env.pop(name, None)
    env["PYTHON"] = sys.executable
    env.update(extra)
    return env


def _launch(jobs: list[tuple[list, dict]], log_dir: Path) -> list[SimpleNamespace]:
    """Run the commands of ``jobs`` (argv, env) at the same time; wait for all of them.

    Output goes to files (no pipe can fill up and stall a rank). A job still running after
    :data:`TIMEOUT` fails the test; every process group is killed on the way out. When a rank
    died of torch's gloo exit race after its work (docs/distributed.md, "Known issue"), which
    is not what these tests are about, the jobs run once more, with a warning.
    """
    runs = _launch_once(jobs, log_dir)
    aborted = [r.out for r in runs if r.returncode != 0 and faults.GLOO_ABORT in r.out]
    if aborted:
        warnings.warn(f"a rank aborted at exit, run again:\n{aborted[0][-6000:]}", stacklevel=2)
        runs = _launch_once(jobs, log_dir)
    return runs


def _launch_once(jobs: list[tuple[list, dict]], log_dir: Path) -> list[SimpleNamespace]:
    procs, logs = [], []
    try:
        for i, (argv, env) in enumerate(jobs):
            logs.append(log_dir / f"launch_{i}.out")
            with open(logs[-1], "w") as out:
                procs.append(
                    subprocess.Popen(
                        [str(a) for a in argv],
                        cwd=REPO,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
        for proc, log in zip(procs, logs):
            try:
                proc.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                pytest.fail(
                    f"{jobs[0][0][:3]}... still running after {TIMEOUT} s\n{log.read_text()}"
                )
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return [
        SimpleNamespace(returncode=p.returncode, out=log.read_text()) for p, log in zip(procs, logs)
    ]


def _dist_train(nproc: int, work_dir: Path, *flags: str, **env: str) -> tuple[list, dict]:
    argv = ["bash", TOOLS / "dist_train.sh", CONFIG, nproc, "--work-dir", work_dir, *flags]
    return argv + TRAIN_ARGS, _env(**env)


def _written(work_dir: Path) -> set[str]:
    return {p.name for p in work_dir.iterdir()} if work_dir.exists() else set()


def _assert_trained_like(work_dir: Path, reference: dict) -> None:
    """``work_dir`` holds a finished 2-process run whose weights equal ``reference``'s."""
    state = faults._state_dict(work_dir / "latest.pth")
    assert state.keys() == reference.keys()
    for name, value in reference.items():
        assert torch.equal(state[name], value), name
    record = json.loads((work_dir / "last_run.json").read_text())
    assert record["world_size"] == 2


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    """Final weights of one agent with two processes (static rendezvous, the default)."""
    tmp = tmp_path_factory.mktemp("one_agent")
    (run,) = _launch([_dist_train(2, tmp / "work", PORT=str(free_port()))], tmp)
    assert run.returncode == 0, run.out[-4000:]
    return faults._state_dict(tmp / "work" / "latest.pth")


@pytest.mark.slow
def test_two_c10d_agents_train_like_one_agent_and_auto_resume_needs_a_shared_work_dir(
    tmp_path, reference
):
    # The static rendezvous (NODE_RANK, MASTER_ADDR, PORT) builds on the same script; its
    # command is checked in test_dist_scripts_build_the_torchrun_command.
    rdzv = dict(NNODES="2", RDZV_ENDPOINT=f"127.0.0.1:{free_port()}", RDZV_ID="mn-test")
    # Each agent gets a work dir of its own, as if on a node-local disk.
    dirs = [tmp_path / f"node{node}" for node in range(2)]
    runs = _launch([_dist_train(1, work_dir, **rdzv) for work_dir in dirs], tmp_path)

    for run in runs:
        assert run.returncode == 0, run.out[-4000:]
    written = [_written(work_dir) for work_dir in dirs]
    # c10d lets the agents choose their node ranks: either may host rank 0.
    writer = max(range(2), key=lambda n: len(written[n]))
    assert written[1 - writer] == set(), "a rank other than 0 wrote into its work dir"
    assert {"latest.pth", "last_run.json", "digits_lenet.py"} <= written[writer]
    (log,) = [n for n in written[writer] if n.endswith(".log")]
    warning = f'work_dir "{dirs[writer]}" is not shared by all ranks: rank(s) 1 (host '
    assert warning in (dirs[writer] / log).read_text()
    _assert_trained_like(dirs[writer], reference)

    # Auto-resume from node-local work dirs would let rank 1 start afresh: refused on all ranks.
    before = {p: p.stat().st_mtime_ns for p in dirs[writer].iterdir()}
    rdzv["RDZV_ENDPOINT"] = f"127.0.0.1:{free_port()}"
    runs = _launch([_dist_train(1, d, "--auto-resume", **rdzv) for d in dirs], tmp_path)

    for run in runs:  # the worker exits with 2 (bad input), torchrun then with 1
        assert run.returncode == 1 and re.search(r"exitcode\s*: 2\b", run.out), run.out[-4000:]
        assert f"error: UsageError: {warning}" in run.out and "Auto-resume needs it" in run.out
    assert {p: p.stat().st_mtime_ns for p in dirs[writer].iterdir()} == before
    assert _written(dirs[1 - writer]) == set()


def _fake_slurm_bin(tmp_path: Path) -> Path:
    """A folder with ``srun`` (``_fake_srun.py``) and an ``scontrol`` logging its calls."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {
        "srun": f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_SRUN}" "$@"\n',
        "scontrol": (
            "#!/bin/sh\n"
            f'echo "$*" >> "{tmp_path / "scontrol.log"}"\n'
            # real scontrol takes both spellings; mmcv (and mmpar) ask "hostname"
            'case "$1 $2" in "show hostname"|"show hostnames") echo 127.0.0.1;; esac\n'
        ),
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


@pytest.mark.slow
def test_slurm_scripts_train_and_test_through_srun(tmp_path, reference):
    bin_dir = _fake_slurm_bin(tmp_path)
    record = tmp_path / "srun.json"
    work = tmp_path / "work"
    slurm = dict(
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        MASTER_PORT=str(free_port()),
        FAKE_SRUN_RECORD=str(record),
        GPUS="2",
        GPUS_PER_NODE="1",  # one task per "node": two nodes, SLURM_LOCALID 0 on each
        CPUS_PER_TASK="1",
        SRUN_ARGS="--time=5 --export=ALL",
    )
    train = ["bash", TOOLS / "slurm_train.sh", "debug", "mmpar-digits", CONFIG, work, *TRAIN_ARGS]
    (run,) = _launch([(train, _env(**slurm))], tmp_path)

    assert run.returncode == 0, run.out[-4000:]
    srun = json.loads(record.read_text())
    assert srun["options"] == {
        "partition": "debug",
        "job-name": "mmpar-digits",
        "gres": "gpu:1",
        "ntasks": "2",
        "ntasks-per-node": "1",
        "cpus-per-task": "1",
        "kill-on-bad-exit": "1",
    }
    assert srun["extra"] == ["--time=5", "--export=ALL"]
    assert srun["command"] == [
        sys.executable,
        "-u",
        f"{TOOLS}/train.py",
        CONFIG,
        f"--work-dir={work}",
        "--launcher=slurm",
        *TRAIN_ARGS,
    ]
    # Both ranks found the master through scontrol (MASTER_ADDR was not set).
    assert (tmp_path / "scontrol.log").read_text().splitlines() == [
        "show hostname fakenode[0-1]"
    ] * 2
    _assert_trained_like(work, reference)
    (log,) = work.glob("*.log")
    assert "not shared by all ranks" not in log.read_text()  # one work dir for both ranks

    # Evaluate the checkpoint on a CPU cluster: GPUS_PER_NODE=0 asks for no GPU.
    results = tmp_path / "results.json"
    test = ["bash", TOOLS / "slurm_test.sh", "debug", "mmpar-eval", CONFIG, work / "latest.pth"]
    test += ["--out", results, "--metrics", "accuracy", "--no-progress"]
    (run,) = _launch([(test, _env(**dict(slurm, GPUS_PER_NODE="0")))], tmp_path)

    assert run.returncode == 0, run.out[-4000:]
    srun = json.loads(record.read_text())
    assert "gres" not in srun["options"] and "ntasks-per-node" not in srun["options"]
    assert srun["options"]["ntasks"] == "2"
    assert srun["command"][2:6] == [
        f"{TOOLS}/test.py",
        CONFIG,
        str(work / "latest.pth"),
        "--launcher=slurm",
    ]
    out = json.loads(results.read_text())
    assert len(out["pred_label"]) == 359  # the whole val split, gathered from both ranks
    assert set(out["metrics"]) == {"accuracy_top-1", "accuracy_top-5"}


def _echo_bin(tmp_path: Path, name: str) -> Path:
    """An executable ``name`` that prints its arguments, one per line."""
    path = tmp_path / name
    path.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    path.chmod(0o755)
    return path


def _script(tmp_path: Path, script: str, *args, **env: str) -> subprocess.CompletedProcess:
    """Run ``tools/<script>`` with ``python`` and ``srun`` replaced by :func:`_echo_bin`."""
    environ = _env(PYTHON=str(_echo_bin(tmp_path, "python")), **env)
    _echo_bin(tmp_path, "srun")
    environ["PATH"] = f"{tmp_path}{os.pathsep}{environ['PATH']}"
    argv = ["bash", str(TOOLS / script), *map(str, args)]
    return subprocess.run(argv, env=environ, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize(
    "env, rendezvous",
    [
        ({}, ["--nnodes=1", "--node_rank=0", "--master_addr=127.0.0.1", "--master_port=29500"]),
        (
            dict(NNODES="2", NODE_RANK="1", MASTER_ADDR="10.0.0.1", MASTER_PORT="2222"),
            ["--nnodes=2", "--node_rank=1", "--master_addr=10.0.0.1", "--master_port=2222"],
        ),
        (
            dict(PORT="3333", MASTER_PORT="2222"),  # PORT wins
            ["--nnodes=1", "--node_rank=0", "--master_addr=127.0.0.1", "--master_port=3333"],
        ),
        (
            dict(NNODES="1:4", RDZV_ENDPOINT="head:29400", NODE_RANK="3", MASTER_ADDR="x"),
            ["--nnodes=1:4", "--rdzv_backend=c10d", "--rdzv_endpoint=head:29400"]
            + ["--rdzv_id=mmpar"],
        ),
        (
            dict(NNODES="2", RDZV_ENDPOINT="head:29400", RDZV_ID="job7", LOCAL_ADDR="10.1.2.3"),
            ["--nnodes=2", "--rdzv_backend=c10d", "--rdzv_endpoint=head:29400", "--rdzv_id=job7"]
            + ["--local_addr=10.1.2.3"],
        ),
    ],
)
def test_dist_scripts_build_the_torchrun_command(tmp_path, env, rendezvous):
    torchrun = ["-m", "torch.distributed.run", *rendezvous, "--nproc_per_node=2"]
    train = _script(tmp_path, "dist_train.sh", "cfg.py", 2, "--seed", "1", **env)
    assert train.returncode == 0, train.stderr
    # One node: the work-dir lock is checked first (python -m mmpar.cli.work_dir_check).
    one_node = env.get("NNODES", "1") == "1" and "RDZV_ENDPOINT" not in env
    check = ["-m", "mmpar.cli.work_dir_check", "cfg.py", "--seed", "1"] if one_node else []
    assert train.stdout.splitlines() == check + torchrun + [
        f"{TOOLS}/train.py",
        "cfg.py",
        "--launcher",
        "pytorch",
        "--seed",
        "1",
    ]
    test = _script(tmp_path, "dist_test.sh", "cfg.py", "a b.pth", 2, "--out", "r.json", **env)
    assert test.returncode == 0, test.stderr
    tail = ["--launcher", "pytorch", "--out", "r.json"]
    assert test.stdout.splitlines() == torchrun + [f"{TOOLS}/test.py", "cfg.py", "a b.pth", *tail]


@pytest.mark.parametrize(
    "env, resources",
    [
        ({}, ["--gres=gpu:8", "--ntasks=8", "--ntasks-per-node=8", "--cpus-per-task=5"]),
        (
            dict(GPUS="16", GPUS_PER_NODE="4", CPUS_PER_TASK="2", SRUN_ARGS=" --time=1  -x n3 "),
            ["--gres=gpu:4", "--ntasks=16", "--ntasks-per-node=4", "--cpus-per-task=2"],
        ),
        (dict(GPUS="6", GPUS_PER_NODE="0"), ["--ntasks=6", "--cpus-per-task=5"]),
        (
            dict(GPUS="6", GPUS_PER_NODE="0", TASKS_PER_NODE="3"),
            ["--ntasks=6", "--ntasks-per-node=3", "--cpus-per-task=5"],
        ),
    ],
)
def test_slurm_scripts_build_the_srun_command(tmp_path, env, resources):
    srun = ["-p", "part", "--job-name=job", *resources, "--kill-on-bad-exit=1"]
    srun += ["--time=1", "-x", "n3"] if "SRUN_ARGS" in env else []
    train = _script(tmp_path, "slurm_train.sh", "part", "job", "cfg.py", "w d", "--seed", 1, **env)
    assert train.returncode == 0, train.stderr
    python = [str(tmp_path / "python"), "-u"]
    assert train.stdout.splitlines() == srun + python + [
        f"{TOOLS}/train.py",
        "cfg.py",
        "--work-dir=w d",
        "--launcher=slurm",
        "--seed",
        "1",
    ]
    test = _script(tmp_path, "slurm_test.sh", "part", "job", "cfg.py", "c.pth", "--out", "r", **env)
    assert test.returncode == 0, test.stderr
    tail = ["c.pth", "--launcher=slurm", "--out", "r"]
    assert test.stdout.splitlines() == srun + python + [f"{TOOLS}/test.py", "cfg.py", *tail]


@pytest.mark.parametrize(
    "script, args",
    [
        ("dist_train.sh", ["cfg.py"]),
        ("dist_test.sh", ["cfg.py", "c.pth"]),
        ("slurm_train.sh", ["part", "job", "cfg.py"]),
        ("slurm_test.sh", ["part", "job", "cfg.py"]),
    ],
)
def test_scripts_without_their_arguments_print_usage(tmp_path, script, args):
    run = _script(tmp_path, script, *args)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith(f"usage: {TOOLS / script} ")


@pytest.mark.parametrize("name", ["GPUS", "GPUS_PER_NODE", "CPUS_PER_TASK", "TASKS_PER_NODE"])
def test_slurm_scripts_refuse_a_count_that_is_not_a_number(tmp_path, name):
    run = _script(tmp_path, "slurm_train.sh", "part", "job", "cfg.py", "w", **{name: "8x"})
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == f"{name} must be a whole number, got '8x'\n"
