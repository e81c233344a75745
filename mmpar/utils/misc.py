"""Small helpers: type checks on sequences, casts, tuples, seeding (mmcv 1.x ``misc``).

The decorators of mmcv's ``misc`` (``requires_package``, ``deprecated_api_warning``, ...) live
in :mod:`mmpar.utils.decorators` and ``import_modules_from_strings`` in
:mod:`mmpar.utils.plugins`; both are re-exported here under mmcv's path.
"""

from __future__ import annotations

import importlib
import itertools
import os
import random
from collections import abc
from typing import Any, Callable

from .compat_errors import CheckTypeError, CheckValueError
from .decorators import (
    check_prerequisites,
    deprecated_api_warning,
    requires_executable,
    requires_package,
)
from .plugins import import_modules_from_strings


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
        # mmcv 1.x asserted these: the error is also an AssertionError.
        raise CheckValueError(f"{owner}: {name} must be {wanted}, got {value!r}")
    return value


def to_ntuple(n: int) -> Callable[[Any], Any]:
    """Return a function that repeats a non-iterable value ``n`` times into a tuple.

    An iterable (a list, a tuple, a str, ...) is returned unchanged, as in mmcv and torch.

    Args:
        n: The tuple length.

    Returns:
        The function; ``to_ntuple(2)(3) == (3, 3)``.
    """

    def parse(x: Any) -> Any:
        if isinstance(x, abc.Iterable):
            return x
        return tuple(itertools.repeat(x, n))

    parse.__name__ = f"to_{n}tuple"
    return parse


to_1tuple = to_ntuple(1)
to_2tuple = to_ntuple(2)
to_3tuple = to_ntuple(3)
to_4tuple = to_ntuple(4)


def is_str(x: Any) -> bool:
    """Return whether ``x`` is a ``str`` (kept for mmcv 1.x code; same as ``isinstance``)."""
    return isinstance(x, str)


def iter_cast(inputs: abc.Iterable, dst_type: type, return_type: type | None = None) -> Any:
    """Convert every element of ``inputs`` with ``dst_type``.

    Args:
        inputs: The elements.
        dst_type: The type to convert each element to (called on it).
        return_type: A container type to collect the results into (``list``, ``tuple``);
            None returns a lazy iterator.

    Returns:
        An iterator over the converted elements, or a ``return_type`` holding them.

    Raises:
        TypeError: ``inputs`` is not iterable or ``dst_type`` is not a type.
    """
    if not isinstance(inputs, abc.Iterable):
        raise TypeError(f"iter_cast: inputs must be iterable, but got {type(inputs).__name__}")
    if not isinstance(dst_type, type):
        raise TypeError(f"iter_cast: dst_type must be a type, but got {dst_type!r}")
    converted = map(dst_type, inputs)
    return converted if return_type is None else return_type(converted)


def list_cast(inputs: abc.Iterable, dst_type: type) -> list:
    """Convert every element of ``inputs`` with ``dst_type`` into a list (see :func:`iter_cast`)."""
    return iter_cast(inputs, dst_type, return_type=list)


def tuple_cast(inputs: abc.Iterable, dst_type: type) -> tuple:
    """Convert every element of ``inputs`` with ``dst_type`` into a tuple (:func:`iter_cast`)."""
    return iter_cast(inputs, dst_type, return_type=tuple)


def is_seq_of(seq: Any, expected_type: Any, seq_type: type | None = None) -> bool:
    """Return whether ``seq`` is a sequence whose items are all ``expected_type``.

    Args:
        seq: The object to check.
        expected_type: A type or a tuple of types, as for ``isinstance``.
        seq_type: The container type ``seq`` must be (e.g. ``list``); any
            :class:`collections.abc.Sequence` when None.

    Returns:
        True if ``seq`` is a ``seq_type`` and every item is an ``expected_type``.

    Raises:
        TypeError: ``seq_type`` is given but is not a type (an AssertionError too, as mmcv).
    """
    if seq_type is None:
        seq_type = abc.Sequence
    elif not isinstance(seq_type, type):
        raise CheckTypeError(f"is_seq_of: seq_type must be a type, but got {seq_type!r}")
    return isinstance(seq, seq_type) and all(isinstance(item, expected_type) for item in seq)


