"""Download-and-cache loading of checkpoints by URL (mmcv 1.x ``mmcv.utils.hub``; imports torch)."""

from __future__ import annotations

from typing import Any

import torch.hub

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils.parrots_wrapper import TORCH_VERSION as TORCH_VERSION
from mmpar.utils.path import mkdir_or_exist as mkdir_or_exist
from mmpar.utils.version_utils import digit_version as digit_version


def load_url(
    url: str,
    model_dir: str | None = None,
    map_location: Any = None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    *,
    weights_only: bool = False,
) -> Any:
    """Download ``url`` into a cache directory once, then ``torch.load`` the cached file.

    This is :func:`torch.hub.load_state_dict_from_url` (what mmcv's ``load_url`` was on
    torch >= 1.7). ``http(s)://`` and ``file://`` URLs work.

    Args:
        url: Where the serialized object is.
        model_dir: Cache directory; ``<torch hub dir>/checkpoints`` when None.
        map_location: Passed to :func:`torch.load` (a device, a str, a dict or a function).
        progress: Show a download progress bar on stderr.
        check_hash: Check the file's SHA-256 against the hex prefix in its name
            (``name-<sha256 prefix>.ext``).
        file_name: Name of the cached file; the last part of the URL when None.
        weights_only: Load with ``torch.load(weights_only=True)``: tensors and plain
            containers only, no arbitrary pickled objects (safer for untrusted URLs).

    Returns:
        The loaded object (usually a state dict or a checkpoint dict).
    """
    return torch.hub.load_state_dict_from_url(
        url,
        model_dir=model_dir,
        map_location=map_location,
        progress=progress,
        check_hash=check_hash,
        file_name=file_name,
        weights_only=weights_only,
    )


__all__ = ["load_url"]
