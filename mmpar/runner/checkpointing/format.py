"""The checkpoint format: save and load checkpoints (mmcv 1.x layout), atomically and safely.

Layout: ``{'meta': ..., 'state_dict': ..., 'optimizer': ..., 'mmpar_state': ...}``. The first
three keys are mmcv 1.x's; ``mmpar_state`` holds the exact-resume state (see
``docs/internals.md``) and is ignored by mmcv.

The parts live beside this module: ``atomic_file`` (write-then-rename), ``safe_load``
(``torch.load`` without running code, read errors), ``model_state`` (state dict from/into a
model), ``sources`` (URL schemes), ``fsdp_state`` and ``sharded`` (sharded models and
directories). mmcv's import path for these functions is :mod:`mmpar.runner.checkpoint`.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Union

import torch
import torch.nn as nn
from torch.optim import Optimizer

from mmpar import version
from mmpar.parallel.utils import ModelLayout, model_layout
from mmpar.utils.compat_errors import MessageKeyError
from mmpar.utils.dist import get_dist_info
from mmpar.version import __version__

from .atomic_file import atomic_path
from .fsdp_state import broadcast_buffers, gather_full_model_state, gather_full_optimizer_state
from .model_state import CheckpointMismatchError, load_into, state_dict_of, weights_to_cpu
from .safe_load import CorruptCheckpointError, load_checkpoint_file
from .sharded import is_sharded_checkpoint, load_sharded_checkpoint
from .sources import CheckpointLoader, MapLocation

__all__ = [
    "CheckpointSaveError",
    "MissingPrefixError",
    "_load_checkpoint",
    "_load_checkpoint_with_prefix",
    "load_checkpoint",
    "load_local_checkpoint",
    "load_weights",
    "save_checkpoint",
    "state_under_prefix",
    "write_checkpoint",
]


class CheckpointSaveError(OSError):
    """A checkpoint could not be written (disk full, file size limit, I/O error, ...).

    Nothing was written under the checkpoint's name: the previous checkpoints are unchanged.
    ``errno`` is the underlying error's, when there is one.
    """


def _os_error_in_chain(err: BaseException) -> OSError | None:
    """The innermost ``OSError`` among ``err`` and its causes/contexts, or None."""
    found = None
    seen = set()
    link: BaseException | None = err
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, OSError):
            found = link
        link = link.__cause__ or link.__context__
    return found


def _check_local_destination(filename: str, file_client_args: dict | None) -> None:
    backend = (file_client_args or {}).get("backend", "disk")
    if backend != "disk" or "://" in os.fspath(filename):
        raise NotImplementedError(
            f'save_checkpoint writes local files only; "{filename}" with backend {backend!r} '
            "cannot be written. Save to a local path and upload the file with your storage tool"
        )


def save_checkpoint(
    model: nn.Module,
    filename: str,
    optimizer: Union[Optimizer, dict, None] = None,
    meta: dict | None = None,
    file_client_args: dict | None = None,
    extra_state: dict | None = None,
) -> None:
    """Save a checkpoint atomically: readers see the old file or the complete new one.

    A model sharded by ``MMFullyShardedDataParallel`` makes this collective: every rank must
    call it; the full state dict and optimizer state are gathered onto rank 0, which writes
    the file (the other ranks return once the gather is done). Rank 0's buffers (BatchNorm
    statistics) are first copied to every rank, so all continue with what the file holds.

    Args:
        model: The model; module wrappers are unwrapped, tensors are saved on the CPU.
        filename: Destination path (its directory is created).
        optimizer: An optimizer or a dict of optimizers whose state is saved too.
        meta: Metadata (epoch, iter, ...); as in mmcv, ``mmcv_version``, ``time`` and the
            model's ``CLASSES`` (when not None) are added, and ``mmpar_version``. The
            caller's dict is not changed (mmcv updates it in place).
        file_client_args: mmcv's storage-backend choice; only local files are written here,
            so it may be None or ``dict(backend='disk')``.
        extra_state: Exact-resume state stored under ``mmpar_state``.

    Raises:
        TypeError: ``meta`` is not a dict or ``optimizer`` has the wrong type.
        NotImplementedError: ``file_client_args`` names a remote backend, or ``filename`` is
            a ``pavi://`` or other URL.
        CheckpointSaveError: Writing failed (disk full, file too large, ...); the message
            names ``filename`` and the cause, and no file was left under that name.
    """
    _check_local_destination(filename, file_client_args)
    write_checkpoint(model_layout(model), filename, optimizer, meta, extra_state)


def write_checkpoint(
    layout: ModelLayout,
    filename: str,
    optimizer: Union[Optimizer, dict, None] = None,
    meta: dict | None = None,
    extra_state: dict | None = None,
) -> None:
    """:func:`save_checkpoint` of a model unwrapped already, to a local ``filename``.

    ``layout`` is :func:`~mmpar.parallel.utils.model_layout` of the model: a runner's
    Checkpointer keeps it, so a save does not unwrap the model again. Raises as
    ``save_checkpoint`` does.
    """
    if meta is None:
        meta = {}
    elif not isinstance(meta, dict):
        raise TypeError(f"meta must be a dict or None, but got {type(meta).__name__}")
    # mmcv's keys (readers such as mmdet's init_detector use meta['CLASSES']), plus ours.
    meta = dict(
        meta, mmcv_version=version.mmcv_version, mmpar_version=__version__, time=time.asctime()
    )
    classes = getattr(layout.bare, "CLASSES", None)
    if classes is not None:
        meta["CLASSES"] = classes
    if optimizer is not None and not isinstance(optimizer, (Optimizer, dict)):
        raise TypeError(
            f"optimizer must be an Optimizer, a dict of them or None, got {type(optimizer)}"
        )
    if layout.sharded:
        checkpoint = _gather_sharded(layout.model, optimizer, meta)  # every rank joins
        if not checkpoint:
            return  # not rank 0: rank 0 writes
    else:
        checkpoint = {"meta": meta, "state_dict": state_dict_of(layout)}
        if isinstance(optimizer, Optimizer):
            checkpoint["optimizer"] = weights_to_cpu(optimizer.state_dict())
        elif isinstance(optimizer, dict):
            checkpoint["optimizer"] = {
                k: weights_to_cpu(o.state_dict()) for k, o in optimizer.items()
            }
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


def _gather_sharded(model: nn.Module, optimizer: Union[Optimizer, dict, None], meta: dict) -> dict:
    """A sharded model's checkpoint dict, gathered onto rank 0 (collective; {} elsewhere)."""
    broadcast_buffers(model)  # the ranks continue with the buffers the checkpoint holds
    state_dict = gather_full_model_state(model)
    optimizer_state = None if optimizer is None else gather_full_optimizer_state(model, optimizer)
    if get_dist_info()[0] != 0:
        return {}
    checkpoint: dict[str, Any] = {"meta": meta, "state_dict": state_dict}
    if optimizer_state is not None:
        checkpoint["optimizer"] = optimizer_state
    return checkpoint


