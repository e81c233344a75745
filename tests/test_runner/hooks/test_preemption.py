"""PreemptionHook in-process: the signal flag, handlers, checkpoint, rotation, agreement.

The real-process tests (tools/train.py, torchrun, SLURM requeue) are in
tests/reliability/test_preemption.py.
"""

import logging
import os
import signal
import stat
import threading

import pytest
import torch
import torch.distributed as dist
from helpers.signals import SendSignal

from mmpar.runner import (
    INTERRUPTED_EXIT_CODE,
    PREEMPTED_EXIT_CODE,
    Hook,
    PreemptionHook,
    TrainingPreempted,
    find_latest_checkpoint,
    load_checkpoint,
)
from mmpar.runner.hooks.preemption_signals import SignalFlag, StopAgreement, parse_signals


def _run(make_runner, make_loader, *hooks, epochs=2, resume=None, work_dir=None):
    extra = {} if work_dir is None else {"work_dir": str(work_dir)}
    runner = make_runner(max_epochs=epochs, **extra)
    runner.register_training_hooks(lr_config=None, optimizer_config={})
    for hook, priority in hooks:
        runner.register_hook(hook, priority=priority)
    if resume:
        runner.resume(resume)
    runner.run([make_loader(n=16)], [("train", 1)])  # 4 iterations per epoch
    return runner


def test_signal_mid_epoch_saves_and_raises(make_runner, make_loader, keep_handlers, caplog):
    before = signal.getsignal(signal.SIGTERM)
    hook = PreemptionHook()
    with caplog.at_level(logging.WARNING), pytest.raises(TrainingPreempted) as info:
        _run(make_runner, make_loader, (SendSignal(6), "NORMAL"), (hook, "LOWEST"))
    err = info.value
    assert isinstance(err, SystemExit) and not isinstance(err, Exception)
    assert err.code == PREEMPTED_EXIT_CODE == 75
    assert (err.signal_name, err.epoch, err.iter) == ("SIGTERM", 1, 6)
    work = os.path.dirname(err.checkpoint)
    assert os.path.basename(err.checkpoint) == "preempted_iter_6.pth"
    assert os.readlink(os.path.join(work, "latest.pth")) == "preempted_iter_6.pth"
    model = torch.nn.Module()
    model.linear = torch.nn.Linear(4, 1)
    ckpt = load_checkpoint(model, err.checkpoint, strict=True)  # weights_only
    state = ckpt["mmpar_state"]
    assert (state["epoch"], state["iter"], state["inner_iter"]) == (1, 6, 2)  # mid-epoch
    assert state["hooks"]["PreemptionHook"] == {"checkpoint": "preempted_iter_6.pth"}
    lines = [r.getMessage() for r in caplog.records if "Preempted by" in r.getMessage()]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    assert "SIGTERM at epoch 2, iteration 6" in lines[0] and err.checkpoint in lines[0]
    # pytest has no resume option: the hint is the config key (see test_run_guard.py for more).
    assert lines[0].endswith(f"and set resume_from='{err.checkpoint}' in the config")
    assert signal.getsignal(signal.SIGTERM) is before  # after_run restored the handler


def test_ctrl_c_saves_and_raises_130_unless_turned_off(
    make_runner, make_loader, keep_handlers, caplog, capfd, tmp_path
):
    with caplog.at_level(logging.WARNING), pytest.raises(TrainingPreempted) as info:
        _run(
            make_runner,
            make_loader,
            (SendSignal(3, signal.SIGINT), "NORMAL"),
            (PreemptionHook(), "LOWEST"),
        )
    err = info.value
    assert (err.code, err.status, err.signal_name, err.iter) == (
        INTERRUPTED_EXIT_CODE,
        "interrupted (Ctrl-C)",
        "SIGINT",
        3,
    )
    assert INTERRUPTED_EXIT_CODE == 130 and os.path.exists(err.checkpoint)
    assert any(
        "Interrupted by SIGINT at epoch 1, iteration 3" in r.getMessage() for r in caplog.records
    )
    assert "press Ctrl-C again to stop at once" in capfd.readouterr().err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    # interrupt=False: Ctrl-C is Python's KeyboardInterrupt, nothing is saved.
    with pytest.raises(KeyboardInterrupt):
        _run(
            make_runner,
            make_loader,
            (SendSignal(3, signal.SIGINT), "NORMAL"),
            (PreemptionHook(interrupt=False), "LOWEST"),
            work_dir=tmp_path / "second",  # a new run: not beside the first one's checkpoint
        )
    with pytest.raises(TypeError, match="interrupt must be True or False"):
        PreemptionHook(interrupt="yes")


