"""Real signals to real ``tools/train.py`` processes: save, exit 75, resume bit for bit.

Every scenario trains LeNet on the Digits data (``preempt_digits_config.py``: the plain config
plus the signal plugin ``preempt_faults.py``, armed through ``--cfg-options``) for 2 epochs of
23 iterations. A real SIGTERM/SIGUSR1 arrives at one point (mid-epoch, at the first
iteration, during an evaluation, during a checkpoint save, from outside, twice, or under
torchrun to the agent or to one rank); the process must exit with code 75 after writing
``preempted_iter_<N>.pth`` (``latest.pth``, loads strictly with ``weights_only``), and
``--auto-resume`` must end with an uninterrupted run's checkpoints, tensor for tensor. The
scenarios run two at a time in the background (as in ``test_kill_resume.py``, whose helpers
this module reuses); the time from the signal to the exit is recorded and printed.
"""

from __future__ import annotations

import os
import re
import signal
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from helpers import free_port

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the sibling modules whose helpers are reused (importlib mode)
from test_dist_faults import DIST_OPTIONS, GLOO_ABORT, TOTAL_ITERS, _run  # noqa: E402
from test_kill_resume import (  # noqa: E402
    COMMON_OPTIONS,
    TIMEOUT,
    _env,
    _load_for_comparison,
    _same,
    assert_clean,
    inspect_work_dir,
)

REPO = HERE.parents[1]
CONFIG = HERE / "preempt_digits_config.py"
OPTIONS = COMMON_OPTIONS + ["runner.max_epochs=2", "checkpoint_config.interval=1"]
PREEMPTED_LINE = re.compile(
    r"Preempted by (SIG\w+) at epoch (\d+), iteration (\d+): saved (\S+) \(latest\.pth\); "
    r"to resume, run the same command and pass --auto-resume"
)
SIGNAL_SENT = re.compile(r"^SIGNAL (SIG\w+) ([\d.]+)$", re.MULTILINE)


