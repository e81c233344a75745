"""mmcv 1.x's parrots JIT switches; under torch both decorators leave functions as they are.

mmcv compiled functions with parrots' JIT only on parrots with ``PARROTS_JIT_OPTION=ON``;
mmpar runs on torch, where mmcv's ``jit`` and ``skip_no_elena`` were pass-through too.
"""

from __future__ import annotations

import os
from typing import Any, Callable

#: The ``PARROTS_JIT_OPTION`` environment variable (None when unset), as mmcv read it.
parrots_jit_option: str | None = os.getenv("PARROTS_JIT_OPTION")


def jit(
    func: Callable | None = None,
    check_input: Any = None,
    full_shape: bool = True,
    derivate: bool = False,
    coderize: bool = False,
    optimize: bool = False,
) -> Callable:
    """Leave ``func`` unchanged (parrots' JIT does not exist under torch).

    Usable bare (``@jit``) or with arguments (``@jit(coderize=True)``); the arguments are
    accepted for mmcv code and ignored.

    Args:
        func: The function, when used bare.
        check_input: Ignored.
        full_shape: Ignored.
        derivate: Ignored.
        coderize: Ignored.
        optimize: Ignored.

    Returns:
        ``func``, or a decorator that returns the function it is given.
    """
    if func is None:
        return lambda f: f
    return func


def skip_no_elena(func: Callable) -> Callable:
    """Return ``func`` as it is (it skipped parrots tests without elena; never under torch)."""
    return func


__all__ = ["jit", "parrots_jit_option", "skip_no_elena"]


def __getattr__(name: str) -> Any:
    # mmcv's module imports TORCH_VERSION; served lazily so importing this stays torch-free.
    if name == "TORCH_VERSION":
        from .parrots_wrapper import TORCH_VERSION

        return TORCH_VERSION
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
