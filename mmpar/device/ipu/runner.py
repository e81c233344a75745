"""mmcv 1.x's IPU runners: importable; mmpar does not ship Graphcore IPU support."""

from __future__ import annotations

from typing import Any

from .._unsupported import backend_error

__all__ = ["IPUBaseRunner", "IPUEpochBasedRunner", "IPUIterBasedRunner"]

_INSTEAD = "mmpar.runner.EpochBasedRunner or IterBasedRunner (CUDA or the CPU)"


class IPUBaseRunner:
    """mmcv's IPU runner base; constructing it raises ``BackendNotSupportedError``.

    Not registered in ``RUNNERS``: as in mmcv without poptorch, ``type='IPUEpochBasedRunner'``
    in a config is unknown to the registry.

    Args:
        model: As mmcv's.
        options_cfg: As mmcv's.
        modules_to_record: As mmcv's.
        ipu_model_cfg: As mmcv's.
        fp16_cfg: As mmcv's.
        batch_processor: As mmcv's.
        **kwargs: As mmcv's.
    """

    def __init__(
        self,
        model: Any,
        options_cfg: Any = None,
        modules_to_record: Any = None,
        ipu_model_cfg: Any = None,
        fp16_cfg: Any = None,
        batch_processor: Any = None,
        **kwargs: Any,
    ) -> None:
        raise backend_error(type(self).__name__, "ipu", _INSTEAD)


class IPUEpochBasedRunner(IPUBaseRunner):
    """mmcv's epoch-based IPU runner; constructing it raises ``BackendNotSupportedError``."""


class IPUIterBasedRunner(IPUBaseRunner):
    """mmcv's iteration-based IPU runner; constructing it raises ``BackendNotSupportedError``."""