# --------------------------------------------------------------------------- processes
def train(work_dir: Path, *options: str, flags=(), env=None, on_line=None) -> SimpleNamespace:
    """Run ``tools/train.py preempt_digits_config.py --auto-resume`` to its end.

    ``on_line(proc, line)`` sees every stderr line as it comes. Returns the exit code, stderr
    and the time the process ended (``time.time()``).
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    runs = len(list(work_dir.parent.glob(f"{work_dir.name}.*.err")))
    cmd = [sys.executable, "tools/train.py", str(CONFIG), "--work-dir", str(work_dir)]
    cmd += ["--auto-resume", *flags, "--cfg-options", *OPTIONS, *options]
    full_env = _env("")
    full_env.update(env or {})
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    lines = []
    try:
        for line in proc.stderr:
            lines.append(line)
            if on_line is not None:
                on_line(proc, line)
        returncode = proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    ended = time.time()
    stderr = "".join(lines)
    (work_dir.parent / f"{work_dir.name}.{runs}.err").write_text(stderr)
    return SimpleNamespace(returncode=returncode, stderr=stderr, ended=ended)


def armed(point: str, at: int = 0, **more) -> list[str]:
    options = [f"custom_hooks.0.point={point}", f"custom_hooks.0.at={at}"]
    return options + [f"custom_hooks.0.{k}={v}" for k, v in more.items()]


def seconds_to_exit(run: SimpleNamespace, sent: float | None = None) -> float:
    """From the signal (the plugin's SIGNAL line, or ``sent``) to the end of the process."""
    if sent is None:
        sent = float(SIGNAL_SENT.search(run.stderr).group(2))
    return run.ended - sent


def preempt_and_resume(root: Path, options: list[str], **kwargs) -> SimpleNamespace:
    work_dir = root / "work"
    preempted = train(work_dir, *options, **kwargs)
    after = inspect_work_dir(work_dir)
    resumed = train(work_dir)
    return SimpleNamespace(work_dir=work_dir, preempted=preempted, after=after, resumed=resumed)


def external_sigterm(root: Path) -> SimpleNamespace:
    """The test itself sends SIGTERM once the plugin says READY (it waits at iteration 30)."""
    sent = []

    def on_line(proc, line):
        if line.strip() == "READY":
            sent.append(time.time())
            proc.send_signal(signal.SIGTERM)

    run = preempt_and_resume(root, armed("wait", 30), on_line=on_line)
    run.sent = sent[0] if sent else None
    return run


def requeue(root: Path) -> SimpleNamespace:
    """During an evaluation, under a fake SLURM: a fake scontrol records its arguments."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    record = root / "scontrol.args"
    scontrol = bin_dir / "scontrol"
    scontrol.write_text(f'#!/bin/sh\necho "$@" >> "{record}"\n')
    scontrol.chmod(0o755)
    env = {"SLURM_JOB_ID": "1234", "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    run = preempt_and_resume(root, armed("val", 100), flags=["--requeue-on-preempt"], env=env)
    run.scontrol_args = record.read_text() if record.exists() else None
    return run


def twice(root: Path) -> SimpleNamespace:
    """Two SIGTERMs inside one iteration: the second kills at once; resume from epoch_1."""
    return preempt_and_resume(root, armed("after_train_iter", 30, times=2))


def torchrun(work_dir: Path, *options: str, timeout: float = 120) -> SimpleNamespace:
    args = ["-m", "torch.distributed.run", "--nproc_per_node=2", "--nnodes=1"]
    args += ["--max-restarts=0", "--master_addr=127.0.0.1", f"--master_port={free_port()}"]
    args += ["tools/train.py", CONFIG, "--launcher", "pytorch", "--work-dir", work_dir]
    args += ["--no-validate", "--auto-resume", "--cfg-options", *DIST_OPTIONS, *options]
    run = _run(args, timeout)
    run.ended = time.time()
    return run


def dist_preempt_and_resume(root: Path, options: list[str]) -> SimpleNamespace:
    work_dir = root / "work"
    preempted = torchrun(work_dir, *options)
    after = inspect_work_dir(work_dir)
    resumed = torchrun(work_dir)
    return SimpleNamespace(work_dir=work_dir, preempted=preempted, after=after, resumed=resumed)


def dist_reference(root: Path) -> Path:
    work_dir = root / "work"
    run = torchrun(work_dir)
    if run.returncode != 0 and GLOO_ABORT in run.out:  # see test_dist_faults.py
        work_dir = root / "again"
        run = torchrun(work_dir)
    assert run.returncode == 0, run.out[-6000:]
    return work_dir


def reference(root: Path) -> Path:
    work_dir = root / "work"
    run = train(work_dir)
    assert run.returncode == 0, run.stderr[-6000:]
    return work_dir


# id -> (reference, scenario function of its root dir)
SCENARIOS = {
    "mid-epoch": ("single", lambda r: preempt_and_resume(r, armed("after_train_iter", 30))),
    "first-iteration": (
        "single",
        lambda r: preempt_and_resume(r, armed("before_train_iter", 1, signal="SIGUSR1")),
    ),
    "during-eval-requeue": ("single", requeue),
    "during-save": (
        "single",
        lambda r: preempt_and_resume(r, armed("save", pattern="epoch_1.pth")),
    ),
    "external-sigterm": ("single", external_sigterm),
    "second-signal": ("single", twice),
    # Ranks exchange their flags every few iterations (about every 20 ms of training here)...
    "torchrun-agent": (
        "dist",
        lambda r: dist_preempt_and_resume(
            r,
            armed("after_train_iter", 30, rank=0, target="parent")
            + ["preemption.sync_interval=0.02"],
        ),
    ),
    # ... or after every iteration, so the stop is known to the iteration.
    "torchrun-rank1": (
        "dist",
        lambda r: dist_preempt_and_resume(
            r, armed("after_train_iter", 30, rank=1) + ["preemption.sync_interval=0"]
        ),
    ),
}
EXIT_TIMES: dict[str, float] = {}


@pytest.fixture(scope="module")
def scenarios(request, tmp_path_factory):
    """Start the selected tests' scenarios and their references, two at a time."""
    selected = []
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if getattr(item, "module", None) is request.module and spec and spec.id in SCENARIOS:
            selected.append(spec.id)
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="preempt-scenario")
    refs = {}
    for kind in dict.fromkeys(SCENARIOS[name][0] for name in selected):
        make = reference if kind == "single" else dist_reference
        refs[kind] = pool.submit(make, tmp_path_factory.mktemp(f"reference_{kind}"))
    futures = {n: pool.submit(SCENARIOS[n][1], tmp_path_factory.mktemp(n)) for n in selected}
    yield futures, refs
    pool.shutdown(wait=True, cancel_futures=True)
    if EXIT_TIMES:
        values = sorted(EXIT_TIMES.values())
        print(
            f"\nsignal to exit (s): {EXIT_TIMES}; median {statistics.median(values):.3f}, "
            f"max {values[-1]:.3f}"
        )


