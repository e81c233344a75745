"""Save and load checkpoints (mmcv 1.x layout), atomically and without unpickling code.

Layout: ``{'meta': ..., 'state_dict': ..., 'optimizer': ..., 'mmpar_state': ...}``. The first
three keys are mmcv 1.x's; ``mmpar_state`` holds the exact-resume state (see
``docs/internals.md``) and is ignored by mmcv.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import pickle
import re
import shutil
import time
import warnings
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any, Union

import torch
import torch.nn as nn
from torch.optim import Optimizer

from mmpar.parallel import is_module_wrapper
from mmpar.version import __version__

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


class CheckpointError(RuntimeError):
    """A checkpoint file could not be read."""


class CorruptCheckpointError(CheckpointError):
    """The file is not a valid checkpoint: truncated, corrupt or not a PyTorch file."""


class CheckpointMismatchError(CheckpointError):
    """The checkpoint's tensors do not fit the model (strict loading, or none fit at all)."""


class UnsafeCheckpointError(CheckpointError, pickle.UnpicklingError):
    """The file needs arbitrary code to unpickle and ``weights_only=True`` refused it."""


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


def _unwrap(model: nn.Module) -> nn.Module:
    while is_module_wrapper(model):
        model = model.module
    return model


def weights_to_cpu(obj: Any) -> Any:
    """Return ``obj`` with every tensor in nested dicts/lists/tuples moved to the CPU."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, OrderedDict):
        return OrderedDict((k, weights_to_cpu(v)) for k, v in obj.items())
    if isinstance(obj, dict):
        return {k: weights_to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(weights_to_cpu(v) for v in obj)
    return obj


def get_state_dict(model: nn.Module) -> OrderedDict:
    """Return the model's state dict without module-wrapper prefixes, tensors on the CPU.

    Top-level wrappers (``MMDataParallel``, DDP, ...) are unwrapped; wrappers nested inside the
    model have their ``module.`` segment removed from the keys too.
    """
    model = _unwrap(model)
    wrapped_prefixes = [
        f"{name}." for name, mod in model.named_modules() if name and is_module_wrapper(mod)
    ]
    state = model.state_dict()
    out: OrderedDict = OrderedDict()
    for key, value in state.items():
        for prefix in wrapped_prefixes:
            if key.startswith(prefix + "module."):
                key = prefix + key[len(prefix) + len("module.") :]
        out[key] = value.detach().cpu() if isinstance(value, torch.Tensor) else value
    metadata = getattr(state, "_metadata", None)
    if metadata is not None:
        out._metadata = metadata  # type: ignore[attr-defined]
    return out


@contextlib.contextmanager
def _atomic_path(filename: str) -> Iterator[str]:
    """Yield a temp path next to ``filename``; on success move it into place durably.

    Temporaries of the same file left by processes killed while writing it
    (``.<name>.tmp.<pid>``) are deleted once the new file is in place.
    """
    dirname = os.path.dirname(os.path.abspath(filename))
    os.makedirs(dirname, exist_ok=True)
    prefix = f".{os.path.basename(filename)}.tmp."
    tmp = os.path.join(dirname, f"{prefix}{os.getpid()}")
    # Ours only if a killed process had our pid: a stale symlink there would make a write to
    # ``tmp`` change the file it points at.
    with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)
    try:
        yield tmp
        os.replace(tmp, filename)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    _fsync_dir(dirname)
    # Any other pid's temporary is stale: only rank 0 writes checkpoints and latest.pth, so
    # no other process is writing into this directory now.
    for name in os.listdir(dirname):
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            with contextlib.suppress(OSError):
                os.remove(os.path.join(dirname, name))


def _fsync_dir(dirname: str) -> None:
    # Make the rename itself durable; directories cannot be opened this way on Windows.
    if os.name != "posix":
        return
    fd = os.open(dirname, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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
    with _atomic_path(filename) as tmp:  # removes the temporary file if this fails
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


def update_latest_link(out_dir: str, filename: str, link_name: str = "latest.pth") -> str:
    """Point ``out_dir/link_name`` at ``out_dir/filename`` atomically; copy where links fail.

    Like a checkpoint, the link is made under a temporary name and renamed over
    ``link_name``; temporaries of the link left by killed processes are deleted.

    Args:
        out_dir: The directory of the checkpoint and the link.
        filename: The checkpoint's name in ``out_dir`` (the link's relative target).
        link_name: The link's name in ``out_dir``.

    Returns:
        The path of the link (or copy).
    """
    dst = os.path.join(out_dir, link_name)
    with _atomic_path(dst) as tmp:
        try:
            os.symlink(filename, tmp)  # relative target: the directory can be moved
        except (OSError, NotImplementedError):
            shutil.copyfile(os.path.join(out_dir, filename), tmp)
    return dst


def _numpy_safe_globals() -> list:
    """Numpy scalar/dtype constructors found in mmcv 1.x metadata; unpickling them runs no code."""
    import numpy as np

    allowed: list = [np.dtype]
    for mod_name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        with contextlib.suppress(Exception):
            module = __import__(mod_name, fromlist=["scalar"])
            allowed.append(module.scalar)
            break
    dtypes = getattr(np, "dtypes", None)
    if dtypes is not None:
        allowed += [getattr(dtypes, n) for n in dir(dtypes) if n.endswith("DType")]
    return allowed


def _torch_load(filename: Any, map_location: Any, weights_only: bool, mmap: bool = False) -> Any:
    kwargs: dict[str, Any] = {"map_location": map_location, "weights_only": weights_only}
    if mmap:
        kwargs["mmap"] = True
    safe = getattr(torch.serialization, "safe_globals", None)
    if weights_only and safe is not None:
        with safe(_numpy_safe_globals()):
            return torch.load(filename, **kwargs)
    return torch.load(filename, **kwargs)


def _is_refusal(err: BaseException) -> bool:
    msg = str(err)
    return "Weights only load failed" in msg and ("global" in msg.lower())


def _load_local(filename: str, map_location: Any, weights_only: bool, mmap: bool = False) -> Any:
    if not os.path.isfile(filename):
        raise FileNotFoundError(f'checkpoint file "{filename}" does not exist')
    if not weights_only:
        warnings.warn(
            f'Loading "{filename}" with weights_only=False unpickles arbitrary Python objects and '
            "can run code from the file; only do this for checkpoints you trust.",
            stacklevel=3,
        )
    try:
        return _torch_load(filename, map_location, weights_only, mmap=mmap)
    except pickle.UnpicklingError as err:
        if weights_only and _is_refusal(err):
            found = re.search(r"Unsupported global: GLOBAL ([\w.]+)", str(err))
            what = f"the Python object {found.group(1)}" if found else "Python objects"
            raise UnsafeCheckpointError(
                f'Refused to load "{filename}": it needs {what}, which is not a plain '
                "tensor/container, and unpickling it could run code from the file "
                "(weights_only=True). If you trust this file, pass weights_only=False to "
                "load_checkpoint / runner.resume / runner.load_checkpoint."
            ) from err
        # torch wraps the reason in advice about weights_only that does not apply here.
        found = re.search(r"WeightsUnpickler error:\s*(.+?)\s*(?:\n\n|$)", str(err), re.S)
        detail = found.group(1) if found else (str(err).splitlines() or [repr(err)])[0]
        raise CorruptCheckpointError(
            f'"{filename}" is not a valid checkpoint, truncated or corrupt (or not a PyTorch '
            f"file): {detail}"
        ) from err
    except (RuntimeError, EOFError, ValueError, OSError) as err:
        if isinstance(err, FileNotFoundError):
            raise
        raise CorruptCheckpointError(
            f'"{filename}" is not a valid checkpoint, truncated or corrupt: '
            f"{str(err).splitlines()[0] if str(err) else type(err).__name__}"
        ) from err


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
    return _load_local(filename, map_location, weights_only)


def load_state_dict(
    module: nn.Module,
    state_dict: dict,
    strict: bool = False,
    logger: logging.Logger | None = None,
) -> dict:
    """Load ``state_dict`` into ``module``, reporting missing, unexpected and mis-shaped keys.

    Tensors whose shape differs from the module's are skipped (and reported) instead of failing,
    unless not a single tensor fits: then the state dict belongs to another model, and loading
    "nothing" would silently leave the module as it was.

    Args:
        module: Target module (module wrappers are unwrapped).
        state_dict: Parameter and buffer tensors by name.
        strict: Raise instead of warning when anything does not match.
        logger: Where to report mismatches (default: the ``mmpar`` logger).

    Returns:
        ``{'missing_keys': [...], 'unexpected_keys': [...], 'shape_mismatch': [...]}``.

    Raises:
        CheckpointMismatchError: ``strict`` and some key did not match, or no tensor of a
            non-empty ``state_dict`` fits the module; the message lists the keys (and the
            checkpoint and model shapes). A ``RuntimeError``, as in mmcv.
    """
    module = _unwrap(module)
    own = module.state_dict()
    shape_mismatch = []
    mismatched: set = set()  # reported as mis-shaped, not also as missing
    filtered = OrderedDict()
    for key, value in state_dict.items():
        if (
            key in own
            and isinstance(value, torch.Tensor)
            and isinstance(own[key], torch.Tensor)
            and value.shape != own[key].shape
        ):
            shape_mismatch.append(
                f"{key}: checkpoint {tuple(value.shape)} vs model {tuple(own[key].shape)}"
            )
            mismatched.add(key)
            continue
        filtered[key] = value
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        filtered._metadata = metadata  # type: ignore[attr-defined]
    result = module.load_state_dict(filtered, strict=False)
    # BatchNorm's num_batches_tracked is often absent from older checkpoints; not worth a warning.
    missing = [
        k
        for k in result.missing_keys
        if not k.endswith("num_batches_tracked") and k not in mismatched
    ]
    report = {
        "missing_keys": missing,
        "unexpected_keys": list(result.unexpected_keys),
        "shape_mismatch": shape_mismatch,
    }
    lines = []
    if report["unexpected_keys"]:
        lines.append("unexpected key in source state_dict: " + ", ".join(report["unexpected_keys"]))
    if missing:
        lines.append("missing keys in source state_dict: " + ", ".join(missing))
    if shape_mismatch:
        lines.append("size mismatch (skipped): " + "; ".join(shape_mismatch))
    if lines:
        msg = "The model and loaded state dict do not match exactly\n" + "\n".join(lines)
        if strict:
            raise CheckpointMismatchError(
                "the state dict does not match the model exactly (strict loading)\n"
                + _summarize(report)
            )
        if state_dict and not any(k in own for k in filtered):
            raise CheckpointMismatchError(
                f"none of the {len(state_dict)} entries of the state dict fits "
                f"{type(module).__name__} (a checkpoint of another model?)\n" + _summarize(report)
            )
        (logger or _logger).warning(msg)
    return report


def _summarize(report: dict, limit: int = 8) -> str:
    """The mismatch report as lines, each list cut to ``limit`` entries."""

    def _cut(items: list, sep: str) -> str:
        more = f"{sep}... ({len(items) - limit} more)" if len(items) > limit else ""
        return sep.join(items[:limit]) + more

    lines = []
    if report["unexpected_keys"]:
        lines.append(
            "unexpected key in source state_dict: " + _cut(report["unexpected_keys"], ", ")
        )
    if report["missing_keys"]:
        lines.append("missing keys in source state_dict: " + _cut(report["missing_keys"], ", "))
    if report["shape_mismatch"]:
        lines.append("size mismatch: " + _cut(report["shape_mismatch"], "; "))
    return "\n".join(lines)


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
                ckpt = _load_local(path, "cpu", weights_only=True, mmap=True)
            except CorruptCheckpointError:  # legacy (non-zip) files cannot be mmapped
                ckpt = _load_local(path, "cpu", weights_only=True)
            if not isinstance(ckpt, dict):
                raise CorruptCheckpointError(f'"{path}" holds no checkpoint dict')
        except CheckpointError as err:
            (logger or _logger).warning(f"auto-resume: skipping {path}: {err}")
            continue
        ranked.append((checkpoint_iter(ckpt), os.path.getmtime(real), path))
    if not ranked:
        return None
    return max(ranked)[2]
