"""NanGuardHook: stop training at the first non-finite loss, before anything is stepped or saved."""

from __future__ import annotations

import math
from math import isfinite
from typing import Any

import torch

from .hook import HOOKS, Hook


def _is_finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, torch.Tensor):
        if value.numel() == 1:  # the usual scalar loss: one .item() is the cheapest check
            return math.isfinite(value.item())
        return bool(torch.isfinite(value.detach()).all())
    if isinstance(value, int):
        return True
    if hasattr(value, "item"):  # numpy scalars
        return math.isfinite(float(value.item()))
    return True


_NONE: dict = {}


def _all_finite(outputs: dict) -> bool:
    """Whether the loss and every logged value are finite (the test of every iteration)."""
    loss = outputs.get("loss")
    if loss is not None:
        if type(loss) is torch.Tensor and loss.numel() == 1:  # the usual scalar loss
            if not isfinite(loss.item()):
                return False
        elif not _is_finite(loss):
            return False
    for value in (outputs.get("log_vars") or {}).values():
        # Logged values are mostly floats: test those without a call.
        if not (isfinite(value) if type(value) is float else _is_finite(value)):
            return False
    return True


@HOOKS.register_module()
class NanGuardHook(Hook):
    """Raise ``FloatingPointError`` when the loss or a logged value is NaN or infinite.

    Registered at VERY_HIGH priority by ``register_training_hooks``, so at
    ``after_train_iter`` it runs before the optimizer hook (no step with NaN gradients) and
    before the checkpoint hook (a bad model never overwrites a good checkpoint). The error
    names the iteration, the epoch and the offending loss terms. The check of a CUDA loss
    synchronises once per iteration.

    Needs from the runner: ``outputs``, ``iter``, ``epoch``, ``inner_iter``.
    """

    def after_train_iter(self, runner: Any) -> None:
        """Check ``outputs['loss']`` and every ``outputs['log_vars']`` value."""
        outputs = runner.outputs
        try:
            # The usual outputs (a one-element loss tensor, floats logged) in a few C-level
            # tests: a non-finite value makes the sum non-finite. Anything else (no loss, a
            # larger tensor, tensors or text logged, a sum that overflows) is decided by the
            # exact test below.
            loss = outputs["loss"].item()
            logged = sum(outputs.get("log_vars", _NONE).values())
            if type(logged) is float and isfinite(logged) and isfinite(loss):
                return
        except Exception:
            pass
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