def _load_checkpoint(
    filename: str,
    map_location: MapLocation = "cpu",
    logger: logging.Logger | None = None,
    weights_only: bool = True,
) -> Any:
    """Load a checkpoint object from a path or URL scheme (see :class:`CheckpointLoader`).

    Args:
        filename: A local path, ``http(s)://``, ``torchvision://``, ``open-mmlab://``,
            ``mmcls://``, ... (any prefix registered with ``CheckpointLoader.register_scheme``).
        map_location: Passed to ``torch.load``.
        logger: Where the "load checkpoint from ..." line goes.
        weights_only: Refuse files that need arbitrary Python objects.

    Returns:
        What the file holds: a checkpoint dict or a bare state dict.
    """
    return CheckpointLoader.load_checkpoint(filename, map_location, logger, weights_only)


class MissingPrefixError(MessageKeyError, AssertionError):
    """No key of a checkpoint starts with the prefix asked for (AssertionError in mmcv)."""


def state_under_prefix(state_dict: Mapping, prefix: str) -> dict:
    """The entries of ``state_dict`` whose key starts with ``prefix`` (e.g. ``'backbone.'``).

    The prefix is removed from the keys. Returns an empty dict when no key starts with it;
    callers say what that means.
    """
    return {k[len(prefix) :]: v for k, v in state_dict.items() if k.startswith(prefix)}


def _load_checkpoint_with_prefix(
    prefix: str, filename: str, map_location: MapLocation = "cpu", weights_only: bool = True
) -> dict:
    """Return the part of a checkpoint's state dict under ``prefix``, with the prefix removed.

    ``_load_checkpoint_with_prefix('backbone', f)`` turns ``backbone.conv.weight`` into
    ``conv.weight`` and drops keys outside ``backbone.``.

    Raises:
        MissingPrefixError: No key starts with ``prefix`` (a KeyError and an AssertionError).
    """
    checkpoint = _load_checkpoint(filename, map_location, weights_only=weights_only)
    state_dict = checkpoint.get("state_dict", checkpoint)
    prefix = prefix if prefix.endswith(".") else prefix + "."
    part = state_under_prefix(state_dict, prefix)
    if not part:
        roots = sorted({k.split(".", 1)[0] for k in state_dict})
        raise MissingPrefixError(
            f'"{filename}" has no weights under "{prefix}"; its top-level names are {roots[:10]}'
        )
    return part


