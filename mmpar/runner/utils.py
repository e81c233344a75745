"""Small runner helpers: host/time strings, seeding and RNG state capture for exact resume."""

from __future__ import annotations

import random
import socket
import time
from getpass import getuser
from typing import Any

import numpy as np
import torch

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
    np_state = np.random.get_state()
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
