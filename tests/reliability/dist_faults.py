"""Fault injection for ``test_dist_faults.py``, loaded through ``custom_imports`` of its config.

Not a test module: the training processes import it (``custom_imports=dict(imports=
['dist_faults'])`` with ``tests/reliability`` on ``PYTHONPATH``), and the faults are switched
on with ``--cfg-options``:

* ``model.type=DistFaultyClassifier model.fault_action=raise|sigkill model.fault_rank=1
  model.fault_iter=N [model.fault_marker=PATH]``: the classifier's ``train_step`` fails on one
  rank at its ``N``-th call (1-based); with a marker file the fault fires only if the file does
  not exist yet (it is created first), so a restarted job runs clean.
* a ``DistFaultySample`` transform in ``data.train.pipeline`` (``action=raise|exit|sigkill``,
  ``sample_idx=N``): loading sample ``N`` raises, or ends the DataLoader worker process that
  loads it abruptly (``os._exit``/``SIGKILL``; only inside a worker, never the main process).
"""

from __future__ import annotations

import os
import signal
from typing import Any

import torch.distributed as dist
from torch.utils.data import get_worker_info

from mmpar.datasets import PIPELINES
from mmpar.models import CLASSIFIERS
from mmpar.models.classifiers.image import ImageClassifier

CLASSIFIER_ACTIONS = ("none", "raise", "sigkill")
SAMPLE_ACTIONS = ("raise", "exit", "sigkill")


class InjectedFault(RuntimeError):
    """The exception the plugin raises (its message does not name the rank or the sample)."""


def _claim_marker(marker: str | None) -> bool:
    """Create ``marker`` and return True; False when it already existed (fault already fired)."""
    if not marker:
        return True
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True


@CLASSIFIERS.register_module()
class DistFaultyClassifier(ImageClassifier):
    """An :class:`ImageClassifier` whose ``train_step`` fails once on one rank.

    Args:
        fault_action: ``'raise'`` (an :class:`InjectedFault`), ``'sigkill'`` (the process
            kills itself with SIGKILL) or ``'none'``.
        fault_rank: The rank that fails.
        fault_iter: Fail at this call of ``train_step`` (1-based, counted per process).
        fault_marker: Optional file; the fault fires only if it does not exist yet.
        **kwargs: :class:`ImageClassifier` arguments.
    """

    def __init__(
        self,
        fault_action: str = "none",
        fault_rank: int = 1,
        fault_iter: int = 1,
        fault_marker: str | None = None,
        **kwargs: Any,
    ) -> None:
        if fault_action not in CLASSIFIER_ACTIONS:
            raise ValueError(f"fault_action must be one of {CLASSIFIER_ACTIONS}: {fault_action!r}")
        super().__init__(**kwargs)
        self.fault_action = fault_action
        self.fault_rank = fault_rank
        self.fault_iter = fault_iter
        self.fault_marker = fault_marker
        self._calls = 0

    def train_step(self, data: dict, optimizer: Any = None, **kwargs: Any) -> dict:
        """Fail as configured, else the normal step."""
        self._calls += 1
        rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
        if (
            self.fault_action != "none"
            and rank == self.fault_rank
            and self._calls == self.fault_iter
            and _claim_marker(self.fault_marker)
        ):
            if self.fault_action == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise InjectedFault("injected failure in train_step")
        return super().train_step(data, optimizer, **kwargs)


@PIPELINES.register_module()
class DistFaultySample:
    """A pipeline step that fails on one sample.

    Args:
        sample_idx: The dataset index (``results['sample_idx']``) that fails.
        action: ``'raise'`` (an :class:`InjectedFault`), ``'exit'`` (``os._exit(3)``) or
            ``'sigkill'`` (SIGKILL to itself); the last two only in a DataLoader worker.
    """

    def __init__(self, sample_idx: int, action: str = "raise") -> None:
        if action not in SAMPLE_ACTIONS:
            raise ValueError(f"action must be one of {SAMPLE_ACTIONS}, got {action!r}")
        self.sample_idx = sample_idx
        self.action = action

    def __call__(self, results: dict) -> dict:
        """Pass ``results`` through, or fail on the chosen sample."""
        if results.get("sample_idx") != self.sample_idx:
            return results
        if self.action == "raise":
            raise InjectedFault("cannot decode this sample (injected)")
        if get_worker_info() is None:
            raise RuntimeError(f"DistFaultySample(action={self.action!r}) needs loader workers")
        if self.action == "exit":
            os._exit(3)
        os.kill(os.getpid(), signal.SIGKILL)
        return results  # not reached
