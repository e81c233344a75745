"""Sharded checkpoints: one ``torch.distributed.checkpoint`` (DCP) directory per checkpoint.

For models too large to gather on one rank (``checkpoint_config = dict(sharded=True)``), each
rank writes its own shards. A sharded checkpoint keeps the name a file would have
(``epoch_5.pth``, ``latest.pth`` links to it) but is a directory::

    epoch_5.pth/
        .metadata, __0_0.distcp, __1_0.distcp, ...   torch's DCP files
        mmpar_header.pth                             meta + mmpar_state (rank 0, torch.save)

The DCP state is ``{'state_dict': model, 'optimizer': optimizer(s)}`` (parameter names as
keys). The header holds what auto-resume reads without touching the shards: ``meta`` (epoch,
iter, ``run_id``, ...), the exact-resume state ``mmpar_state`` and the optimizers' param-group
settings. Atomicity: every rank writes into ``.<name>.tmp.<pid of rank 0>``; when DCP has
finished on every rank, rank 0 adds the header and renames the directory into place. So a
directory under a checkpoint name is complete; a hidden temporary one is ignored by
auto-resume and removed by the next save of the same checkpoint.

Loading unpickles DCP's ``.metadata`` only after checking it holds nothing but DCP's own
metadata classes (the shards are read with ``weights_only``).
"""

from __future__ import annotations

import logging
import os
import pickle
import shutil
import time
from typing import Any, Union

import torch
from torch import nn
from torch.optim import Optimizer

from mmpar.parallel.utils import unwrap_model
from mmpar.utils.dist import broadcast_object, get_dist_info
from mmpar.version import __version__

from .atomic_file import fsync_dir, remove_checkpoint
from .fsdp_state import _each_optimizer, broadcast_buffers, optimizer_state_by_ids
from .model_state import report_mismatch
from .safe_load import CorruptCheckpointError, UnsafeCheckpointError, load_checkpoint_file

__all__ = [
    "HEADER",
    "convert_sharded_checkpoint",
    "is_sharded_checkpoint",
    "load_sharded_checkpoint",
    "read_sharded_header",
    "save_sharded_checkpoint",
]

HEADER = "mmpar_header.pth"
_DCP_METADATA = ".metadata"


def is_sharded_checkpoint(path: str) -> bool:
    """Whether ``path`` is a complete sharded checkpoint (a directory with its header)."""
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, HEADER))


def read_sharded_header(path: str) -> dict:
    """``{'meta': ..., 'mmpar_state': ..., 'optimizer_groups': ...}`` of a sharded checkpoint.

    Raises:
        CorruptCheckpointError: ``path`` is a directory without a header or DCP metadata.
    """
    if not (is_sharded_checkpoint(path) and os.path.isfile(os.path.join(path, _DCP_METADATA))):
        raise CorruptCheckpointError(
            f'"{path}" is a directory but not a complete sharded checkpoint (it needs '
            f"{HEADER} and {_DCP_METADATA})"
        )
    header = load_checkpoint_file(os.path.join(path, HEADER), "cpu", weights_only=True)
    if not isinstance(header, dict) or "meta" not in header:
        raise CorruptCheckpointError(f'"{path}/{HEADER}" holds no checkpoint header')
    return header


def _dcp() -> Any:
    import torch.distributed.checkpoint as dcp  # looked up per call: tests wrap dcp.save

    return dcp


def _sharded_state(model: nn.Module, optimizer: Union[Optimizer, dict, None]) -> dict:
    from torch.distributed.checkpoint.state_dict import (
        get_model_state_dict,
        get_optimizer_state_dict,
    )

    state: dict[str, Any] = {"state_dict": get_model_state_dict(unwrap_model(model))}
    if optimizer is not None:
        state["optimizer"] = {
            str(key): get_optimizer_state_dict(unwrap_model(model), optim)
            for key, optim in _each_optimizer(optimizer).items()
        }
    return state


def _group_settings(optimizer: Union[Optimizer, dict, None]) -> dict | None:
    if optimizer is None:
        return None
    return {
        str(key): [{k: v for k, v in g.items() if k != "params"} for g in optim.param_groups]
        for key, optim in _each_optimizer(optimizer).items()
    }


