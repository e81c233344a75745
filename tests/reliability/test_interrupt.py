"""Ctrl-C on a real ``tools/train.py``: the first stops cleanly (exit 130), a second at once.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group: the tests start the
training in a session of its own and signal its group (with one DataLoader worker, which must
not react), or, under torchrun (which starts the ranks in sessions of their own), the agent,
which forwards it to the ranks. They wait for the ``READY`` line of the signal plugin
(``preempt_faults.py``, ``point=wait``: training is at iteration 5 and blocks until the signal
comes), never for a time. The three runs go in parallel.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from helpers import REPO, free_port, tool_env

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "preempt_digits_config.py"
TIMEOUT = 180
AT = 5  # the iteration after which the plugin waits for Ctrl-C
OPTIONS = [
    "runner.max_epochs=1",
    "data.samples_per_gpu=64",
    "log_config.interval=100",
    "custom_hooks.0.point=wait",
    f"custom_hooks.0.at={AT}",
]
ANNOUNCED = "Ctrl-C: stopping after this iteration and saving a checkpoint"
STOPPED = re.compile(r"Interrupted by SIGINT at epoch 1, iteration (\d+): saved (\S+) \(latest")


def _ctrl_c(
    cmd: list, times: int, to_group: bool, env: dict | None = None, ranks: int = 1
) -> SimpleNamespace:
    """Run ``cmd``; once every rank printed READY send SIGINT, and (``times=2``) again once it
    was announced.

    A rank only counts signals from its READY on: signalling before the last rank is waiting
    would leave that rank blocked.
    """
    full_env = tool_env(HERE, **(env or {}))
    proc = subprocess.Popen(
        [str(c) for c in cmd],
        cwd=REPO,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )

    def interrupt():
        if to_group:
            os.killpg(proc.pid, signal.SIGINT)  # as a terminal does
        else:
            os.kill(proc.pid, signal.SIGINT)

    lines, sent, ready = [], 0, 0
    try:
        for line in proc.stdout:
            lines.append(line)
            ready += line.strip() == "READY"
            if sent == 0 and ready == ranks:
                interrupt()
                sent = 1
            elif sent == 1 and times == 2 and ANNOUNCED in line:
                interrupt()
                sent = 2
        returncode = proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return SimpleNamespace(returncode=returncode, out="".join(lines), sent=sent)


def single(work_dir: Path, times: int) -> SimpleNamespace:
    cmd = [sys.executable, "tools/train.py", CONFIG, "--work-dir", work_dir, "--no-validate"]
    # One loader worker for the first Ctrl-C (it must ignore it); none needed for the second.
    workers = 1 if times == 1 else 0
    cmd += [
        "--cfg-options",
        *OPTIONS,
        f"data.workers_per_gpu={workers}",
        f"custom_hooks.0.times={times}",
    ]
    return _ctrl_c(cmd, times, to_group=True)


def torchrun(work_dir: Path) -> SimpleNamespace:
    cmd = ["bash", "tools/dist_train.sh", CONFIG, "2", "--work-dir", work_dir, "--no-validate"]
    cmd += ["--cfg-options", *OPTIONS, "data.samples_per_gpu=32", "preemption.sync_interval=0"]
    env = {"PYTHON": sys.executable, "PORT": str(free_port())}
    return _ctrl_c(cmd, 1, to_group=False, env=env, ranks=2)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("ctrl_c")
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {
            "once": pool.submit(single, root / "once", 1),
            "twice": pool.submit(single, root / "twice", 2),
            "torchrun": pool.submit(torchrun, root / "torchrun"),
        }
        yield {name: f.result() for name, f in futures.items()}, root


def assert_saved_and_summarised(out: str, work_dir: Path, iters: int) -> None:
    assert out.count(ANNOUNCED) == 1, out[-6000:]  # rank 0 only; the loader worker ignores it
    (stopped,) = STOPPED.findall(out)
    assert stopped == (str(iters), str(work_dir / f"preempted_iter_{iters}.pth"))
    assert os.readlink(work_dir / "latest.pth") == f"preempted_iter_{iters}.pth"
    saved = torch.load(work_dir / f"preempted_iter_{iters}.pth", weights_only=True)
    assert saved["meta"]["iter"] == iters
    assert re.search(r"status:\s+interrupted \(Ctrl-C\)", out), out[-4000:]
    assert "KeyboardInterrupt" not in out, out[-6000:]


@pytest.mark.slow
def test_first_ctrl_c_saves_summarises_and_exits_130(runs):
    done, root = runs
    run = done["once"]
    assert run.returncode == 130, run.out[-6000:]
    # The signal came while iteration 5's hooks ran: that iteration is the last one.
    assert_saved_and_summarised(run.out, root / "once", AT)
    assert "Traceback" not in run.out, run.out[-6000:]


@pytest.mark.slow
def test_second_ctrl_c_exits_at_once_unsaved(runs):
    done, root = runs
    run = done["twice"]
    assert run.sent == 2, run.out[-6000:]
    assert run.returncode == -signal.SIGINT, run.out[-6000:]
    assert "Interrupted by" not in run.out and "Run summary" not in run.out
    assert not list((root / "twice").glob("preempted_iter_*.pth"))


@pytest.mark.slow
def test_ctrl_c_to_torchrun_stops_every_rank_cleanly(runs):
    done, root = runs
    run = done["torchrun"]
    out = run.out
    # Every rank stopped after the same iteration (flags exchanged after every iteration).
    stopped = re.findall(r"STOPPED rank=(\d) iter=(\d+)", out)
    assert sorted(r for r, _ in stopped) == ["0", "1"], out[-6000:]
    (iters,) = {int(n) for _, n in stopped}
    assert AT <= iters <= AT + 1
    assert "Received 2 death signal, shutting down workers" in out, out[-6000:]
    assert_saved_and_summarised(out, root / "torchrun", iters)
    # The ranks exit 130 without a traceback; the agent re-raises the signal it forwarded as
    # SignalException (its one traceback) and exits with code 1.
    assert out.count("Traceback") == 1 and "SignalException: Process" in out, out[-6000:]
    assert run.returncode == 1
