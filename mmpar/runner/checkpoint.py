"""Save and load checkpoints (mmcv 1.x layout), atomically and without unpickling code.

Layout: ``{'meta': ..., 'state_dict': ..., 'optimizer': ..., 'mmpar_state': ...}``. The first
three keys are mmcv 1.x's; ``mmpar_state`` holds the exact-resume state (see
``docs/internals.md``) and is ignored by mmcv.

This module is the checkpoint format and mmcv's import path; the parts live beside it:
``atomic_file`` (write-then-rename, ``latest.pth``), ``safe_load`` (``torch.load`` without
running code, read errors) and ``model_state`` (state dict from/into a model).
"""

from __future__ import annotations

import inspect
import logging
import os
import re
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Union

import torch
import torch.nn as nn
from torch.optim import Optimizer

from mmpar.parallel import is_module_wrapper as is_module_wrapper  # importable here, as in mmcv
from mmpar.version import __version__

from .atomic_file import atomic_path
from .atomic_file import update_latest_link as update_latest_link
from .model_state import (
    CheckpointMismatchError,
    get_state_dict,
    load_state_dict,
    weights_to_cpu,
)
from .safe_load import (
    CheckpointError,
    CorruptCheckpointError,
    UnsafeCheckpointError,
    load_checkpoint_file,
)

__all__ = [
    "CheckpointError",
    "CheckpointMismatchError",
    "CheckpointSaveError",
    "CorruptCheckpointError",
    "UnsafeCheckpointError",
    "find_latest_checkpoint",
    "get_state_dict",
    "load_checkpoint",
    "load_state_dict",
    "save_checkpoint",
    "weights_to_cpu",
]

_logger = logging.getLogger("mmpar")


class CheckpointSaveError(OSError):
    """A checkpoint could not be written (disk full, file size limit, I/O error, ...).

    Nothing was written under the checkpoint's name: the previous checkpoints are unchanged.
    ``errno`` is the underlying error's, when there is one.
    """


def _os_error_in_chain(err: BaseException) -> OSError | None:
    """The innermost ``OSError`` among ``err`` and its causes/contexts, or None."""
    found = None
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, OSError):
            found = err
        err = err.__cause__ or err.__context__
    return found


def save_checkpoint(
    model: nn.Module,
    filename: str,
    optimizer: Union[Optimizer, dict, None] = None,
    meta: dict | None = None,
    extra_state: dict | None = None,
) -> None:
    """Save a checkpoint atomically: readers see the old file or the complete new one.

    Args:
        model: The model; module wrappers are unwrapped, tensors are saved on the CPU.
        filename: Destination path (its directory is created).
        optimizer: An optimizer or a dict of optimizers whose state is saved too.
        meta: Metadata (epoch, iter, ...); ``mmpar_version`` and ``time`` are added.
        extra_state: Exact-resume state stored under ``mmpar_state``.

    Raises:
        TypeError: ``meta`` is not a dict or ``optimizer`` has the wrong type.
        CheckpointSaveError: Writing failed (disk full, file too large, ...); the message
            names ``filename`` and the cause, and no file was left under that name.
    """
    if meta is None:
        meta = {}
    elif not isinstance(meta, dict):
        raise TypeError(f"meta must be a dict or None, but got {type(meta).__name__}")
    meta = dict(meta, mmpar_version=__version__, time=time.asctime())
    checkpoint: dict[str, Any] = {"meta": meta, "state_dict": get_state_dict(model)}
    if isinstance(optimizer, Optimizer):
        checkpoint["optimizer"] = weights_to_cpu(optimizer.state_dict())
    elif isinstance(optimizer, dict):
        checkpoint["optimizer"] = {k: weights_to_cpu(o.state_dict()) for k, o in optimizer.items()}
    elif optimizer is not None:
        raise TypeError(
            f"optimizer must be an Optimizer, a dict of them or None, got {type(optimizer)}"
        )
    if extra_state is not None:
        checkpoint["mmpar_state"] = weights_to_cpu(extra_state)
    with atomic_path(filename) as tmp:  # removes the temporary file if this fails
        try:
            with open(tmp, "wb") as f:
                torch.save(checkpoint, f)
                f.flush()
                os.fsync(f.fileno())
        except (OSError, RuntimeError) as err:
            # torch reports a failed write as e.g. "RuntimeError: [enforce fail at
            # inline_container.cc] unexpected pos", without the path or the OS error.
            cause = _os_error_in_chain(err) or err
            # First line only: torch may append a C++ stack trace, and tools print this
            # message as one line.
            reason = (str(cause).splitlines() or [type(cause).__name__])[0]
            save_error = CheckpointSaveError(
                f'could not save checkpoint "{filename}": {reason}. Nothing was written under '
                "that name; the previous checkpoints are unchanged"
            )
            save_error.errno = getattr(cause, "errno", None)
            raise save_error from err


def _torchvision_url(name: str) -> str:
    from torchvision.models import get_model_weights

    try:
        weights = get_model_weights(name)
    except (ValueError, KeyError) as err:
        raise ValueError(
            f'"torchvision://{name}": torchvision has no model named "{name}"'
        ) from err
    # mmcv 1.x mapped these names to torchvision's original ImageNet weights.
    chosen = getattr(weights, "IMAGENET1K_V1", None) or weights.DEFAULT
    return chosen.url