def load_checkpoint(
    model: nn.Module,
    filename: str,
    map_location: MapLocation = "cpu",
    strict: bool = False,
    logger: logging.Logger | None = None,
    revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
    weights_only: bool = True,
    *,
    optimizer: Union[Optimizer, dict, None] = None,
) -> dict:
    """Load a checkpoint's weights into ``model`` and return the checkpoint dict.

    Args:
        model: Target model (module wrappers are unwrapped).
        filename: A local path or URL: ``http(s)://``, ``torchvision://<model>``,
            ``open-mmlab://<name>``, ``mmcls://<name>`` or any scheme registered with
            :class:`CheckpointLoader` (downloads are cached in the torch hub directory).
        map_location: Passed to ``torch.load``: ``'cpu'`` (the default: mmcv's is None, which
            fails on CPU-only machines for optimizer state saved on a GPU), ``'cuda:0'``, a
            ``torch.device``, a ``{'cuda:1': 'cuda:0'}`` dict, a ``fn(storage, location)``
            callable, or None to keep the devices the tensors were saved on.
        strict: Raise RuntimeError on missing/unexpected/mis-shaped keys instead of warning.
        logger: Where to report mismatches.
        revise_keys: ``(pattern, replacement)`` regexes applied to every key in order; the
            default strips the ``module.`` prefix of checkpoints saved from wrapped models.
        weights_only: Unpickle only tensors and plain containers (safe). Set False only for
            trusted files that hold other Python objects.
        optimizer: (mmpar, keyword only) For a sharded checkpoint, also read this
            optimizer's (or dict of optimizers') state, in the same pass as the weights. A
            file's optimizer state is returned under ``'optimizer'`` for the caller to load.

    A sharded checkpoint (a directory, see :mod:`mmpar.runner.checkpointing.sharded`) is read
    with ``torch.distributed.checkpoint``: collective under ``torch.distributed``, every
    shard in one process; ``map_location`` and ``revise_keys`` do not apply to it.

    Returns:
        The loaded checkpoint (a dict). Checkpoints whose top level is the state dict itself
        are accepted too. For a sharded checkpoint: its header (``meta``, ``mmpar_state``).

    Raises:
        FileNotFoundError: The file does not exist.
        CorruptCheckpointError: The file is truncated or not a checkpoint.
        UnsafeCheckpointError: ``weights_only`` refused the file's contents.
        CheckpointMismatchError: ``strict`` and the keys do not match, or no tensor fits the
            model (see :func:`load_state_dict`); the message names the file.
    """
    if is_sharded_checkpoint(filename):  # a directory: see mmpar.runner.checkpointing.sharded
        return load_sharded_checkpoint(model, filename, optimizer, strict, logger)  # one read
    checkpoint = _load_checkpoint(filename, map_location, logger, weights_only)
    return load_weights(model_layout(model), checkpoint, filename, strict, logger, revise_keys)


def load_local_checkpoint(
    layout: ModelLayout,
    filename: str,
    optimizer: Any,
    logger: logging.Logger,
    map_location: MapLocation = "cpu",
    weights_only: bool = True,
) -> dict:
    """:func:`load_checkpoint` (strict) of a checkpoint on this machine into an unwrapped model.

    For a path known to be local (a runner's auto-resume found it in its ``work_dir``), so no
    URL scheme is looked up: a directory is a sharded checkpoint, anything else a file.
    ``layout``: :func:`~mmpar.parallel.utils.model_layout` of the model. Raises as
    ``load_checkpoint`` does (a directory that is not a complete sharded checkpoint:
    ``CorruptCheckpointError``).
    """
    if os.path.isdir(filename):  # only a directory can be a sharded checkpoint
        return load_sharded_checkpoint(layout.model, filename, optimizer, True, logger)
    logger.info(f"load checkpoint from local path: {filename}")
    checkpoint = load_checkpoint_file(os.path.expanduser(filename), map_location, weights_only)
    return load_weights(layout, checkpoint, filename, strict=True, logger=logger)


def load_weights(
    layout: ModelLayout,
    checkpoint: Any,
    filename: str,
    strict: bool = False,
    logger: logging.Logger | None = None,
    revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
) -> dict:
    """Load a checkpoint object read from ``filename`` into the model; return the checkpoint.

    ``checkpoint`` is a checkpoint dict or a bare state dict; the keys are revised (see
    :func:`load_checkpoint`) and loaded with :func:`load_state_dict`'s report.
    """
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
        state_dict._metadata = metadata
    try:
        load_into(layout, state_dict, strict, logger)
    except CheckpointMismatchError as err:
        raise CheckpointMismatchError(f'"{filename}" does not fit the model: {err}') from err
    return checkpoint
