"""Seeding for reproducible runs, and the integer-argument check constructors share."""

from __future__ import annotations

import os
import random
from typing import Any


def set_random_seed(seed: int, deterministic: bool = False) -> None:
    """Seed Python's, NumPy's and torch's RNGs (and every CUDA device's, if any).

    Args:
        seed: The seed, an int in ``[0, 2**32)`` (NumPy's range).
        deterministic: Also make torch choose deterministic algorithms: enables
            ``torch.use_deterministic_algorithms(True)``, sets ``cudnn.deterministic=True``
            and ``cudnn.benchmark=False``, and sets ``CUBLAS_WORKSPACE_CONFIG`` (needed by
            deterministic cuBLAS) unless already set. Slower, and ops without a
            deterministic implementation then raise.

    Raises:
        TypeError: ``seed`` is not an int.
        ValueError: ``seed`` is out of range.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, but got {type(seed).__name__}: {seed!r}")
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be in [0, 2**32), but got {seed}")
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device (lazily if CUDA is not yet up)
    os.environ["PYTHONHASHSEED"] = str(seed)  # inherited by worker subprocesses
    if deterministic:
        # Must be set before cuBLAS is first used; harmless on CPU.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def check_int_arg(value: Any, name: str, owner: str, minimum: int = 1) -> int:
    """Return ``value`` if it is an int ``>= minimum`` (a constructor argument check).

    Args:
        value: The argument.
        name: The argument's name, for the message.
        owner: Who takes it (a class name), for the message.
        minimum: The smallest value allowed; 1 reads "a positive int", 0 "a non-negative int".

    Returns:
        ``value``.

    Raises:
        ValueError: ``value`` is not an int or is smaller than ``minimum``.
    """
    if not isinstance(value, int) or value < minimum:
        wanted = {1: "a positive int", 0: "a non-negative int"}.get(minimum, f"an int >= {minimum}")
        raise ValueError(f"{owner}: {name} must be {wanted}, got {value!r}")
    return value