def _load_checkpoint(
    filename: str,
    map_location: Any = "cpu",
    logger: logging.Logger | None = None,
    weights_only: bool = True,
) -> Any:
    """Load a checkpoint object from a local path or ``torchvision://<model>``."""
    if not isinstance(filename, (str, os.PathLike)):
        raise TypeError(f"filename must be a path or URL string, got {type(filename).__name__}")
    filename = os.fspath(filename)
    if filename.startswith("torchvision://"):
        url = _torchvision_url(filename[len("torchvision://") :])
        (logger or _logger).info(f"load {filename} from {url}")
        hub_kwargs: dict[str, Any] = {"map_location": map_location}
        if "weights_only" in inspect.signature(torch.hub.load_state_dict_from_url).parameters:
            hub_kwargs["weights_only"] = weights_only
        return torch.hub.load_state_dict_from_url(url, **hub_kwargs)
    if "://" in filename:
        raise ValueError(
            f'unsupported checkpoint location "{filename}": use a local path or '
            "torchvision://<model name>"
        )
    return load_checkpoint_file(filename, map_location, weights_only)


def load_checkpoint(
    model: nn.Module,
    filename: str,
    map_location: Any = "cpu",
    strict: bool = False,
    logger: logging.Logger | None = None,
    revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
    weights_only: bool = True,
) -> dict:
    """Load a checkpoint's weights into ``model`` and return the checkpoint dict.

    Args:
        model: Target model (module wrappers are unwrapped).
        filename: Local path or ``torchvision://<model>`` (downloads only when asked).
        map_location: Passed to ``torch.load``.
        strict: Raise RuntimeError on missing/unexpected/mis-shaped keys instead of warning.
        logger: Where to report mismatches.
        revise_keys: ``(pattern, replacement)`` regexes applied to every key in order; the
            default strips the ``module.`` prefix of checkpoints saved from wrapped models.
        weights_only: Unpickle only tensors and plain containers (safe). Set False only for
            trusted files that hold other Python objects.

    Returns:
        The loaded checkpoint (a dict). Checkpoints whose top level is the state dict itself
        are accepted too.

    Raises:
        FileNotFoundError: The file does not exist.
        CorruptCheckpointError: The file is truncated or not a checkpoint.
        UnsafeCheckpointError: ``weights_only`` refused the file's contents.
        CheckpointMismatchError: ``strict`` and the keys do not match, or no tensor fits the
            model (see :func:`load_state_dict`); the message names the file.
    """
    checkpoint = _load_checkpoint(filename, map_location, logger, weights_only)
    if not isinstance(checkpoint, dict):
        raise CorruptCheckpointError(
            f'"{filename}" holds a {type(checkpoint).__name__}, not a dict with a state_dict'
        )
    state_dict = checkpoint.get("state_dict", checkpoint)
    metadata = getattr(state_dict, "_metadata", None)
    for pattern, replacement in revise_keys:
        state_dict = OrderedDict(
            (re.sub(pattern, replacement, k), v) for k, v in state_dict.items()
        )
    if metadata is not None:
        state_dict._metadata = metadata  # type: ignore[attr-defined]
    try:
        load_state_dict(model, state_dict, strict, logger)
    except CheckpointMismatchError as err:
        raise CheckpointMismatchError(f'"{filename}" does not fit the model: {err}') from err
    return checkpoint


def checkpoint_iter(checkpoint: dict) -> int:
    """Return the iteration a checkpoint was saved at (``mmpar_state`` first, then ``meta``)."""
    state = checkpoint.get("mmpar_state") or {}
    if "iter" in state:
        return int(state["iter"])
    return int((checkpoint.get("meta") or {}).get("iter", -1))


def find_latest_checkpoint(
    work_dir: str, suffix: str = "pth", logger: logging.Logger | None = None
) -> str | None:
    """Return the newest checkpoint in ``work_dir`` that loads, or None if there is none.

    Candidates are ``*.<suffix>`` files, ranked by the iteration saved inside them, then by
    modification time. Truncated or corrupt files are skipped with a warning, so a crash
    during a save never blocks auto-resume.
    """
    if not os.path.isdir(work_dir):
        return None
    seen = set()
    ranked = []
    for name in sorted(os.listdir(work_dir)):
        path = os.path.join(work_dir, name)
        if not name.endswith(f".{suffix}") or name.startswith(".") or not os.path.isfile(path):
            continue
        real = os.path.realpath(path)
        if real in seen:  # latest.pth symlink and its target
            continue
        seen.add(real)
        try:
            try:  # mmap: rank by reading only the small parts we need
                ckpt = load_checkpoint_file(path, "cpu", weights_only=True, mmap=True)
            except CorruptCheckpointError:  # legacy (non-zip) files cannot be mmapped
                ckpt = load_checkpoint_file(path, "cpu", weights_only=True)
            if not isinstance(ckpt, dict):
                raise CorruptCheckpointError(f'"{path}" holds no checkpoint dict')
        except CheckpointError as err:
            (logger or _logger).warning(f"auto-resume: skipping {path}: {err}")
            continue
        ranked.append((checkpoint_iter(ckpt), os.path.getmtime(real), path))
    if not ranked:
        return None
    return max(ranked)[2]