# ------------------------------------------------------------------------- assertions
def assert_same_as_uninterrupted(reference: Path, work_dir: Path) -> None:
    """Every checkpoint of the uninterrupted run is in ``work_dir`` and identical.

    The resumed run also keeps its preemption checkpoint, and its checkpoints record that file
    in the PreemptionHook's state; nothing else may differ.
    """
    ref_state, state = inspect_work_dir(reference), inspect_work_dir(work_dir)
    assert_clean(ref_state)
    assert_clean(state)
    extra = sorted(set(state.checkpoints) - set(ref_state.checkpoints))
    assert set(ref_state.checkpoints) <= set(state.checkpoints)
    assert all(n.startswith("preempted_iter_") for n in extra) and len(extra) <= 1, extra
    assert state.latest == ref_state.latest
    for name in ref_state.checkpoints:
        a = _load_for_comparison(reference / name)
        b = _load_for_comparison(work_dir / name)
        b["mmpar_state"]["hooks"].pop("PreemptionHook", None)
        for key in ("state_dict", "optimizer", "mmpar_state"):
            _same(a[key], b[key], f"{name}:{key}", str(reference), str(work_dir))
        for key in ("epoch", "iter", "hook_msgs"):
            _same(
                a["meta"][key], b["meta"][key], f"{name}:meta.{key}", str(reference), str(work_dir)
            )


def assert_preempted(run: SimpleNamespace, out: str, code: int, iters: int, sig: str) -> Path:
    """Exit ``code``; one Preempted line naming the checkpoint; it loads and is latest.pth."""
    after = run.after
    assert run.preempted.returncode == code, out[-6000:]
    lines = PREEMPTED_LINE.findall(out)
    assert len(lines) == 1, out[-6000:]
    name, _, iteration, path = lines[0]
    assert (name, int(iteration)) == (sig, iters)
    assert path == str(run.work_dir / f"preempted_iter_{iters}.pth")
    assert_clean(after)  # every *.pth loads with load_checkpoint(strict=True, weights_only)
    assert after.latest == f"preempted_iter_{iters}.pth"
    assert after.found in ("latest.pth", after.latest)  # what --auto-resume takes
    assert torch.load(path, weights_only=True)["meta"]["iter"] == iters
    return Path(path)


# ------------------------------------------------------------------------------ tests
SINGLE_CASES = [
    pytest.param(30, "SIGTERM", id="mid-epoch"),
    pytest.param(1, "SIGUSR1", id="first-iteration"),
    pytest.param(23, "SIGTERM", id="during-eval-requeue"),  # after epoch 1's evaluation
    pytest.param(23, "SIGTERM", id="during-save"),  # after epoch_1.pth and the evaluation
    pytest.param(30, "SIGTERM", id="external-sigterm"),
]