def save_sharded_checkpoint(
    model: nn.Module,
    dirname: str,
    optimizer: Union[Optimizer, dict, None] = None,
    meta: dict | None = None,
    extra_state: dict | None = None,
) -> None:
    """Write a sharded checkpoint directory atomically (collective: every rank calls this).

    Args:
        model: The (sharded) model; buffers are first broadcast from rank 0.
        dirname: The checkpoint's final path (e.g. ``work_dir/epoch_5.pth``).
        optimizer: An optimizer or a dict of optimizers to save too.
        meta: Metadata; ``mmpar_version`` and ``time`` are added.
        extra_state: Exact-resume state (``mmpar_state`` in the header).
    """
    rank, _ = get_dist_info()
    parent, name = os.path.split(os.path.abspath(dirname))
    prefix = f".{name}.tmp."
    tmp = None
    if rank == 0:
        os.makedirs(parent, exist_ok=True)
        tmp = os.path.join(parent, f"{prefix}{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)  # ours only if a killed run had our pid
    tmp = broadcast_object(tmp)  # after rank 0 cleared it: no rank writes into a stale one
    broadcast_buffers(model)
    _dcp().save(_sharded_state(model, optimizer), checkpoint_id=tmp)
    if rank != 0:
        return
    header = {
        "meta": dict(meta or {}, mmpar_version=__version__, time=time.asctime()),
        "mmpar_state": extra_state,
        "optimizer_groups": _group_settings(optimizer),
    }
    with open(os.path.join(tmp, HEADER), "wb") as f:
        torch.save(header, f)
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(tmp)
    if os.path.lexists(dirname):  # saved again under the same name: the old one goes first
        remove_checkpoint(dirname)
    os.replace(tmp, dirname)
    fsync_dir(parent)
    for entry in os.listdir(parent):  # temporaries of this checkpoint left by killed runs
        if entry.startswith(prefix) and entry[len(prefix) :].isdigit():
            shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)


# Globals DCP's .metadata pickle may name: its own metadata classes, torch dtypes and sizes.
_SAFE_MODULES = ("torch.distributed.checkpoint.metadata", "torch.distributed.checkpoint.filesystem")
_SAFE_GLOBALS = {
    ("torch", "Size"),
    ("torch.serialization", "_get_layout"),
    ("pathlib", "PosixPath"),
    ("pathlib", "WindowsPath"),
    ("pathlib", "PurePosixPath"),
    ("pathlib", "PureWindowsPath"),
}


class _MetadataUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        value = super().find_class(module, name)
        if (
            (module, name) in _SAFE_GLOBALS
            or (module in _SAFE_MODULES and isinstance(value, type))
            or (module == "torch" and isinstance(value, torch.dtype))
        ):
            return value
        raise UnsafeCheckpointError(
            f"the sharded checkpoint's {_DCP_METADATA} names {module}.{name}, which DCP "
            "metadata never holds; not loading it (it could run code)"
        )


def _read_metadata(path: str) -> Any:
    """DCP's metadata of ``path``, checked to hold only DCP's own classes first."""
    with open(os.path.join(path, _DCP_METADATA), "rb") as f:
        try:
            _MetadataUnpickler(f).load()
        except UnsafeCheckpointError as err:
            raise UnsafeCheckpointError(f'"{path}": {err}') from None
        except (pickle.UnpicklingError, EOFError, ValueError, AttributeError) as err:
            raise CorruptCheckpointError(f'"{path}/{_DCP_METADATA}" is corrupt: {err}') from err
    metadata = _dcp().FileSystemReader(path).read_metadata()
    _check_shard_files(path, metadata)
    return metadata


def _check_shard_files(path: str, metadata: Any) -> None:
    """Raise if a shard file the metadata names is missing or shorter than its entries need.

    Torch would fail deep inside its reader (or on some rank only); one stat per file here
    names the file instead.

    Raises:
        CorruptCheckpointError: A shard file is missing or truncated.
    """
    needed: dict[str, int] = {}
    for info in (getattr(metadata, "storage_data", None) or {}).values():
        name = getattr(info, "relative_path", None)
        if name is not None:
            end = int(getattr(info, "offset", 0)) + int(getattr(info, "length", 0))
            needed[name] = max(needed.get(name, 0), end)
    advice = (
        "copy the whole checkpoint directory again, or resume from an earlier checkpoint "
        "(the shards of one checkpoint are only usable together)"
    )
    for name, size in sorted(needed.items()):
        shard = os.path.join(path, name)
        try:
            have = os.path.getsize(shard)
        except OSError:
            raise CorruptCheckpointError(
                f'the sharded checkpoint "{path}" misses its shard file {name}: {advice}'
            ) from None
        if have < size:
            raise CorruptCheckpointError(
                f'shard file "{shard}" is truncated ({have} of at least {size} bytes): {advice}'
            )


