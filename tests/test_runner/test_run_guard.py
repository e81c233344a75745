"""runner.run keeps mmpar's guarantees itself, with a plain runner and no CLI.

The lock (another process holds it: refused), a new run over another run's checkpoints
(refused, nothing written), a resumed run (allowed), the preemption handler (on by default
outside ``runner.hooks``, off with ``preemption=None`` / ``MMPAR_PREEMPTION=0``), and the hints
that name the running program's options. The real programs (mmcls's and mmdet's own
``tools/train.py``) are in tests/test_real_clients/test_guarantees.py.
"""

import os
import signal
import sys
import threading
import warnings

import pytest
from helpers import tree_bytes, work_dir_lock_holder
from helpers.signals import SendSignal

from mmpar.runner import Hook, PreemptionHook, TrainingPreempted
from mmpar.runner.work_dir_guard import (
    PREEMPTION_ENV,
    RunRefusedError,
    WorkDirHasOtherRunError,
    WorkDirLock,
    WorkDirLockedError,
    program_options,
    set_preemption,
)
from mmpar.utils.config import program as program_module


class Spy(Hook):
    """Records the guard's own hooks as seen in before_run / after_train_iter."""

    def __init__(self):
        self.seen = []

    def before_run(self, runner):
        self.seen.append(tuple(runner._run_guard.hooks))


@pytest.fixture(autouse=True)
def no_program_config(monkeypatch):
    """No config file of pytest's command line decides; each test says what it wants."""
    monkeypatch.setattr(program_module, "_program_config", None)
    monkeypatch.delenv(PREEMPTION_ENV, raising=False)


def _runner(make_runner, work_dir, *hooks, epochs=1):
    runner = make_runner(max_epochs=epochs, work_dir=str(work_dir))
    runner.register_training_hooks(
        lr_config=None, optimizer_config={}, checkpoint_config=dict(interval=1)
    )
    for hook in hooks:
        runner.register_hook(hook, priority="LOWEST")
    return runner


def test_new_run_over_another_runs_checkpoints_is_refused_and_resume_is_allowed(
    make_runner, make_loader, tmp_path
):
    work = tmp_path / "work"
    first = _runner(make_runner, work)
    first.run([make_loader(n=8)], [("train", 1)])
    assert (work / "epoch_1.pth").is_file()
    first.run([make_loader(n=8)], [("train", 1)])  # the same runner again: its own run
    before = tree_bytes(work)
    fresh = _runner(make_runner, work, epochs=2)
    with pytest.raises(RunRefusedError) as info:
        fresh.run([make_loader(n=8)], [("train", 1)])
    refused = info.value
    assert isinstance(refused.error, WorkDirHasOtherRunError)
    # Uncaught, Python prints the code (one line) and exits with status 1.
    assert isinstance(refused.code, str) and "\n" not in refused.code
    assert refused.code.startswith(f'error: WorkDirHasOtherRunError: work_dir "{work}" holds 1 ')
    assert refused.code.endswith("to continue that run. Nothing was written")
    assert tree_bytes(work) == before  # lock file content put back, no checkpoint, no record
    # The same runner, resumed: continues that run to epoch 2.
    fresh.resume(str(work / "latest.pth"))
    fresh.run([make_loader(n=8)], [("train", 1)])
    assert (work / "epoch_2.pth").is_file() and fresh.epoch == 2


def test_a_work_dir_locked_by_another_process_is_refused(make_runner, make_loader, tmp_path):
    work = tmp_path / "work"
    with work_dir_lock_holder(work) as holder:
        runner = _runner(make_runner, work)
        with pytest.raises(RunRefusedError) as info:
            runner.run([make_loader(n=8)], [("train", 1)])
        assert isinstance(info.value.error, WorkDirLockedError)
        assert f"pid {holder.pid}" in info.value.code
        assert not (work / "epoch_1.pth").exists()
    # Released: the same runner runs now, and holds the lock only while it runs.
    runner.run([make_loader(n=8)], [("train", 1)])
    assert (work / "epoch_1.pth").is_file()
    with WorkDirLock(str(work)):
        pass


def test_the_lock_is_reentrant_for_this_process(make_runner, make_loader, tmp_path):
    """mmpar's tools/train.py holds the lock before it builds the runner: run() reuses it."""
    work = tmp_path / "work"
    with WorkDirLock(str(work)) as lock:
        _runner(make_runner, work).run([make_loader(n=8)], [("train", 1)])
        assert lock.held
    assert (work / "epoch_1.pth").is_file()


