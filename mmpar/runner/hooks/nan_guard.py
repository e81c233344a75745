"""NanGuardHook: stop training at the first non-finite loss, before anything is stepped or saved."""

from __future__ import annotations

import math
from typing import Any

import torch

from ..runner_protocol import RunnerLike
from .hook import HOOKS, Hook


def _is_finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, torch.Tensor):
        if value.numel() == 1:  # the usual scalar loss: one .item(), one host sync
            return math.isfinite(value.item())
        return bool(torch.isfinite(value.detach()).all())
    if isinstance(value, int):
        return True
    if hasattr(value, "item"):  # numpy scalars
        return math.isfinite(float(value.item()))
    return True


def _all_finite(outputs: dict) -> bool:
    """Whether the loss and every logged value are finite."""
    values = [outputs["loss"]] if "loss" in outputs else []
    values += (outputs.get("log_vars") or {}).values()
    return all(_is_finite(value) for value in values)


@HOOKS.register_module()
class NanGuardHook(Hook):
    """Raise ``FloatingPointError`` when the loss or a logged value is NaN or infinite.

    Registered at VERY_HIGH priority by ``register_training_hooks``, so at
    ``after_train_iter`` it runs before the optimizer hook (no step with NaN gradients) and
    before the checkpoint hook (a bad model never overwrites a good checkpoint). The error
    names the iteration, the epoch and the offending loss terms. The check of a CUDA loss
    synchronises once per iteration.

    What it may use of the runner: :class:`~mmpar.runner.runner_protocol.RunnerLike`.
    """

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Check ``outputs['loss']`` and every ``outputs['log_vars']`` value."""
        outputs = runner.outputs
        if _all_finite(outputs):
            return
        bad = []
        if "loss" in outputs and not _is_finite(outputs["loss"]):
            bad.append(f"loss={_describe(outputs['loss'])}")
        for name, value in (outputs.get("log_vars") or {}).items():
            if not _is_finite(value):
                bad.append(f"{name}={_describe(value)}")
        if bad:
            raise FloatingPointError(
                f"non-finite values at iteration {runner.iter + 1} (epoch {runner.epoch + 1}, "
                f"batch {runner.inner_iter + 1} of the epoch): {', '.join(bad)}. Training "
                "stopped before the optimizer step and before any checkpoint was saved; "
                "resume from the last checkpoint with a lower learning rate or gradient "
                "clipping (optimizer_config=dict(grad_clip=dict(max_norm=...)))."
            )


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return str(value.detach().flatten()[0].item()) if value.numel() == 1 else "tensor(...)"
    return str(value)