def test_no_signal_changes_nothing(make_runner, make_loader, keep_handlers):
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGUSR1)}
    runner = _run(make_runner, make_loader, (PreemptionHook(), "LOWEST"))
    assert runner.epoch == 2 and not any("preempted" in n for n in os.listdir(runner.work_dir))
    assert {s: signal.getsignal(s) for s in before} == before


def test_signal_in_epoch_end_is_honoured_after_the_later_hooks(
    make_runner, make_loader, keep_handlers
):
    """A signal during an evaluation or save (after_train_epoch) stops after that stage."""

    class SignalAtEpochEnd(Hook):
        def after_train_epoch(self, runner):
            if runner.epoch == 0:
                os.kill(os.getpid(), signal.SIGUSR1)

    with pytest.raises(TrainingPreempted) as info:
        _run(make_runner, make_loader, (SignalAtEpochEnd(), "LOW"), (PreemptionHook(), "LOWEST"))
    assert (info.value.signal_name, info.value.epoch, info.value.iter) == ("SIGUSR1", 1, 4)
    state = torch.load(info.value.checkpoint, weights_only=True)["mmpar_state"]
    assert (state["epoch"], state["inner_iter"]) == (1, 0)  # the next epoch's start


def test_resumed_run_deletes_its_previous_preemption_checkpoint(
    make_runner, make_loader, keep_handlers
):
    with pytest.raises(TrainingPreempted) as first:
        _run(make_runner, make_loader, (SendSignal(3), "NORMAL"), (PreemptionHook(), "LOWEST"))
    work = os.path.dirname(first.value.checkpoint)
    latest = find_latest_checkpoint(work)
    assert os.path.realpath(latest) == os.path.realpath(first.value.checkpoint)
    with pytest.raises(TrainingPreempted) as second:
        _run(
            make_runner,
            make_loader,
            (SendSignal(6), "NORMAL"),
            (PreemptionHook(), "LOWEST"),
            resume=latest,
        )
    assert second.value.iter == 6
    assert sorted(n for n in os.listdir(work) if n.endswith(".pth")) == [
        "latest.pth",
        "preempted_iter_6.pth",
    ]


def test_signal_flag_second_signal_gets_default_action(keep_handlers):
    previous = signal.getsignal(signal.SIGUSR1)
    flag = SignalFlag(parse_signals(["SIGTERM", "usr1"]))
    flag.install()
    assert signal.getsignal(signal.SIGTERM) == flag._handle
    os.kill(os.getpid(), signal.SIGUSR1)
    assert flag.received == signal.SIGUSR1
    # A second signal of any listed kind would now end the process (default action).
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL
    flag.restore()
    assert signal.getsignal(signal.SIGUSR1) == previous


def test_outside_the_main_thread_warns_and_does_nothing(make_runner, keep_handlers):
    runner, hook = make_runner(max_epochs=1), PreemptionHook()
    before = signal.getsignal(signal.SIGTERM)
    caught = []

    def target():
        with pytest.warns(RuntimeWarning, match="not in the main thread") as record:
            hook.before_run(runner)
        caught.extend(record)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    assert caught and signal.getsignal(signal.SIGTERM) is before
    hook.after_train_iter(runner)  # inert
    hook.after_run(runner)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown signal 'SIGFOO'"):
        PreemptionHook(signals=["SIGFOO"])
    with pytest.raises(ValueError, match="SIGKILL cannot be caught"):
        PreemptionHook(signals=["SIGKILL"])
    with pytest.raises(ValueError, match="signals is empty"):
        PreemptionHook(signals=[])
    with pytest.raises(TypeError, match="list of signal names"):
        PreemptionHook(signals="SIGTERM")
    with pytest.raises(TypeError, match="requeue must be True or False"):
        PreemptionHook(requeue="yes")
    assert PreemptionHook(signals=[15, "term", signal.SIGINT]).signals == (
        signal.SIGTERM,
        signal.SIGINT,
    )


