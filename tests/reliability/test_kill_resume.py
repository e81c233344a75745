"""SIGKILL ``tools/train.py`` at many points, resume with ``--auto-resume``, compare bit for bit.

Every scenario trains LeNet on the real Digits data (``configs/digits_lenet.py`` through
``kill_digits_config.py``, which adds the fault-injection plugin ``kill_faults.py``) as real
processes: one is SIGKILLed by the plugin at a chosen point (or a checkpoint write fails), the
work dir is inspected (every ``*.pth`` loads, temporary files are never named ``*.pth``,
auto-resume picks the expected checkpoint), then ``tools/train.py --auto-resume`` finishes the
run and its final checkpoint is compared with the one of an uninterrupted run of the same
config (plugin disarmed): weights, optimizer state, RNG, sampler and hook states must be
identical, and the same checkpoints must be left on disk holding the same weights.

Each scenario starts a few processes, and most of their time is Python and torch starting
up, so the scenarios run two at a time in the background (the ``kill_scenarios`` fixture)
while the tests, in order, wait for theirs and check what it recorded.
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Sequence

import pytest
import torch
from helpers import tool_env

from mmpar.cli import LOCK_FILE_NAME
from mmpar.models import build_classifier
from mmpar.runner import load_checkpoint
from mmpar.runner.checkpointing.run_identity import RUN_RECORD, choose_resume_checkpoint
from mmpar.utils import Config

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CONFIG = HERE / "kill_digits_config.py"
TIMEOUT = 240  # seconds for one training process

# 1,438 training images in batches of 64: 23 iterations per epoch.
COMMON_OPTIONS = [
    "optimizer.lr=0.2",  # the schedule's 0.05 would not improve the accuracy in 3 epochs
    "data.samples_per_gpu=64",
    "log_config.interval=10",
]
# 3 epochs; checkpoint, evaluate and keep the best every epoch; keep the newest 2 checkpoints.
EPOCH_OPTIONS = COMMON_OPTIONS + ["runner.max_epochs=3", "checkpoint_config.interval=1"]
# 60 iterations (the loader restarts after 23 and 46), a checkpoint every 20, evaluation (and
# best checkpoint) at 30 and 60.
ITER_OPTIONS = COMMON_OPTIONS + [
    "runner.type=IterBasedRunner",
    "runner.max_epochs=None",
    "runner.max_iters=60",
    "checkpoint_config.interval=20",
    "evaluation.interval=30",
]
OPTIONS = {"epoch": EPOCH_OPTIONS, "iter": ITER_OPTIONS}
CHECKPOINT_KEYS = {"meta", "state_dict", "optimizer", "mmpar_state"}
TEMP_FILE = re.compile(r"\.[\w.-]+\.pth\.tmp\.\d+")  # checkpoint.py's temporary names
BEST_1 = "best_accuracy_top-1_epoch_1.pth"
BEST_2 = "best_accuracy_top-1_epoch_2.pth"
BEST_30 = "best_accuracy_top-1_iter_30.pth"


# --------------------------------------------------------------------------- processes
def _env(fault: str) -> dict:
    return tool_env(HERE, MMPAR_TEST_FAULT=fault)  # the fault plugins import from here


def _limit_file_size(limit: int) -> list[str]:
    """A command prefix that sets RLIMIT_FSIZE, ignores SIGXFSZ and execs the rest.

    This does what ``preexec_fn`` would, without its risk of deadlocking a parent that runs
    threads (the scenarios run in a thread pool).
    """
    code = (
        "import os, resource, signal, sys; "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "  # fail the write, do not die
        "os.execv(sys.executable, [sys.executable] + sys.argv[1:])"
    )
    return [sys.executable, "-c", code]


def run_process(cmd: list[str], log_stem: Path, fault: str = "") -> SimpleNamespace:
    """Run ``cmd`` from the repository root to its end (or its death).

    Output goes to ``<log_stem>.out``/``.err``, not to pipes: after a SIGKILL, orphaned loader
    workers may hold pipes open until they notice. Returns ``returncode`` and ``stderr``.
    """
    out_path, err_path = Path(f"{log_stem}.out"), Path(f"{log_stem}.err")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, cwd=REPO, env=_env(fault), stdout=out, stderr=err)
        try:
            returncode = proc.wait(timeout=TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return SimpleNamespace(returncode=returncode, stderr=err_path.read_text())


def train(
    work_dir: Path, runner: str, fault: str = "", workers: int = 0, prefix: Sequence[str] = ()
) -> SimpleNamespace:
    """``python tools/train.py kill_digits_config.py --work-dir W --auto-resume --cfg-options``."""
    work_dir.mkdir(parents=True, exist_ok=True)
    runs = len(list(work_dir.parent.glob(f"{work_dir.name}.*.err")))
    cmd = [*(prefix or [sys.executable]), "tools/train.py", str(CONFIG)]
    cmd += ["--work-dir", str(work_dir), "--auto-resume", "--cfg-options", *OPTIONS[runner]]
    cmd.append(f"data.workers_per_gpu={workers}")
    return run_process(cmd, work_dir.parent / f"{work_dir.name}.{runs}", fault)


# ------------------------------------------------------------------------- inspection
def _model() -> torch.nn.Module:
    return build_classifier(Config.fromfile(str(REPO / "configs" / "digits_lenet.py")).model)


def inspect_work_dir(work_dir: Path) -> SimpleNamespace:
    """What a crash left: checkpoint names, those that do not load, temporaries, latest.pth.

    ``found`` is the checkpoint auto-resume picks, ``run_ids`` the run of each checkpoint,
    ``run`` the run ``last_run.json`` names.
    """
    names = sorted(os.listdir(work_dir))
    checkpoints = [n for n in names if n.endswith(".pth")]
    model, unloadable, run_ids = _model(), {}, {}
    for name in checkpoints:
        try:
            ckpt = load_checkpoint(model, str(work_dir / name), strict=True)  # weights_only
            if not CHECKPOINT_KEYS <= set(ckpt):
                unloadable[name] = f"keys {sorted(ckpt)}"
            run_ids[name] = ckpt["meta"].get("run_id")
        except Exception as err:  # recorded; the test reports it
            unloadable[name] = repr(err)
    latest = work_dir / "latest.pth"
    found = choose_resume_checkpoint(str(work_dir))
    record = work_dir / RUN_RECORD
    return SimpleNamespace(
        run_ids=run_ids,
        run=json.loads(record.read_text())["run_id"] if record.exists() else None,
        checkpoints=checkpoints,
        best=[n for n in checkpoints if n.startswith("best_")],
        unloadable=unloadable,
        # Hidden files but the work dir's lock file (tools/train.py's, not a temporary).
        temporaries=[n for n in names if n.startswith(".") and n != LOCK_FILE_NAME],
        latest=os.readlink(latest) if latest.is_symlink() else None,
        found=os.path.basename(found) if found else None,
    )


def assert_clean(state: SimpleNamespace, temporaries: int = 0) -> None:
    """Every checkpoint loads; only ``temporaries`` hidden temporary files, never ``*.pth``."""
    assert state.unloadable == {}
    assert len(state.temporaries) == temporaries, state.temporaries
    assert all(TEMP_FILE.fullmatch(n) for n in state.temporaries), state.temporaries


def _same(a, b, where: str, a_dir: str, b_dir: str) -> None:
    """Assert equal nested checkpoint data: tensors bit for bit, paths relative to the dirs."""
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype, where
        assert torch.equal(a, b), f"{where} differs"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{where}: {list(a)} != {list(b)}"
        for key in a:
            _same(a[key], b[key], f"{where}.{key}", a_dir, b_dir)
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]", a_dir, b_dir)
    elif isinstance(a, str):
        assert a.replace(a_dir, "<work>") == b.replace(b_dir, "<work>"), where
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _load_for_comparison(path: Path) -> dict:
    """Load a checkpoint; its rotation list keeps only the checkpoints still on disk.

    The checkpoint hook records that list before it saves and deletes old files after, so a
    run killed in between lists a file the uninterrupted run had already forgotten.
    """
    ckpt = torch.load(path, weights_only=True)
    rotation = ckpt["mmpar_state"]["hooks"].get("CheckpointHook", {})
    if "written" in rotation:
        rotation["written"] = [n for n in rotation["written"] if (path.parent / n).exists()]
    return ckpt


def assert_same_training(reference: Path, work_dir: Path) -> None:
    """Both runs ended in the same state and left the same, identical checkpoints.

    Every checkpoint (the final one is ``latest.pth``) must match in weights, optimizer state,
    position, RNG, sampler and hook states and ``hook_msgs`` (paths relative to the dirs).
    """
    ref_state, state = inspect_work_dir(reference), inspect_work_dir(work_dir)
    assert_clean(ref_state)
    assert_clean(state)  # a later save of the same name removed a killed save's temporary
    assert state.checkpoints == ref_state.checkpoints  # rotation and best survived the crash
    assert state.latest == ref_state.latest
    ref_dir, run_dir = str(reference), str(work_dir)
    for name in state.checkpoints:
        a = _load_for_comparison(reference / name)
        b = _load_for_comparison(work_dir / name)
        for key in ("state_dict", "optimizer", "mmpar_state"):
            _same(a[key], b[key], f"{name}:{key}", ref_dir, run_dir)
        for key in ("epoch", "iter", "hook_msgs"):
            _same(a["meta"][key], b["meta"][key], f"{name}:meta.{key}", ref_dir, run_dir)


def assert_killed_by(result: SimpleNamespace, fault: str) -> None:
    """The process was SIGKILLed by the armed fault (not by something else)."""
    assert result.returncode == -signal.SIGKILL, (
        f"expected SIGKILL, got exit code {result.returncode}\n{result.stderr[-6000:]}"
    )
    assert f"FAULT {fault}" in result.stderr, "the process died, but not from the fault"


def assert_ran(result: SimpleNamespace) -> None:
    assert result.returncode == 0, result.stderr[-6000:]


def assert_resumed(result: SimpleNamespace, work_dir: Path, before: SimpleNamespace) -> None:
    """The run finished, resuming from ``before.found`` (from scratch when None).

    A resumed run continues the run of its checkpoint: every checkpoint in the work dir then
    carries that run's id, and ``last_run.json`` names it. A fresh start is a new run.
    """
    assert_ran(result)
    after = inspect_work_dir(work_dir)
    if before.found is None:
        assert "auto-resume: no checkpoint" in result.stderr
        assert after.run != before.run
    else:
        assert f"resumed from {work_dir / before.found}" in result.stderr
        assert after.run == before.run_ids[before.found]
    assert set(after.run_ids.values()) == {after.run}, after.run_ids


def assert_failed_save(result: SimpleNamespace, path: Path, reason: str) -> None:
    """The run stopped by itself with one line naming the checkpoint it could not write.

    A full disk is neither a bug (no traceback) nor bad input (exit code 1, not 2): stderr
    ends with ``error: CheckpointSaveError: could not save checkpoint "<path>": <reason>...``.
    """
    tail = result.stderr[-6000:]
    assert result.returncode == 1, f"exit code {result.returncode}\n{tail}"
    assert "Traceback" not in result.stderr, tail
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and result.stderr.rstrip().endswith(errors[0]), tail
    prefix = f'error: CheckpointSaveError: could not save checkpoint "{path}": '
    assert errors[0].startswith(prefix) and reason in errors[0], errors[0]


# -------------------------------------------------------------------------- scenarios
def kill_and_resume(root: Path, runner: str, fault: str, workers: int) -> SimpleNamespace:
    """Train until the fault kills the run, inspect the work dir, resume to the end."""
    work_dir = root / "work"
    killed = train(work_dir, runner, fault, workers)
    after_kill = inspect_work_dir(work_dir)
    resumed = train(work_dir, runner, workers=workers)
    return SimpleNamespace(work_dir=work_dir, killed=killed, after_kill=after_kill, resumed=resumed)


def file_size_limit(root: Path) -> SimpleNamespace:
    """Kill at the start of the last epoch, then resume under RLIMIT_FSIZE."""
    work_dir, fault = root / "work", "hook:before_train_epoch:epoch=3"
    killed = train(work_dir, "epoch", fault)
    after_kill = inspect_work_dir(work_dir)
    # Half a checkpoint: the logs stay far below it, the next checkpoint cannot be written.
    limit = max((work_dir / n).stat().st_size for n in after_kill.checkpoints) // 2
    failed = train(work_dir, "epoch", prefix=_limit_file_size(limit))
    return SimpleNamespace(
        work_dir=work_dir,
        fault=fault,
        killed=killed,
        failed=failed,
        after_failure=inspect_work_dir(work_dir),
    )


def failing_save(root: Path, target: str) -> SimpleNamespace:
    """torch.save of checkpoint ``target`` (a glob) fails half-way; resume to the end."""
    work_dir = root / "work"
    failed = train(work_dir, "epoch", f"save:{target}:raise")
    after_failure = inspect_work_dir(work_dir)
    resumed = train(work_dir, "epoch")
    return SimpleNamespace(
        work_dir=work_dir, failed=failed, after_failure=after_failure, resumed=resumed
    )


def plain_config(root: Path) -> SimpleNamespace:
    """configs/digits_lenet.py itself (no plugin), same options as the references."""
    work_dir = root / "work"
    cmd = [sys.executable, "tools/train.py", "configs/digits_lenet.py", "--work-dir"]
    cmd += [str(work_dir), "--cfg-options", *EPOCH_OPTIONS, "data.workers_per_gpu=0"]
    root.mkdir(parents=True, exist_ok=True)
    return SimpleNamespace(work_dir=work_dir, result=run_process(cmd, root / "plain"))


def reference(root: Path, runner: str) -> Path:
    """An uninterrupted run (plugin disarmed); returns its work dir."""
    work_dir = root / "work"
    assert_ran(train(work_dir, runner))
    return work_dir


# id, runner, fault, loader workers, the checkpoints auto-resume may pick (a periodic and a
# best checkpoint of the same iteration tie; the newer file wins), what else holds after the
# kill: ``temp`` (hidden temporaries of a killed save), ``latest`` (latest.pth's target),
# ``best`` (the best checkpoints on disk).
KILL_POINTS = [
    ("first-iteration", "epoch", "hook:before_train_iter:iter=1", 0, [None], {}),
    (
        "mid-epoch",
        "epoch",
        "hook:after_train_iter:iter=35",
        0,
        ["epoch_1.pth", BEST_1],
        {"latest": "epoch_1.pth", "best": [BEST_1]},
    ),
    (
        "after-checkpoint-before-eval",  # the resumed run catches up on the evaluation
        "epoch",
        "hook:after_train_epoch:epoch=1",
        0,
        ["epoch_1.pth"],
        {"latest": "epoch_1.pth", "best": []},
    ),
    ("during-eval-2-workers", "epoch", "val:100", 2, ["epoch_1.pth"], {"best": []}),
    (
        "during-checkpoint-save",
        "epoch",
        "save:epoch_2.pth:kill",
        0,
        ["epoch_1.pth", BEST_1],
        {"temp": 1, "latest": "epoch_1.pth", "best": [BEST_1]},
    ),
    (
        "during-best-save",
        "epoch",
        "save:best_*_epoch_2.pth:kill",
        0,
        ["epoch_2.pth"],
        {"temp": 1, "latest": "epoch_2.pth", "best": [BEST_1]},
    ),
    (
        "before-latest-link",  # epoch_2.pth is complete, latest.pth still names epoch_1.pth
        "epoch",
        "link:epoch_2.pth",
        0,
        ["epoch_2.pth"],
        {"latest": "epoch_1.pth", "best": [BEST_1]},
    ),
    (
        "after-epoch-boundary",
        "epoch",
        "hook:before_train_epoch:epoch=3",
        0,
        ["epoch_2.pth", BEST_2],
        {"latest": "epoch_2.pth", "best": [BEST_2]},
    ),
    (
        "last-epoch-2-workers",
        "epoch",
        "hook:after_train_iter:iter=60",
        2,
        ["epoch_2.pth", BEST_2],
        {"latest": "epoch_2.pth", "best": [BEST_2]},
    ),
    (
        "after-last-checkpoint",  # only the last evaluation is left to do
        "epoch",
        "hook:after_train_epoch:epoch=3",
        0,
        ["epoch_3.pth"],
        {"latest": "epoch_3.pth", "best": [BEST_2]},
    ),
    (
        "iter-after-loader-restart",
        "iter",
        "hook:after_train_iter:iter=27",
        0,
        ["iter_20.pth"],
        {"latest": "iter_20.pth", "best": []},
    ),
    ("iter-during-eval", "iter", "val:200", 0, ["iter_20.pth"], {"best": []}),
    (
        "iter-during-checkpoint-save",
        "iter",
        "save:iter_40.pth:kill",
        0,
        [BEST_30],
        {"temp": 1, "latest": "iter_20.pth", "best": [BEST_30]},
    ),
]
KILL_RUNNERS = {case[0]: case[1] for case in KILL_POINTS}
# name -> checkpoint glob whose save fails
FAILING_SAVES = {
    "failing-save-ckpt": "epoch_2.pth",
    "failing-save-best": "best_*_epoch_2.pth",
}


def _scenarios() -> dict[str, tuple[str, Callable[[Path], SimpleNamespace]]]:
    """Scenario name -> (reference runner it is compared with, function of its root dir)."""
    out: dict[str, tuple[str, Callable[[Path], SimpleNamespace]]] = {}
    for name, runner, fault, workers, *_ in KILL_POINTS:
        out[name] = (
            runner,
            lambda root, r=runner, f=fault, w=workers: kill_and_resume(root, r, f, w),
        )
    out["file-size-limit"] = ("epoch", file_size_limit)
    for name, target in FAILING_SAVES.items():
        out[name] = ("epoch", lambda root, t=target: failing_save(root, t))
    out["plugin-inert"] = ("epoch", plain_config)
    return out


@pytest.fixture(scope="module")
def kill_scenarios(request, tmp_path_factory):
    """Start the scenarios of the selected tests (and their references), two at a time.

    Returns ``(scenarios, references)``: dicts of futures by scenario name / runner type.
    Every test of this module is parametrized; its parameter id names its scenario.
    """
    scenarios = _scenarios()
    selected = []
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if getattr(item, "module", None) is request.module and spec and spec.id in scenarios:
            selected.append(spec.id)
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kill-scenario")
    references: dict[str, Future] = {}
    for runner in dict.fromkeys(scenarios[name][0] for name in selected):
        root = tmp_path_factory.mktemp(f"reference_{runner}")
        references[runner] = pool.submit(reference, root, runner)
    futures = {
        name: pool.submit(scenarios[name][1], tmp_path_factory.mktemp(name)) for name in selected
    }
    yield futures, references
    pool.shutdown(wait=True, cancel_futures=True)


# ------------------------------------------------------------------------------ tests
@pytest.mark.slow
@pytest.mark.parametrize(
    "runner, fault, workers, may_resume_from, expect",
    [pytest.param(*case[1:], id=case[0]) for case in KILL_POINTS],
)
def test_sigkill_then_auto_resume_is_bit_exact(
    request, kill_scenarios, runner, fault, workers, may_resume_from, expect
):
    scenarios, references = kill_scenarios
    run = scenarios[request.node.callspec.id].result()
    assert_killed_by(run.killed, fault)

    after = run.after_kill
    assert_clean(after, temporaries=expect.get("temp", 0))
    assert after.found in may_resume_from
    if "latest" in expect:
        assert after.latest == expect["latest"]
    if "best" in expect:  # a best checkpoint is replaced only once its successor is on disk
        assert after.best == expect["best"]

    assert_resumed(run.resumed, run.work_dir, after)
    assert_same_training(references[runner].result(), run.work_dir)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["file-size-limit"])
def test_checkpoint_write_over_file_size_limit(kill_scenarios, scenario):
    """RLIMIT_FSIZE: the resumed run cannot write its next checkpoint (EFBIG); nothing is lost."""
    scenarios, references = kill_scenarios
    run = scenarios[scenario].result()
    assert_killed_by(run.killed, run.fault)
    assert_failed_save(run.failed, run.work_dir / "epoch_3.pth", "File too large")

    after = run.after_failure
    assert_clean(after)  # the previous checkpoints load; the partial file was removed
    assert after.checkpoints == [BEST_2, "epoch_1.pth", "epoch_2.pth", "latest.pth"]
    assert after.latest == "epoch_2.pth" and after.found in ("epoch_2.pth", BEST_2)


@pytest.mark.slow
@pytest.mark.parametrize(
    "failed, latest, best, may_resume_from",
    [
        pytest.param(
            "epoch_2.pth", "epoch_1.pth", BEST_1, ["epoch_1.pth", BEST_1], id="failing-save-ckpt"
        ),
        pytest.param(BEST_2, "epoch_2.pth", BEST_1, ["epoch_2.pth"], id="failing-save-best"),
    ],
)
def test_checkpoint_write_raises(request, kill_scenarios, failed, latest, best, may_resume_from):
    """torch.save fails half-way (ENOSPC): clear error, previous checkpoints intact, resumable."""
    scenarios, references = kill_scenarios
    run = scenarios[request.node.callspec.id].result()
    assert_failed_save(run.failed, run.work_dir / failed, "No space left on device")

    after = run.after_failure
    assert_clean(after)  # the previous checkpoints load; the partial file was removed
    assert failed not in after.checkpoints
    assert after.latest == latest and after.best == [best]
    assert after.found in may_resume_from

    # ... and training resumes to the uninterrupted result (a failed best save included: the
    # resumed run evaluates epoch 2 again and writes the best checkpoint it could not write)
    assert_resumed(run.resumed, run.work_dir, after)
    assert_same_training(references["epoch"].result(), run.work_dir)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["plugin-inert"])
def test_fault_plugin_is_inert(kill_scenarios, scenario):
    """Disarmed, the plugin changes nothing: configs/digits_lenet.py trains the same way."""
    scenarios, references = kill_scenarios
    run = scenarios[scenario].result()
    assert_ran(run.result)
    assert_same_training(references["epoch"].result(), run.work_dir)


# ------------------------------------------------------------------ in-process, fast
def test_failed_write_raises_checkpoint_save_error(tmp_path, monkeypatch):
    """The error names the file and the OS error; old files stay, no temporary is left."""
    from mmpar.runner import CheckpointSaveError, save_checkpoint

    model = torch.nn.Linear(4, 2)
    path = tmp_path / "epoch_1.pth"
    save_checkpoint(model, str(path))
    stale = tmp_path / ".epoch_1.pth.tmp.999999"  # left by a process killed while saving
    stale.write_bytes(b"partial")
    save_checkpoint(model, str(path))
    assert not stale.exists()  # removed once the file was saved again
    before = path.read_bytes()

    real_save = torch.save

    def half_then_enospc(obj, f, *args, **kwargs):
        real_save(obj, f, *args, **kwargs)
        f.truncate(f.tell() // 2)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(torch, "save", half_then_enospc)
    with pytest.raises(CheckpointSaveError, match=re.escape(f'"{path}"')) as info:
        save_checkpoint(torch.nn.Linear(4, 2), str(path))
    assert info.value.errno == errno.ENOSPC and os.strerror(errno.ENOSPC) in str(info.value)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["epoch_1.pth"]