def is_list_of(seq: Any, expected_type: Any) -> bool:
    """Return whether ``seq`` is a list whose items are all ``expected_type``."""
    return is_seq_of(seq, expected_type, seq_type=list)


def is_tuple_of(seq: Any, expected_type: Any) -> bool:
    """Return whether ``seq`` is a tuple whose items are all ``expected_type``."""
    return is_seq_of(seq, expected_type, seq_type=tuple)


def slice_list(in_list: abc.Sequence, lens: int | list[int]) -> list:
    """Cut ``in_list`` into consecutive pieces of the given lengths.

    Args:
        in_list: The sequence to cut.
        lens: One length for equal pieces (it must divide ``len(in_list)``), or the list of
            piece lengths (they must add up to ``len(in_list)``).

    Returns:
        The list of pieces (slices of ``in_list``).

    Raises:
        TypeError: ``lens`` is neither an int nor a list.
        ValueError: The lengths do not add up to ``len(in_list)`` (for an int ``lens`` that
            does not divide it, the error is also an AssertionError, as in mmcv).
    """
    if isinstance(lens, int):
        if lens <= 0 or len(in_list) % lens != 0:
            raise CheckValueError(
                f"slice_list: a list of length {len(in_list)} cannot be cut into pieces of "
                f"length {lens}; give a positive divisor of the length or a list of lengths"
            )
        lens = [lens] * (len(in_list) // lens)
    if not isinstance(lens, list):
        raise TypeError(
            f"slice_list: lens must be an int or a list of ints, but got {type(lens).__name__}"
        )
    if sum(lens) != len(in_list):
        raise ValueError(
            f"slice_list: the lengths {lens} add up to {sum(lens)}, but the list has "
            f"{len(in_list)} items"
        )
    starts = itertools.accumulate([0, *lens[:-1]])
    return [in_list[start : start + length] for start, length in zip(starts, lens)]


def concat_list(in_list: abc.Iterable[abc.Iterable]) -> list:
    """Flatten one level: concatenate the items of each inner iterable into one list."""
    return list(itertools.chain.from_iterable(in_list))


def is_method_overridden(method: str, base_class: type, derived_class: Any) -> bool:
    """Return whether ``derived_class`` defines ``method`` differently from ``base_class``.

    Args:
        method: The method's name.
        base_class: The base class (a class, not an instance).
        derived_class: The derived class, or an instance of it.

    Returns:
        True if the attribute differs between the two classes.

    Raises:
        TypeError: ``base_class`` is not a class (also an AssertionError, as in mmcv).
    """
    if not isinstance(base_class, type):
        raise CheckTypeError(
            f"is_method_overridden: base_class must be a class, but got an instance of "
            f"{type(base_class).__name__}; pass the class itself"
        )
    if not isinstance(derived_class, type):
        derived_class = type(derived_class)
    return getattr(derived_class, method) != getattr(base_class, method)


def has_method(obj: object, method: str) -> bool:
    """Return whether ``obj`` has a callable attribute named ``method``."""
    return callable(getattr(obj, method, None))


def import_optional(module: str, needed_by: str, install: str) -> Any:
    """Import a package mmpar does not depend on, or say who needs it and how to get it.

    Args:
        module: Dotted module name, e.g. ``'mlflow.pytorch'``.
        needed_by: What needs it, named in the error (e.g. ``'MlflowLoggerHook'``).
        install: How to install it, e.g. ``'install it with: pip install mlflow'``.

    Returns:
        The module.

    Raises:
        ImportError: ``module`` cannot be imported; chained to the original error.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"{needed_by} needs the Python package '{module}', which is not installed or "
            f"cannot be imported ({err}): {install}"
        ) from err


__all__ = [
    "check_int_arg",
    "check_prerequisites",
    "concat_list",
    "deprecated_api_warning",
    "has_method",
    "import_modules_from_strings",
    "import_optional",
    "is_list_of",
    "is_method_overridden",
    "is_seq_of",
    "is_str",
    "is_tuple_of",
    "iter_cast",
    "list_cast",
    "requires_executable",
    "requires_package",
    "set_random_seed",
    "slice_list",
    "to_1tuple",
    "to_2tuple",
    "to_3tuple",
    "to_4tuple",
    "to_ntuple",
    "tuple_cast",
]
