"""PreemptionHook: on SIGTERM/SIGUSR1, finish the iteration, save, and exit with code 75.

Ctrl-C (SIGINT) stops the same way, with exit code 130.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import warnings
from typing import Sequence

from mmpar.utils.dist import is_distributed

from ..checkpointing.checkpointer import Checkpointer, checkpointer_of
from ..runner_protocol import RunnerLike
from ..work_dir_guard.program_options import resume_action
from .hook import HOOKS, Hook
from .preemption_signals import SignalFlag, SignalSpec, StopAgreement, parse_signals

PREEMPTED_EXIT_CODE = 75  # EX_TEMPFAIL (sysexits.h): a temporary failure, try again
INTERRUPTED_EXIT_CODE = 128 + signal.SIGINT  # 130, what a shell reports for Ctrl-C
REQUEUE_TIMEOUT = 60  # seconds scontrol may take


class TrainingPreempted(SystemExit):
    """Training stopped on a preemption signal (or Ctrl-C) after saving a checkpoint.

    A :class:`SystemExit` with code :data:`PREEMPTED_EXIT_CODE` (75), or
    :data:`INTERRUPTED_EXIT_CODE` (130) for SIGINT, so ``except Exception`` does not swallow it
    and a script that does not catch it exits with that code.

    Attributes:
        checkpoint: Path of the checkpoint written (on rank 0; None on the other ranks).
        signal_name: The signal received, e.g. ``'SIGTERM'`` (by any rank).
        epoch: Epochs completed when training stopped.
        iter: Iterations completed when training stopped.
    """

    def __init__(self, checkpoint: str | None, signal_name: str, epoch: int, iter: int) -> None:
        interrupted = signal_name == signal.SIGINT.name
        super().__init__(INTERRUPTED_EXIT_CODE if interrupted else PREEMPTED_EXIT_CODE)
        self.checkpoint = checkpoint
        self.signal_name = signal_name
        self.epoch = epoch
        self.iter = iter

    @property
    def status(self) -> str:
        """How the run ended, for the run summary: ``'interrupted (Ctrl-C)'`` or ``'preempted'``."""
        return "interrupted (Ctrl-C)" if self.signal_name == signal.SIGINT.name else "preempted"

    def __str__(self) -> str:
        return f"training preempted by {self.signal_name} after {self.iter} iterations"


@HOOKS.register_module()
class PreemptionHook(Hook):
    """Save a resumable checkpoint and exit cleanly when the job is asked to stop.

    Cluster schedulers (SLURM preemption and time limits, Kubernetes eviction, spot
    instances) send SIGTERM (or the signal asked for, e.g. ``sbatch --signal=USR1@60``) some
    time before SIGKILL. The signal handler only records the signal; after the current
    iteration (after every other hook of ``after_train_iter``, or of ``after_train_epoch``:
    a signal during an evaluation or a checkpoint save is acted on once it is done) rank 0
    (with every rank joining, for a sharded FSDP model) writes ``preempted_iter_<N>.pth``
    through the runner's atomic checkpoint path (it becomes
    ``latest.pth`` and holds the exact-resume state, mid-epoch included), logs one line, and
    every rank raises :class:`TrainingPreempted` (exit code 75). ``after_run`` hooks still run.
    The preemption checkpoint written before in the same run (before a resume) is deleted once
    the new one is on disk.

    Ctrl-C (SIGINT, unless ``interrupt=False``) stops the same way, but the exception's exit
    code is 130 (as a shell reports for Ctrl-C), and rank 0 says on stderr as soon as it gets
    it that it is finishing the iteration. Under torchrun, which starts the ranks in sessions of
    their own, the terminal's Ctrl-C reaches the agent, which forwards it to every rank.

    The handler sets the handled signals back to their default action: a second signal while
    the first is pending ends the process at once, unsaved.

    Under ``torch.distributed`` all ranks stop after the same iteration, whether every rank or
    only some got the signal: about every ``sync_interval`` seconds (a number of iterations
    that rank 0 chooses from its iteration time, the same for all ranks) the ranks share their
    flags with an asynchronous ``all_reduce`` on a gloo group of the hook, read at the next
    exchange, and with a blocking one at the end of an epoch. A signal is thus acted on within
    about ``2 * sync_interval`` seconds (and at least one iteration) of its arrival; one
    exchange per iteration cost 11% of a 5 ms CPU iteration (see ``docs/reliability.md``).

    Register it at priority ``'LOWEST'`` (``tools/train.py`` and
    :func:`mmpar.apis.build_train_runner` with a ``preemption`` config key do). Without one
    registered, ``runner.run`` handles the signals the same way with one of its own, outside
    ``runner.hooks`` (see :mod:`mmpar.runner.work_dir_guard.guard`). It installs
    its handlers in ``before_run`` from the main thread only (elsewhere it warns and does
    nothing) and restores the previous handlers in ``after_run``.

    Args:
        signals: The signals that preempt (names such as ``'SIGTERM'``/``'TERM'``, or numbers).
        requeue: Under SLURM (``SLURM_JOB_ID`` set), call ``scontrol requeue $SLURM_JOB_ID``
            after saving (rank 0); the run then continues with ``--auto-resume`` when SLURM
            starts the job again.
        sync_interval: Distributed runs: seconds of training between two exchanges of the
            ranks' flags, about (0: after every iteration). Single process: unused (the flag
            is read after every iteration, at no cost).
        interrupt: Handle Ctrl-C (SIGINT) too (exit code 130); False leaves it to Python (a
            ``KeyboardInterrupt`` wherever the run is, nothing saved).

    Raises:
        TypeError: ``signals`` is not a list of names/numbers, ``requeue`` or ``interrupt`` is
            not a bool or ``sync_interval`` not a number.
        ValueError: An unknown or uncatchable signal (SIGKILL, SIGSTOP), an empty list, or
            ``sync_interval`` outside [0, 60].
    """

    def __init__(
        self,
        signals: Sequence[SignalSpec] = ("SIGTERM", "SIGUSR1"),
        requeue: bool = False,
        sync_interval: float = 0.5,
        interrupt: bool = True,
    ) -> None:
        self.signals = parse_signals(signals)
        for name, value in (("requeue", requeue), ("interrupt", interrupt)):
            if not isinstance(value, bool):
                raise TypeError(f"PreemptionHook: {name} must be True or False, got {value!r}")
        if isinstance(sync_interval, bool) or not isinstance(sync_interval, (int, float)):
            raise TypeError(
                f"PreemptionHook: sync_interval must be a number of seconds, got {sync_interval!r}"
            )
        if not 0 <= sync_interval <= 60:
            raise ValueError(
                f"PreemptionHook: sync_interval must be between 0 and 60 seconds (0: every "
                f"iteration), got {sync_interval}"
            )
        self.requeue = requeue
        self.interrupt = interrupt
        self.sync_interval = float(sync_interval)
        self.checkpoint: str | None = None  # name of the preemption checkpoint this run wrote
        self._flag: SignalFlag | None = None
        self._agreement: StopAgreement | None = None

    # Stages ---------------------------------------------------------------------------------

    def before_run(self, runner: RunnerLike) -> None:
        """Install the signal handlers (and, when distributed, create the gloo group)."""
        if threading.current_thread() is not threading.main_thread():
            message = (
                "PreemptionHook: the run is not in the main thread, where signal handlers must "
                "be installed; preemption signals are not handled in this run"
            )
            warnings.warn(message, RuntimeWarning, stacklevel=2)
            runner.logger.warning(message)
            return
        if is_distributed() and runner.world_size > 1:
            self._agreement = StopAgreement(self.sync_interval)
        if self.requeue and runner.rank == 0 and not os.environ.get("SLURM_JOB_ID"):
            runner.logger.warning(
                "PreemptionHook: requeue was asked for, but SLURM_JOB_ID is not set (not a "
                "SLURM job): a preempted run will not be requeued"
            )
        handled = self.signals
        if self.interrupt and signal.SIGINT not in handled:
            handled += (signal.SIGINT,)
        self._flag = SignalFlag(handled, _announce_interrupt if runner.rank == 0 else None)
        self._flag.install()

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Stop here if a signal arrived (distributed: at any rank, by the previous check)."""
        flag = self._flag
        if flag is None:
            return
        if self._agreement is None:
            if flag.received is not None:
                self._preempt(runner, flag.received)
            return
        agreed = self._agreement.poll(flag.received or 0)
        if agreed:
            self._preempt(runner, signal.Signals(agreed))

    def after_train_epoch(self, runner: RunnerLike) -> None:
        """Stop here if a signal arrived during the epoch's last iteration, evaluation or save."""
        flag = self._flag
        if flag is None:
            return
        received = flag.received or 0
        if self._agreement is not None:
            received = self._agreement.agree(received)
        if received:
            self._preempt(runner, signal.Signals(received))

    def after_run(self, runner: RunnerLike) -> None:
        """Restore the previous signal handlers; finish a reduction still in flight."""
        if self._flag is not None:
            self._flag.restore()
            self._flag = None
        if self._agreement is not None:
            agreement, self._agreement = self._agreement, None
            try:
                agreement.drain()
            except RuntimeError as err:  # another rank is gone; the run is ending anyway
                runner.logger.warning("PreemptionHook: pending flag exchange failed: %s", err)

    # Stopping -------------------------------------------------------------------------------

    def _preempt(self, runner: RunnerLike, received: signal.Signals) -> None:
        signal_name = received.name
        position = runner.progress
        epoch, iters = position["epoch"], position["iter"]
        path = self._save(runner, iters)  # every rank: gathers RNG states, writers write
        if runner.rank != 0:
            path = None
        if self._agreement is not None:
            self._agreement.barrier()  # no rank exits before the checkpoint is complete
        if runner.rank == 0:
            job = os.environ.get("SLURM_JOB_ID") if self.requeue else None
            requeue = f"; requeueing SLURM job {job}" if job else ""
            how = "Interrupted by" if received == signal.SIGINT else "Preempted by"
            runner.logger.warning(
                "%s %s at epoch %d, iteration %d: saved %s (latest.pth); to resume, run the "
                "same command and %s%s",
                how,
                signal_name,
                runner.epoch + 1,
                iters,
                path,
                resume_action(path),  # in the options of the program that runs
                requeue,
            )
            if job:
                _requeue(runner, job)
        raise TrainingPreempted(path, signal_name, epoch, iters)

    def _save(self, runner: RunnerLike, iters: int) -> str | None:
        checkpointer = checkpointer_of(runner)
        previous = self.checkpoint
        if checkpointer.writes:
            # Recorded before saving: the checkpoint's own hook state names it, so a run
            # resumed from it deletes it once it writes its own preemption checkpoint.
            self.checkpoint = Checkpointer.preempted_name(iters)
        replaces = os.path.join(runner.work_dir, previous) if previous else None
        return checkpointer.save(runner.work_dir, self.checkpoint, replaces=replaces)

    # Resumable state ------------------------------------------------------------------------

    def state_dict(self) -> dict:
        """The name of the preemption checkpoint this run wrote (empty before any)."""
        return {"checkpoint": self.checkpoint} if self.checkpoint else {}

    def load_state_dict(self, state: dict) -> None:
        """Restore the name of the preemption checkpoint written before the resume."""
        self.checkpoint = state.get("checkpoint")


def _announce_interrupt(received: signal.Signals) -> None:
    """Tell the user at once that Ctrl-C was seen (the stop comes after the iteration).

    Runs inside the signal handler: one ``os.write``, no logging (its locks may be held).
    """
    if received == signal.SIGINT:
        line = (
            "\nCtrl-C: stopping after this iteration and saving a checkpoint "
            "(press Ctrl-C again to stop at once, unsaved)\n"
        )
        os.write(2, line.encode())


def _requeue(runner: RunnerLike, job: str) -> None:
    """Ask SLURM to requeue ``job``; a failure is logged, never raised."""
    cmd = ["scontrol", "requeue", job]
    if shutil.which("scontrol") is None:
        runner.logger.error("PreemptionHook: cannot requeue: scontrol is not on PATH")
        return
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=REQUEUE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        runner.logger.error("PreemptionHook: `%s` failed: %s", " ".join(cmd), err)
        return
    if done.returncode != 0:
        runner.logger.error(
            "PreemptionHook: `%s` failed with exit code %d: %s",
            " ".join(cmd),
            done.returncode,
            (done.stderr or done.stdout).strip(),
        )