def test_config_key_errors_name_it(make_runner):
    from mmpar.apis.train import _register_preemption_hook
    from mmpar.utils.registry import ConfigArgumentError

    runner = make_runner(max_epochs=1)
    with pytest.raises(ConfigArgumentError, match="^preemption: expected a dict"):
        _register_preemption_hook(runner, "on")
    with pytest.raises(
        ConfigArgumentError, match="^preemption.requeue must be bool for PreemptionHook"
    ):
        _register_preemption_hook(runner, {"requeue": "yes"})
    with pytest.raises(ValueError, match="^preemption: .*unknown signal"):
        _register_preemption_hook(runner, {"signals": ["SIGTERN"]})
    _register_preemption_hook(runner, None)
    assert not any(isinstance(h, PreemptionHook) for h in runner.hooks)
    _register_preemption_hook(runner, {})
    assert isinstance(runner.hooks[-1], PreemptionHook) and runner.hooks[-1].priority == 100


def test_failed_requeue_is_logged_and_still_exits_75(
    make_runner, make_loader, keep_handlers, tmp_path, monkeypatch, caplog
):
    scontrol = tmp_path / "bin" / "scontrol"
    scontrol.parent.mkdir()
    scontrol.write_text("#!/bin/sh\necho 'slurm_requeue error: Access denied' >&2\nexit 1\n")
    scontrol.chmod(scontrol.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{scontrol.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "77")
    hook = PreemptionHook(requeue=True)
    with caplog.at_level(logging.WARNING), pytest.raises(TrainingPreempted) as info:
        _run(make_runner, make_loader, (SendSignal(2), "NORMAL"), (hook, "LOWEST"))
    assert info.value.code == 75
    text = caplog.text
    assert "requeueing SLURM job 77" in text
    assert "`scontrol requeue 77` failed with exit code 1: slurm_requeue error" in text


def test_requeue_outside_slurm_warns(make_runner, keep_handlers, monkeypatch, caplog):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    runner, hook = make_runner(max_epochs=1), PreemptionHook(requeue=True)
    with caplog.at_level(logging.WARNING):
        hook.before_run(runner)
        hook.after_run(runner)
    assert "SLURM_JOB_ID is not set" in caplog.text


def test_stop_agreement_pipelines_one_iteration(tmp_path):
    """On a 1-rank gloo group: poll answers what was shared at the previous poll."""
    assert not dist.is_initialized()
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    try:
        agreement = StopAgreement()
        assert agreement.poll(0) == 0
        assert agreement.poll(int(signal.SIGTERM)) == 0  # seen, decided at the next poll
        assert agreement.poll(0) == signal.SIGTERM
        assert agreement._pending is None  # decided: nothing new launched
        assert agreement.agree(0) == 0
        assert agreement.poll(0) == 0
        assert agreement.agree(int(signal.SIGUSR1)) == signal.SIGUSR1
        agreement.poll(0)
        agreement.drain()
        assert agreement._pending is None
        agreement.barrier()
    finally:
        dist.destroy_process_group()


def test_stop_agreement_spaces_exchanges_by_rank_zero_iteration_time(tmp_path, monkeypatch):
    """sync_interval=0.05 s at 10 ms per iteration: after the first exchanges, every 5th."""
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    try:
        now = [0.0]
        agreement = StopAgreement(sync_interval=0.05, clock=lambda: now[0])
        launches = []
        launch = agreement._launch

        def counting_launch(flag, async_op):
            launches.append(step)
            return launch(flag, async_op)

        monkeypatch.setattr(agreement, "_launch", counting_launch)
        answers = {}
        for step in range(1, 31):
            now[0] += 0.01  # one 10 ms iteration
            flag = int(signal.SIGTERM) if step >= 17 else 0  # received after iteration 17
            answers[step] = agreement.poll(flag)
            if answers[step]:
                break
        # Exchanges at 1 and 2 (no timing yet, then 10 ms measured: gap 5), then every 5th.
        assert launches == [1, 2, 3, 8, 13, 18]
        assert agreement.gap == 5
        # The signal seen after iteration 17 was shared at 18 and acted on at 23.
        assert answers[23] == signal.SIGTERM and not any(answers[s] for s in range(1, 23))
    finally:
        dist.destroy_process_group()


def test_sync_interval_is_checked():
    with pytest.raises(TypeError, match="sync_interval must be a number of seconds"):
        PreemptionHook(sync_interval="1s")
    with pytest.raises(ValueError, match="between 0 and 60 seconds"):
        PreemptionHook(sync_interval=-1)
    assert PreemptionHook(sync_interval=0).sync_interval == 0.0