@pytest.mark.slow
@pytest.mark.parametrize("iters, sig", SINGLE_CASES)
def test_signal_saves_exits_75_and_resumes_exactly(request, scenarios, iters, sig):
    futures, refs = scenarios
    name = request.node.callspec.id
    run = futures[name].result()
    assert_preempted(run, run.preempted.stderr, 75, iters, sig)
    assert "Traceback" not in run.preempted.stderr
    assert f"resumed from {run.work_dir / 'latest.pth'}" in run.resumed.stderr or re.search(
        rf"resumed from \S*preempted_iter_{iters}\.pth", run.resumed.stderr
    ), run.resumed.stderr[-4000:]
    assert run.resumed.returncode == 0, run.resumed.stderr[-6000:]
    assert_same_as_uninterrupted(refs["single"].result(), run.work_dir)
    EXIT_TIMES[name] = seconds_to_exit(run.preempted, getattr(run, "sent", None))
    if name == "during-eval-requeue":
        assert run.scontrol_args == "requeue 1234\n"
        assert "requeueing SLURM job 1234" in run.preempted.stderr


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["second-signal"])
def test_second_signal_kills_at_once(scenarios, scenario):
    futures, refs = scenarios
    run = futures[scenario].result()
    assert run.preempted.returncode == -signal.SIGTERM, run.preempted.stderr[-4000:]
    assert "Preempted by" not in run.preempted.stderr
    assert_clean(run.after)  # nothing half-written: the kill came between two saves
    assert run.after.latest == "epoch_1.pth"
    assert run.resumed.returncode == 0, run.resumed.stderr[-6000:]
    assert_same_as_uninterrupted(refs["single"].result(), run.work_dir)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["torchrun-agent", "torchrun-rank1"])
def test_torchrun_ranks_stop_together_and_resume_exactly(scenarios, scenario):
    futures, refs = scenarios
    run = futures[scenario].result()
    out = run.preempted.out
    # Rank 1 got the signal after iteration 30; exchanging flags after every iteration, the
    # ranks share them one iteration later, so both stop after iteration 31. A signal to the
    # agent reaches the ranks when the agent has forwarded it, and the ranks exchange flags
    # every few iterations: they stop some iterations later, but together.
    stopped = re.findall(r"STOPPED rank=(\d) iter=(\d+)", out)
    iters = {int(n) for _, n in stopped}
    assert sorted(r for r, _ in stopped) == ["0", "1"] and len(iters) == 1, out[-6000:]
    iters = iters.pop()
    if scenario == "torchrun-rank1":
        assert iters == 31
    assert 31 <= iters < TOTAL_ITERS
    # torchrun's exit code: 1 in both cases (the agent re-raises the SIGTERM it forwarded as
    # SignalException; or it reports the workers' exit code 75 as a failure).
    assert_preempted(run, out, 1, iters, "SIGTERM")
    if scenario == "torchrun-agent":
        assert "Received 15 death signal, shutting down workers" in out
    else:
        assert re.search(r"exitcode\s*:\s*75", out), out[-6000:]
    assert run.resumed.returncode == 0, run.resumed.out[-6000:]
    assert re.search(rf"resumed from \S*(latest|preempted_iter_{iters})\.pth", run.resumed.out)
    ref = refs["dist"].result()
    final = f"iter_{TOTAL_ITERS}.pth"
    a = torch.load(ref / final, weights_only=True)
    b = torch.load(run.work_dir / final, weights_only=True)
    for key in ("state_dict", "optimizer"):
        _same(a[key], b[key], f"{final}:{key}", str(ref), str(run.work_dir))
    EXIT_TIMES[scenario] = seconds_to_exit(SimpleNamespace(stderr=out, ended=run.preempted.ended))