def test_preemption_is_on_by_default_outside_the_hook_list(
    make_runner, make_loader, tmp_path, keep_handlers
):
    spy = Spy()
    runner = _runner(make_runner, tmp_path / "work", spy, SendSignal(3, signal.SIGTERM), epochs=2)
    hooks_before = list(runner.hooks)
    handler_before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(TrainingPreempted) as info:
        runner.run([make_loader(n=16)], [("train", 1)])
    assert info.value.code == 75 and info.value.iter == 3
    assert os.path.basename(info.value.checkpoint) == "preempted_iter_3.pth"
    (own,) = spy.seen[0]
    assert isinstance(own, PreemptionHook)
    assert runner.hooks == hooks_before  # mmcv's hook list is unchanged
    assert runner._run_guard.hooks == ()  # and the guard's hook is gone after the run
    assert signal.getsignal(signal.SIGTERM) is handler_before  # restored after the run


@pytest.mark.parametrize("how", ["config", "env", "set_preemption", "registered", "thread"])
def test_preemption_none_or_a_registered_hook_means_no_handler_of_its_own(
    how, make_runner, make_loader, tmp_path, monkeypatch
):
    spy = Spy()
    hooks = [spy]
    if how == "registered":  # apis/train.py registered one: no double handling
        hooks.append(PreemptionHook())
    runner = _runner(make_runner, tmp_path / "work", *hooks)
    if how == "config":
        monkeypatch.setattr(program_module, "_program_config", {"preemption": None})
    elif how == "env":
        monkeypatch.setenv(PREEMPTION_ENV, "0")
    elif how == "set_preemption":
        set_preemption(runner, None)
    if how == "thread":  # signal handlers need the main thread: none, and no warning
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            worker = threading.Thread(target=runner.run, args=([make_loader(n=8)], [("train", 1)]))
            worker.start()
            worker.join()
        assert runner.epoch == 1  # the run finished in its thread
    else:
        runner.run([make_loader(n=8)], [("train", 1)])
    assert spy.seen == [()]
    if how == "registered":
        assert sum(isinstance(h, PreemptionHook) for h in runner.hooks) == 1


def test_the_program_config_is_the_file_named_on_the_command_line(tmp_path, monkeypatch):
    from mmpar.utils import Config

    cfg_file = tmp_path / "cfg.py"
    cfg_file.write_text("preemption = None\n")
    other = tmp_path / "other.py"
    other.write_text("preemption = dict(requeue=True)\n")
    monkeypatch.setattr(sys, "argv", ["train.py", str(cfg_file), "--work-dir", "w"])
    loaded = Config.fromfile(str(cfg_file))
    Config.fromfile(str(other))  # not on the command line: not the program's config
    assert program_module.program_config() is loaded


@pytest.mark.parametrize(
    "source, hint",
    [
        ("p.add_argument('--resume-from')\np.add_argument('--auto-resume')", "pass --auto-resume"),
        ("p.add_argument('--resume-from', help='x')", "pass --resume-from W/latest.pth"),
        ("p.add_argument('--config')", "set resume_from='W/latest.pth' in the config"),
    ],
)
def test_the_resume_hint_names_what_the_running_program_accepts(
    source, hint, tmp_path, monkeypatch
):
    script = tmp_path / f"train_{abs(hash(source))}.py"
    script.write_text(source)
    monkeypatch.setattr(sys, "argv", [str(script)])
    monkeypatch.setattr(program_options, "_declared", set())
    assert program_options.resume_action("W/latest.pth") == hint


def test_tools_train_declares_its_options_only_while_its_main_runs(tmp_path, monkeypatch):
    """Called in-process (as tests and other programs do), it must not leave them behind."""
    from mmpar.cli import train as train_command
    from mmpar.utils.usage_error import UsageError

    script = tmp_path / "caller.py"
    script.write_text("print('a program without resume options')\n")
    monkeypatch.setattr(sys, "argv", [str(script)])
    monkeypatch.setattr(program_options, "_declared", {"--mine"})
    during = []

    def setup(args):
        during.append(program_options.resume_action("W/latest.pth"))
        raise UsageError("stop here")

    monkeypatch.setattr(train_command, "setup", setup)
    with pytest.raises(SystemExit) as info:
        train_command.main([str(tmp_path / "cfg.py")])
    assert info.value.code == 2
    assert during == ["pass --auto-resume"]
    assert (
        program_options.resume_action("W/latest.pth")
        == "set resume_from='W/latest.pth' in the config"
    )
    assert program_options._declared == {"--mine"}  # what was declared before stays
