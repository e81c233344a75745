"""Small runner helpers: host/time strings, objects from dicts, seeding, RNG state for resume."""

from __future__ import annotations

import builtins
import importlib
import random
import socket
import time
from getpass import getuser
from types import ModuleType
from typing import Any, cast

import numpy as np
import torch

from mmpar.utils.compat_errors import MessageKeyError
from mmpar.utils.dist import get_dist_info
from mmpar.utils.misc import set_random_seed as seed_all_rngs


def get_host_info() -> str:
    """Return ``'user@hostname'`` (parts that cannot be read are left out)."""
    host = ""
    try:
        host = f"{getuser()}@{socket.gethostname()}"
    except Exception:  # no passwd entry in some containers: keep going without it
        host = socket.gethostname()
    return host


def get_time_str() -> str:
    """Return the local time as ``YYYYmmdd_HHMMSS`` (used for log and run names)."""
    return time.strftime("%Y%m%d_%H%M%S", time.localtime())


class ObjFromDictError(TypeError, AssertionError):
    """``obj_from_dict`` got no dict, or a ``default_args`` that is not a dict.

    A TypeError, and an AssertionError as mmcv's checks were ``assert`` statements.
    """


class MissingTypeError(MessageKeyError, AssertionError):
    """``obj_from_dict``'s dict has no ``type`` key, or its ``type`` names nothing."""


def _resolve_type(name: str, parent: ModuleType | None) -> Any:
    """The object ``name`` refers to: an attribute of ``parent``, a builtin or a dotted path."""
    if parent is not None:
        if not hasattr(parent, name):
            raise MissingTypeError(
                f"obj_from_dict: module {getattr(parent, '__name__', parent)!r} has no "
                f'attribute "{name}"'
            )
        return getattr(parent, name)
    if "." not in name:
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise MissingTypeError(
            f'obj_from_dict: "{name}" is not a builtin; pass parent=<module> or a dotted path '
            'such as "torch.optim.SGD"'
        )
    module_name, _, attr = name.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise MissingTypeError(f'obj_from_dict: cannot import "{module_name}": {err}') from err
    if not hasattr(module, attr):
        raise MissingTypeError(f'obj_from_dict: module "{module_name}" has no attribute "{attr}"')
    return getattr(module, attr)


def obj_from_dict(
    info: dict, parent: ModuleType | None = None, default_args: dict | None = None
) -> Any:
    """Build an object from a dict: ``info['type']`` called with the other keys (mmcv 1.x API).

    ``obj_from_dict(dict(type='SGD', lr=0.1), torch.optim, dict(params=model.parameters()))``
    is ``torch.optim.SGD(params=..., lr=0.1)``. New code should prefer a ``Registry``.

    Args:
        info: ``type`` (a class or callable, or its name) plus keyword arguments.
        parent: Module a string ``type`` is looked up in. Without it, a string names a builtin
            (``'dict'``) or a dotted path (``'torch.optim.SGD'``).
        default_args: Keyword arguments used where ``info`` does not set them.

    Returns:
        The object built.

    Raises:
        TypeError: ``info``/``default_args`` is not a dict, or ``type`` is neither a string
            nor a class/callable (also an AssertionError, as in mmcv).
        KeyError: ``info`` has no ``type``, or the name is not found.
    """
    if not isinstance(info, dict):
        raise ObjFromDictError(f"obj_from_dict: info must be a dict, got {type(info).__name__}")
    if "type" not in info:
        raise MissingTypeError(
            f'obj_from_dict: info needs a "type" key naming what to build, got keys {sorted(info)}'
        )
    if default_args is not None and not isinstance(default_args, dict):
        raise ObjFromDictError(
            f"obj_from_dict: default_args must be a dict or None, got {type(default_args).__name__}"
        )
    args = dict(info)
    obj_type = args.pop("type")
    if isinstance(obj_type, str):
        obj_type = _resolve_type(obj_type, parent)
    elif not callable(obj_type):
        raise ObjFromDictError(
            f"obj_from_dict: type must be a str or a class, got {type(obj_type).__name__}"
        )
    for name, value in (default_args or {}).items():
        args.setdefault(name, value)
    return obj_type(**args)


def set_random_seed(seed: int, deterministic: bool = False, use_rank_shift: bool = False) -> int:
    """Seed python, numpy and torch (all devices), mmcv 1.x compatible.

    :func:`mmpar.utils.set_random_seed` does the seeding; this adds mmcv's rank shift and keeps
    mmcv's meaning of ``deterministic``.

    Args:
        seed: The seed, an int in ``[0, 2**32)`` after the rank shift.
        deterministic: Also ask cuDNN for deterministic kernels (slower). As in mmcv, this does
            not turn on ``torch.use_deterministic_algorithms`` (``mmpar.utils.set_random_seed``
            does), so an mmcv script run with ``--deterministic`` does not start raising on
            ops that have no deterministic implementation.
        use_rank_shift: Add the distributed rank to the seed so ranks draw different numbers.

    Returns:
        The seed actually used.

    Raises:
        TypeError: ``seed`` is not an int.
        ValueError: ``seed`` is out of range.
    """
    if use_rank_shift:
        seed += get_dist_info()[0]
    seed_all_rngs(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    return seed


def get_rng_state() -> dict:
    """Capture python, numpy, torch and CUDA RNG states as ``weights_only``-loadable data.

    numpy's state is stored as a tuple of python values plus an int64 tensor, never as numpy
    objects, so ``torch.load(weights_only=True)`` can read it back. Python's 625-word state is
    an int64 tensor too: as 625 python ints it made every checkpoint save ~1 ms slower.
    """
    # numpy's stubs type the default (legacy) form as a dict; it is the 5-tuple.
    np_state = cast(tuple, np.random.get_state())
    py_version, py_words, py_gauss = random.getstate()
    state: dict[str, Any] = {
        "python": (py_version, torch.tensor(py_words, dtype=torch.int64), py_gauss),
        "numpy": {
            "kind": np_state[0],
            "keys": torch.from_numpy(np_state[1].astype(np.int64)),
            "pos": int(np_state[2]),
            "has_gauss": int(np_state[3]),
            "cached_gaussian": float(np_state[4]),
        },
        "torch": torch.get_rng_state(),
    }
    # Only read CUDA states when CUDA is already in use; reading would initialise it.
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    """Restore the RNG states captured by :func:`get_rng_state`.

    Raises:
        KeyError: ``state`` lacks one of the python/numpy/torch entries.
    """
    missing = [k for k in ("python", "numpy", "torch") if k not in state]
    if missing:
        raise KeyError(f"RNG state is missing {missing}; it must come from get_rng_state()")
    py = state["python"]
    # Older checkpoints hold the words as a tuple (a list after weights_only loading).
    words = py[1].tolist() if isinstance(py[1], torch.Tensor) else py[1]
    random.setstate((py[0], tuple(words), py[2]))
    npy = state["numpy"]
    np.random.set_state(
        (
            npy["kind"],
            npy["keys"].numpy().astype(np.uint32),
            npy["pos"],
            npy["has_gauss"],
            npy["cached_gaussian"],
        )
    )
    torch.set_rng_state(state["torch"])
    cuda: list | None = state.get("cuda")
    if cuda is not None and torch.cuda.is_available():
        if len(cuda) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(cuda)
        else:  # different device count: restore what maps one to one
            for i, s in enumerate(cuda[: torch.cuda.device_count()]):
                torch.cuda.set_rng_state(s, i)