def _saved_shapes(metadata: Any, prefix: str) -> dict[str, Any]:
    """``name -> shape`` (None for non-tensors) of the entries under ``prefix``."""
    out = {}
    for key, item in metadata.state_dict_metadata.items():
        if key.startswith(prefix):
            out[key[len(prefix) :]] = getattr(item, "size", None)
    return out


def load_sharded_checkpoint(
    model: nn.Module,
    path: str,
    optimizer: Union[Optimizer, dict, None] = None,
    strict: bool = False,
    logger: logging.Logger | None = None,
) -> dict:
    """Load a sharded checkpoint's weights (and optimizer state) into ``model``.

    Under ``torch.distributed`` every rank must call this (collective); each reads what its
    shards (or, for an unsharded model, its full tensors) need. Without a process group one
    process reads everything, e.g. ``tools/test.py`` on a sharded checkpoint. Entries that do
    not fit are reported as :func:`mmpar.runner.load_state_dict` does.

    Returns:
        The header: ``{'meta': ..., 'mmpar_state': ..., 'optimizer_groups': ...}``.

    Raises:
        CheckpointMismatchError: ``strict`` and some entry does not fit, or none fits.
        CorruptCheckpointError: Not a complete sharded checkpoint.
        UnsafeCheckpointError: Its DCP metadata names classes DCP never writes.
    """
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    header = read_sharded_header(path)
    metadata = _read_metadata(path)
    saved = _saved_shapes(metadata, "state_dict.")
    own = _sharded_state(model, None)["state_dict"]
    loadable = report_mismatch(model, own, saved, strict, logger)
    state: dict[str, Any] = {"state_dict": {k: v for k, v in own.items() if k in loadable}}
    if optimizer is not None:
        state["optimizer"] = _sharded_state(model, optimizer)["optimizer"]
    _dcp().load(state, checkpoint_id=path)
    set_model_state_dict(
        unwrap_model(model), state["state_dict"], options=StateDictOptions(strict=False)
    )
    if optimizer is not None:
        _set_optimizers(model, optimizer, state["optimizer"], header.get("optimizer_groups"))
    return header


def _set_optimizers(model: nn.Module, optimizer: Any, states: dict, groups: dict | None) -> None:
    from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

    for key, optim in _each_optimizer(optimizer).items():
        set_optimizer_state_dict(unwrap_model(model), optim, states[str(key)])
        # Group settings the live optimizer lacked at load time (initial_lr) are not in the
        # template DCP filled; the header has them all, as load_state_dict would set them.
        for saved, live in zip((groups or {}).get(str(key), []), optim.param_groups):
            live.update(saved)


def convert_sharded_checkpoint(path: str, out_file: str) -> str:
    """Write a sharded checkpoint as one ``.pth`` file in the usual (mmcv) layout.

    Runs in one process and reads every shard (it needs the memory of the whole model and
    optimizer state). The optimizer state is turned into torch's numbered layout, so the file
    loads like a full checkpoint (``tools/test.py``, ``resume_from`` in any run).

    Returns:
        ``out_file``.
    """
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

    from .atomic_file import atomic_path

    header = read_sharded_header(path)
    _read_metadata(path)  # the safety check, before torch unpickles it
    with atomic_path(out_file) as tmp:
        dcp_to_torch_save(path, tmp)
        state = torch.load(tmp, map_location="cpu", weights_only=True)
        checkpoint: dict[str, Any] = {"meta": header["meta"], "state_dict": state["state_dict"]}
        if "optimizer" in state:
            optims = {k: optimizer_state_by_ids(v) for k, v in state["optimizer"].items()}
            checkpoint["optimizer"] = optims["None"] if list(optims) == ["None"] else optims
        if header.get("mmpar_state") is not None:
            checkpoint["mmpar_state"] = header["mmpar_state"]
        with open(tmp, "wb") as f:
            torch.save(checkpoint, f)
            f.flush()
            os.fsync(f.fileno())
    return out_file
