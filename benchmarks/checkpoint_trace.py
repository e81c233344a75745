"""Which mmpar files run during one checkpoint save and one auto-resume (issue 23's counts).

Builds a tiny EpochBasedRunner with the usual hooks (checkpoint, LR, logger, evaluation with
``save_best``), trains one epoch so there is a checkpoint, then records with
:func:`sys.setprofile` every mmpar source file whose functions run during
``runner.save_checkpoint(work_dir)`` and during ``runner.resume('auto')`` of a fresh runner.

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


def files_run(fn: Callable[[], Any]) -> list[str]:
    """The mmpar files (relative to the package) whose functions are entered by ``fn()``."""
    seen: set[str] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            path = frame.f_code.co_filename
            if path.startswith(ROOT):
                seen.add(os.path.relpath(path, ROOT))

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return sorted(seen)


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
    for name, files in (("save_checkpoint", saved), ("resume('auto')", resumed)):
        print(f"{name}: {len(files)} mmpar files")
        if verbose:
            print("".join(f"  {f}\n" for f in files), end="")


if __name__ == "__main__":
    main()
