"""Fault injection for ``test_kill_resume.py``: SIGKILL or a failing write at a chosen point.

``kill_digits_config.py`` imports this module through ``custom_imports`` (the tests put this
directory on ``PYTHONPATH``), registers :class:`KillFaultHook` as a custom hook and puts
:class:`KillFaultPoint` first in the val pipeline. Everything is inert unless the environment
variable ``MMPAR_TEST_FAULT`` arms exactly one fault:

``hook:<stage>:<epoch|iter>=<n>``
    SIGKILL the training process in hook stage ``<stage>`` (e.g. ``after_train_iter``) of
    epoch / iteration ``n`` (1-based: ``runner.epoch + 1`` / ``runner.iter + 1``). The hook
    runs at ``BELOW_NORMAL`` priority: after the optimizer step and the checkpoint hook, before
    the evaluation, timer and logger hooks.
``val:<n>``
    SIGKILL the training process when the val pipeline prepares its ``n``-th sample in a
    process (the main process or one loader worker), i.e. while an evaluation is running.
``save:<glob>:kill`` / ``save:<glob>:raise``
    When ``torch.save`` writes a checkpoint whose final name matches ``<glob>`` (the file is
    written to a temporary name first), write half of it, then SIGKILL the process or raise
    ``OSError(ENOSPC)``.
``link:<glob>``
    SIGKILL once a checkpoint whose name matches ``<glob>`` is in place, before ``latest.pth``
    is pointed at it.

Before it fires, a fault prints ``FAULT <spec>`` to stderr, so the tests can check that the
process died where they meant it to. Disarmed, nothing here draws random numbers or touches
the data, so a run with the plugin gives the same weights as one without it.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import signal
import sys
from typing import Any

import torch

import mmpar.runner.checkpointing.checkpointer as runner_checkpoint
from mmpar.datasets import PIPELINES
from mmpar.runner import HOOKS, Hook

ENV = "MMPAR_TEST_FAULT"
SPEC = os.environ.get(ENV, "")
_KIND, _, _ARG = SPEC.partition(":")


def _fire(pid: int | None = None) -> None:
    """Report the armed fault on stderr and SIGKILL ``pid`` (default: this process)."""
    print(f"FAULT {SPEC}", file=sys.stderr, flush=True)
    os.kill(os.getpid() if pid is None else pid, signal.SIGKILL)


@HOOKS.register_module()
class KillFaultHook(Hook):
    """SIGKILL the process in one hook stage of one epoch or iteration (``hook:...`` faults)."""

    def __init__(self) -> None:
        self.stage, self.counter, self.number = None, None, None
        if _KIND == "hook":
            match = re.fullmatch(r"(\w+):(epoch|iter)=(\d+)", _ARG)
            if match is None or match.group(1) not in Hook.stages:
                raise ValueError(f"{ENV}={SPEC!r}: expected hook:<stage>:<epoch|iter>=<n>")
            self.stage, self.counter, self.number = match.group(1), match.group(2), int(match[3])
            setattr(self, self.stage, self._maybe_fire)  # an instance override of that stage

    def _maybe_fire(self, runner: Any) -> None:
        current = runner.epoch if self.counter == "epoch" else runner.iter
        if current + 1 == self.number:
            _fire()


@PIPELINES.register_module()
class KillFaultPoint:
    """A pass-through val transform that SIGKILLs the training process (``val:<n>`` faults).

    The training process's pid is taken when the transform is built, so the kill also hits it
    when the transform runs in a loader worker.
    """

    def __init__(self) -> None:
        self.main_pid = os.getpid()
        self.at = int(_ARG) if _KIND == "val" else 0
        self.calls = 0

    def __call__(self, results: dict) -> dict:
        if self.at:
            self.calls += 1
            if self.calls == self.at:
                _fire(self.main_pid)
        return results


def _target_name(f: Any) -> str:
    """The final name of the checkpoint ``f`` is written for (``.<name>.tmp.<pid>`` → name)."""
    name = os.path.basename(str(getattr(f, "name", f)))
    match = re.fullmatch(r"\.(.+)\.tmp\.\d+", name)
    return match.group(1) if match else name


def _install_save_fault(pattern: str, action: str) -> None:
    real_save = torch.save

    def faulty_save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> None:
        if not fnmatch.fnmatch(_target_name(f), pattern):
            return real_save(obj, f, *args, **kwargs)
        real_save(obj, f, *args, **kwargs)
        f.flush()
        f.truncate(f.tell() // 2)
        f.flush()
        os.fsync(f.fileno())
        if action == "kill":
            _fire()
        print(f"FAULT {SPEC}", file=sys.stderr, flush=True)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    torch.save = faulty_save


def _install_link_fault(pattern: str) -> None:
    real_link = runner_checkpoint.update_latest_link

    def faulty_link(out_dir: str, filename: str, *args: Any, **kwargs: Any) -> str:
        if fnmatch.fnmatch(filename, pattern):
            _fire()
        return real_link(out_dir, filename, *args, **kwargs)

    runner_checkpoint.update_latest_link = faulty_link


if _KIND == "save":
    _pattern, _, _action = _ARG.rpartition(":")
    if _action not in ("kill", "raise"):
        raise ValueError(f"{ENV}={SPEC!r}: expected save:<glob>:kill or save:<glob>:raise")
    _install_save_fault(_pattern, _action)
elif _KIND == "link":
    _install_link_fault(_ARG)
elif _KIND not in ("", "hook", "val"):
    raise ValueError(f"{ENV}={SPEC!r}: unknown fault kind {_KIND!r}")
