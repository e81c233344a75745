"""mmcv 1.x's IPU hook wrappers: importable; mmpar does not ship Graphcore IPU support."""

from __future__ import annotations

from typing import Any

from .._unsupported import backend_error

__all__ = ["IPUFp16OptimizerHook", "wrap_lr_updater_hook", "wrap_optimizer_hook"]


class IPUFp16OptimizerHook:
    """mmcv's IPU fp16 optimizer hook; constructing it raises ``BackendNotSupportedError``.

    Args:
        grad_clip: As mmcv's.
        coalesce: As mmcv's.
        bucket_size_mb: As mmcv's.
        loss_scale: As mmcv's.
        distributed: As mmcv's.
    """

    def __init__(
        self,
        grad_clip: Any = None,
        coalesce: bool = True,
        bucket_size_mb: int = -1,
        loss_scale: Any = 512.0,
        distributed: bool = True,
    ) -> None:
        raise backend_error(
            "IPUFp16OptimizerHook", "ipu", "mmpar.runner.Fp16OptimizerHook (torch.amp)"
        )


def wrap_lr_updater_hook(lr_hook_class: type) -> type:
    """The IPU LR-hook wrapper of mmcv; calling it raises ``BackendNotSupportedError``.

    Args:
        lr_hook_class: As mmcv's.
    """
    raise backend_error("wrap_lr_updater_hook", "ipu", "the LR updater hook itself")


def wrap_optimizer_hook(optimizer_hook_class: type) -> type:
    """The IPU optimizer-hook wrapper of mmcv; calling it raises ``BackendNotSupportedError``.

    Args:
        optimizer_hook_class: As mmcv's.
    """
    raise backend_error("wrap_optimizer_hook", "ipu", "the optimizer hook itself")
