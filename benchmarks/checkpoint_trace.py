"""Which mmpar files run during one checkpoint save and one auto-resume (issue 23's counts).

Files are split into the checkpoint path and the runner's own state: what runs inside
``runner.state_dict()`` / ``load_state_dict()`` (hook states, RNG, sampler position) depends
on the hooks registered, not on how checkpoints are written.

Builds a tiny EpochBasedRunner with the usual hooks (checkpoint, LR, logger, evaluation with
``save_best``), trains one epoch so there is a checkpoint, then records with
:func:`sys.setprofile` every mmpar source file whose functions run during
``runner.save_checkpoint(work_dir)`` and during ``runner.resume('auto')`` of a fresh runner.
The runner's Checkpointer unwraps the model when the runner is made (and again only if
``runner.model`` is replaced), so that one-off step is outside both traced calls.

    PYTHONPATH=$PWD python benchmarks/checkpoint_trace.py [-v]
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from typing import Any, Callable

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import mmpar
from mmpar.runner import EpochBasedRunner

ROOT = os.path.dirname(os.path.abspath(mmpar.__file__))


class Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def train_step(self, batch: Any, optimizer: Any) -> dict:
        loss = self.fc(batch[0]).pow(2).mean()
        return dict(loss=loss, log_vars={"loss": loss.item()}, num_samples=len(batch[0]))

    def val_step(self, batch: Any, optimizer: Any) -> dict:
        return self.train_step(batch, optimizer)


def make_runner(work_dir: str, max_epochs: int) -> EpochBasedRunner:
    model = Tiny()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    logger = logging.getLogger("checkpoint_trace")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    runner = EpochBasedRunner(
        model, optimizer=optimizer, work_dir=work_dir, logger=logger, max_epochs=max_epochs
    )
    runner.register_training_hooks(
        lr_config=dict(policy="step", step=[1]),
        optimizer_config=dict(),
        checkpoint_config=dict(interval=1, max_keep_ckpts=2),
        log_config=dict(interval=1, hooks=[dict(type="TextLoggerHook")]),
    )
    return runner


# Functions that collect or apply the runner's own state (counters, RNG, sampler and hook
# states): what they reach is the state's, not the checkpoint path's (before: resume_state).
STATE_FUNCTIONS = {"state_dict", "resume_state", "load_state_dict", "_restore_hook_states"}
STATE_FILES = ("runner/resume/runner_state.py", "runner/resume.py")


def files_run(fn: Callable[[], Any]) -> tuple[list[str], list[str]]:
    """The mmpar files (relative to the package) whose functions ``fn()`` enters.

    Returns ``(path, state)``: the files entered on the checkpoint path itself, and those
    entered only while the runner collected or applied its own state (hooks' ``state_dict``,
    RNG, sampler position).
    """
    path: set[str] = set()
    state: set[str] = set()
    depth = [0]

    def profile(frame: Any, event: str, arg: Any) -> None:
        file = frame.f_code.co_filename
        if not file.startswith(ROOT):
            return
        rel = os.path.relpath(file, ROOT)
        entering_state = frame.f_code.co_name in STATE_FUNCTIONS and rel in STATE_FILES
        if event == "call":
            (state if depth[0] else path).add(rel)
            if entering_state:
                depth[0] += 1
        elif event == "return" and entering_state:
            depth[0] -= 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return sorted(path), sorted(state - path)


def main() -> None:
    verbose = "-v" in sys.argv
    loader = DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=4, shuffle=True)
    with tempfile.TemporaryDirectory() as work_dir:
        runner = make_runner(work_dir, max_epochs=1)
        runner.run([loader], [("train", 1)])
        saved = files_run(lambda: runner.save_checkpoint(work_dir))
        fresh = make_runner(work_dir, max_epochs=2)
        resumed = files_run(lambda: fresh.resume("auto"))
        assert fresh.epoch == 1, fresh.epoch
    for name, (path, state) in (("save_checkpoint", saved), ("resume('auto')", resumed)):
        runner_path = [f for f in path if f.startswith("runner/")]
        print(
            f"{name}: {len(path) + len(state)} mmpar files; on the checkpoint path "
            f"{len(path)} ({len(runner_path)} in runner/), only for the runner's own state "
            f"{len(state)}"
        )
        if verbose:
            print("".join(f"  {f}\n" for f in path), end="")
            print("".join(f"  (state) {f}\n" for f in state), end="")


if __name__ == "__main__":
    main()
