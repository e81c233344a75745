"""The one error every vendor backend mmpar does not ship (NPU, MLU, IPU) raises when used.

The names of ``mmcv.device.npu``/``mlu``/``ipu`` import everywhere, so code that only mentions
them (``if device == 'npu': from mmcv.device.npu import NPUDataParallel``) keeps working; using
one raises :class:`BackendNotSupportedError` saying what is missing and what to use instead.
"""

from __future__ import annotations

import importlib.util
from typing import Any

__all__ = ["BACKENDS", "BackendNotSupportedError", "UnsupportedWrapper", "backend_error"]

#: backend key -> (what it is, the vendor library mmcv needed for it)
BACKENDS: dict[str, tuple[str, str]] = {
    "npu": ("Huawei Ascend NPU", "torch_npu"),
    "mlu": ("Cambricon MLU", "torch_mlu"),
    "ipu": ("Graphcore IPU", "poptorch"),
}


class BackendNotSupportedError(RuntimeError):
    """A vendor device backend that mmpar does not ship support for was used."""


def backend_error(name: str, backend: str, instead: str) -> BackendNotSupportedError:
    """Return the error for using ``name`` of the ``backend`` subpackage.

    Args:
        name: The mmcv name that was used (``'NPUDataParallel'``).
        backend: A key of :data:`BACKENDS`.
        instead: What to use instead, as a phrase.

    Returns:
        The error to raise.
    """
    what, library = BACKENDS[backend]
    installed = importlib.util.find_spec(library) is not None
    missing = (
        f"{library} is installed, but mmpar has no {backend.upper()} code path"
        if installed
        else f"it needs the vendor library {library}, which is not installed"
    )
    return BackendNotSupportedError(
        f"{name} cannot be used: mmpar does not ship {what} support ({missing}). "
        f"Use {instead} instead."
    )


class UnsupportedWrapper:
    """Mixin of the NPU/MLU model wrappers: constructing one raises :func:`backend_error`.

    A wrapper lists this before its mmpar parent (``class NPUDataParallel(UnsupportedWrapper,
    MMDataParallel)``), so ``isinstance``/``is_module_wrapper`` answer as in mmcv, and sets the
    backend key and what to use instead.
    """

    unsupported_backend: str = ""
    use_instead: str = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise backend_error(type(self).__name__, self.unsupported_backend, self.use_instead)
