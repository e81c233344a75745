"""Read a checkpoint file without running code from it, and say plainly why a read failed.

``torch.load`` is called here only, with ``weights_only=True`` unless the caller trusts the file;
its errors become :class:`CorruptCheckpointError` or :class:`UnsafeCheckpointError`, and a
checkpoint address that cannot be fetched a :class:`CheckpointDownloadError`.
"""

from __future__ import annotations

import contextlib
import http.client
import inspect
import os
import pickle
import re
import urllib.error
import warnings
from typing import Any

import torch

__all__ = [
    "CheckpointDownloadError",
    "CheckpointError",
    "CorruptCheckpointError",
    "UnsafeCheckpointError",
    "load_checkpoint_file",
    "load_url_checkpoint",
    "read_error",
]


class CheckpointError(RuntimeError):
    """A checkpoint file could not be read."""


class CorruptCheckpointError(CheckpointError):
    """The file is not a valid checkpoint: truncated, corrupt or not a PyTorch file."""


class CheckpointDownloadError(CheckpointError, urllib.error.URLError):
    """A checkpoint address that cannot be fetched; the message names the address.

    A ``urllib.error.URLError`` (hence an ``OSError``), as the failed download raised before.

    Args:
        url: The address.
        err: Why the download failed (``URLError``, ``HTTPError``, a timeout ...).
    """

    def __init__(self, url: str, err: BaseException) -> None:
        reason = getattr(err, "reason", None) if isinstance(err, urllib.error.URLError) else None
        if isinstance(err, urllib.error.HTTPError):
            reason = f"HTTP {err.code} {err.reason}"
        urllib.error.URLError.__init__(self, reason if reason is not None else err)
        self.url = url
        self.message = f'cannot fetch checkpoint "{url}": {reason if reason is not None else err}'

    def __str__(self) -> str:
        return self.message


class UnsafeCheckpointError(CheckpointError, pickle.UnpicklingError):
    """The file needs arbitrary code to unpickle and ``weights_only=True`` refused it."""


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


def _allow_numpy(weights_only: bool) -> contextlib.AbstractContextManager:
    """A context in which ``weights_only`` loading also accepts mmcv's numpy metadata."""
    safe = getattr(torch.serialization, "safe_globals", None)
    if weights_only and safe is not None:
        return safe(_numpy_safe_globals())
    return contextlib.nullcontext()


def _torch_load(filename: Any, map_location: Any, weights_only: bool, mmap: bool = False) -> Any:
    kwargs: dict[str, Any] = {"map_location": map_location, "weights_only": weights_only}
    if mmap:
        kwargs["mmap"] = True
    with _allow_numpy(weights_only):
        return torch.load(filename, **kwargs)


def _warn_untrusted(filename: str) -> None:
    warnings.warn(
        f'Loading "{filename}" with weights_only=False unpickles arbitrary Python objects and '
        "can run code from the file; only do this for checkpoints you trust.",
        stacklevel=4,
    )


def _is_refusal(err: BaseException) -> bool:
    msg = str(err)
    return "Weights only load failed" in msg and ("global" in msg.lower())


def load_checkpoint_file(
    filename: str, map_location: Any, weights_only: bool, mmap: bool = False
) -> Any:
    """Load the object saved in a local checkpoint file.

    Args:
        filename: A local path.
        map_location: Passed to ``torch.load``.
        weights_only: Unpickle only tensors and plain containers; False (for trusted files
            only) warns that the file can run code.
        mmap: Memory-map the file instead of reading it (zip-format files only).

    Returns:
        The unpickled object.

    Raises:
        FileNotFoundError: The file does not exist.
        UnsafeCheckpointError: ``weights_only`` refused a Python object in the file.
        CorruptCheckpointError: The file is truncated, corrupt or not a PyTorch file.
    """
    if not os.path.isfile(filename):
        raise FileNotFoundError(f'checkpoint file "{filename}" does not exist')
    if not weights_only:
        _warn_untrusted(filename)
    try:
        return _torch_load(filename, map_location, weights_only, mmap=mmap)
    except FileNotFoundError:
        raise
    # IndexError: torch's weights_only unpickler on some garbage bytes ("pop from empty list").
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, OSError, IndexError) as err:
        raise read_error(err, filename, weights_only) from err


def load_url_checkpoint(
    url: str, model_dir: str | None, map_location: Any, weights_only: bool
) -> Any:
    """Download ``url`` into the torch hub cache (once) and load it like a local file.

    Args:
        url: An ``http(s)://`` address.
        model_dir: Cache directory (default: ``<torch hub dir>/checkpoints``).
        map_location: Passed to ``torch.load``.
        weights_only: As for :func:`load_checkpoint_file`.

    Raises:
        UnsafeCheckpointError: ``weights_only`` refused a Python object in the file.
        CorruptCheckpointError: The download is not a valid checkpoint.
        CheckpointDownloadError: The download failed (connection refused, unknown host, an
            HTTP error such as 404, a timeout); a ``urllib.error.URLError`` naming ``url``.
    """
    if not weights_only:
        _warn_untrusted(url)
    kwargs: dict[str, Any] = {"model_dir": model_dir, "map_location": map_location}
    if "weights_only" in inspect.signature(torch.hub.load_state_dict_from_url).parameters:
        kwargs["weights_only"] = weights_only  # torch >= 2.1 (mmpar's minimum) has it
    try:
        with _allow_numpy(weights_only):
            return torch.hub.load_state_dict_from_url(url, **kwargs)
    except (pickle.UnpicklingError, RuntimeError, EOFError) as err:
        raise read_error(err, url, weights_only) from err
    except (OSError, http.client.HTTPException) as err:
        # urllib's URLError/HTTPError (refused, unknown host, 404), timeouts, a broken
        # connection or an unwritable cache: the message names the address, not only the cause.
        raise CheckpointDownloadError(url, err) from err


def read_error(err: BaseException, filename: str, weights_only: bool) -> CheckpointError:
    """The :class:`CheckpointError` that explains why ``torch.load`` of ``filename`` failed.

    Args:
        err: What ``torch.load`` (or ``torch.hub.load_state_dict_from_url``) raised.
        filename: The file or URL read, for the message.
        weights_only: Whether the read refused Python objects.

    Returns:
        :class:`UnsafeCheckpointError` when ``weights_only`` refused an object, else
        :class:`CorruptCheckpointError`.
    """
    if isinstance(err, pickle.UnpicklingError):
        if weights_only and _is_refusal(err):
            found = re.search(r"Unsupported global: GLOBAL ([\w.]+)", str(err))
            what = f"the Python object {found.group(1)}" if found else "Python objects"
            return UnsafeCheckpointError(
                f'Refused to load "{filename}": it needs {what}, which is not a plain '
                "tensor/container, and unpickling it could run code from the file "
                "(weights_only=True). If you trust this file, pass weights_only=False to "
                "load_checkpoint / runner.resume / runner.load_checkpoint."
            )
        # torch wraps the reason in advice about weights_only that does not apply here.
        found = re.search(r"WeightsUnpickler error:\s*(.+?)\s*(?:\n\n|$)", str(err), re.S)
        detail = found.group(1) if found else (str(err).splitlines() or [repr(err)])[0]
        return CorruptCheckpointError(
            f'"{filename}" is not a valid checkpoint, truncated or corrupt (or not a PyTorch '
            f"file): {detail}"
        )
    return CorruptCheckpointError(
        f'"{filename}" is not a valid checkpoint, truncated or corrupt: '
        f"{str(err).splitlines()[0] if str(err) else type(err).__name__}"
    )
