"""A model's weights as a state dict: read without wrapper prefixes, load with a mismatch report.

The functions taking a :class:`~mmpar.parallel.utils.ModelLayout` (``state_dict_of``,
``load_into``) work on a model unwrapped once (a runner's Checkpointer keeps its layout);
mmcv's ``get_state_dict`` / ``load_state_dict`` unwrap the module they are given and call them.
Checkpoints written elsewhere from a ``torch.compile(model)`` wrapper carry ``_orig_mod.`` in
their keys: :func:`match_compiled_keys` maps them onto the model's keys (and back).
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import torch
import torch.nn as nn

from mmpar.parallel.utils import ModelLayout, model_layout

from .fsdp_state import load_full_model_state
from .safe_load import CheckpointError

__all__ = [
    "CheckpointMismatchError",
    "get_state_dict",
    "load_into",
    "load_state_dict",
    "match_compiled_keys",
    "report_mismatch",
    "state_dict_of",
    "strip_compile_prefix",
    "weights_to_cpu",
]

_logger = logging.getLogger("mmpar")

_ORIG_MOD = re.compile(r"(^|\.)_orig_mod\.")


class CheckpointMismatchError(CheckpointError):
    """The checkpoint's tensors do not fit the model (strict loading, or none fit at all)."""


def weights_to_cpu(state_dict: Any) -> Any:
    """Return ``state_dict`` with every tensor in nested dicts/lists/tuples moved to the CPU.

    Any object is accepted (an optimizer state, resume state, ...); a state dict's
    ``_metadata`` is kept.
    """
    obj = state_dict
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, OrderedDict):
        out: Any = OrderedDict((k, weights_to_cpu(v)) for k, v in obj.items())
        metadata = getattr(obj, "_metadata", None)
        if metadata is not None:
            out._metadata = metadata
        return out
    if isinstance(obj, dict):
        return {k: weights_to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(weights_to_cpu(v) for v in obj)
    return obj


def get_state_dict(
    module: nn.Module,
    destination: OrderedDict | None = None,
    prefix: str = "",
    keep_vars: bool = False,
) -> OrderedDict:
    """Return the module's state dict without module-wrapper prefixes, tensors on the CPU.

    Top-level wrappers (``MMDataParallel``, DDP, ``torch.compile``, ...) are unwrapped;
    wrappers nested inside the module have their ``module.`` / ``_orig_mod.`` segment removed
    from the keys too.

    Args:
        module: The module (or a wrapper of it).
        destination: A dict to add the entries to and return (default: a new OrderedDict).
        prefix: Prepended to every key (e.g. ``'backbone.'``).
        keep_vars: Return the parameters and buffers themselves (autograd intact, on their
            devices) instead of detached CPU copies.
    """
    return state_dict_of(model_layout(module), destination, prefix, keep_vars)


def _clean_key(key: str, clean_paths: Mapping[str, str]) -> str:
    """``key`` (``<module path>.<name>``) with its module path's wrapper segments removed."""
    path, dot, name = key.rpartition(".")
    clean = clean_paths.get(path)
    if clean is None:
        return key
    return f"{clean}{dot}{name}" if clean else name


def state_dict_of(
    layout: ModelLayout,
    destination: OrderedDict | None = None,
    prefix: str = "",
    keep_vars: bool = False,
) -> OrderedDict:
    """:func:`get_state_dict` of a model unwrapped already (see :func:`model_layout`)."""
    state = layout.bare.state_dict(keep_vars=keep_vars)
    paths = layout.clean_paths
    out: OrderedDict = OrderedDict() if destination is None else destination
    for key, value in state.items():
        if paths:
            key = _clean_key(key, paths)
        if isinstance(value, torch.Tensor) and not keep_vars:
            value = value.detach().cpu()
        out[prefix + key] = value
    metadata = getattr(state, "_metadata", None)
    if metadata is not None and not prefix:
        # attr-defined: torch keeps a state dict's version info as an attribute of the
        # OrderedDict (load_state_dict reads it); typeshed's OrderedDict has no such attribute.
        out._metadata = OrderedDict(  # type: ignore[attr-defined]
            (paths.get(k, k), v) for k, v in metadata.items()
        )
    return out


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
        module: Target module (module wrappers are unwrapped). If it is sharded (FSDP),
            every rank must call this with the same full ``state_dict`` (collective).
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
    return load_into(model_layout(module), state_dict, strict, logger)


def load_into(
    layout: ModelLayout,
    state_dict: dict,
    strict: bool = False,
    logger: logging.Logger | None = None,
) -> dict:
    """:func:`load_state_dict` into a model unwrapped already (see :func:`model_layout`)."""
    module = layout.bare
    own = module.state_dict()
    state_dict = match_compiled_keys(state_dict, own)  # '_orig_mod.' of torch.compile wrappers
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
        # attr-defined: torch's version info attribute (see state_dict_of above).
        filtered._metadata = metadata  # type: ignore[attr-defined]
    if layout.sharded:  # every rank takes its shard of the full tensors
        result = load_full_model_state(module, filtered)
    else:
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
    fits_none = bool(state_dict) and not any(k in own for k in filtered)
    _raise_or_warn(report, strict, fits_none, len(state_dict), type(module).__name__, logger)
    return report


def report_mismatch(
    module: nn.Module,
    own: Mapping[str, Any],
    saved: Mapping[str, Any],
    strict: bool = False,
    logger: logging.Logger | None = None,
) -> list[str]:
    """Compare a checkpoint's entries with a model's before loading only those that fit.

    For loaders that read just what fits (sharded checkpoints): the report, warning and
    errors are :func:`load_state_dict`'s.

    Args:
        module: The model (named in errors).
        own: The model's state dict (tensors or ``DTensor`` shards; their global shapes count).
        saved: The checkpoint's entries: ``name -> shape`` (None for non-tensors).
        strict: Raise when anything does not match.
        logger: Where the warning goes.

    Returns:
        The names to load: in both, with the same shape.

    Raises:
        CheckpointMismatchError: ``strict`` and some entry did not match, or none fits.
    """
    shape_mismatch, loadable = [], []
    for key, shape in saved.items():
        if key not in own:
            continue
        mine = own[key]
        if shape is not None and isinstance(mine, torch.Tensor) and tuple(shape) != mine.shape:
            shape_mismatch.append(f"{key}: checkpoint {tuple(shape)} vs model {tuple(mine.shape)}")
            continue
        loadable.append(key)
    report = {
        "missing_keys": [
            k for k in own if k not in saved and not k.endswith("num_batches_tracked")
        ],
        "unexpected_keys": [k for k in saved if k not in own],
        "shape_mismatch": shape_mismatch,
    }
    fits_none = bool(saved) and not loadable
    _raise_or_warn(
        report, strict, fits_none, len(saved), type(model_layout(module).bare).__name__, logger
    )
    return loadable


def _raise_or_warn(
    report: dict,
    strict: bool,
    fits_none: bool,
    total: int,
    model_name: str,
    logger: logging.Logger | None,
) -> None:
    """Warn about a mismatch report; raise when ``strict`` or when nothing fits."""
    lines = []
    if report["unexpected_keys"]:
        lines.append("unexpected key in source state_dict: " + ", ".join(report["unexpected_keys"]))
    if report["missing_keys"]:
        lines.append("missing keys in source state_dict: " + ", ".join(report["missing_keys"]))
    if report["shape_mismatch"]:
        lines.append("size mismatch (skipped): " + "; ".join(report["shape_mismatch"]))
    if not lines:
        return
    if strict:
        raise CheckpointMismatchError(
            "the state dict does not match the model exactly (strict loading)\n"
            + _summarize(report)
        )
    if fits_none:
        raise CheckpointMismatchError(
            f"none of the {total} entries of the state dict fits "
            f"{model_name} (a checkpoint of another model?)\n" + _summarize(report)
        )
    (logger or _logger).warning(
        "The model and loaded state dict do not match exactly\n" + "\n".join(lines)
    )


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


def strip_compile_prefix(key: str) -> str:
    """``key`` without the ``_orig_mod.`` segments ``torch.compile`` wrappers add."""
    return _ORIG_MOD.sub(r"\1", key)


def match_compiled_keys(state_dict: dict, own_keys: Iterable[str]) -> dict:
    """Rename keys of ``state_dict`` that match a key of ``own_keys`` but for ``_orig_mod.``.

    Works both ways: a checkpoint of a ``torch.compile(model)`` wrapper loads into a plain
    model, and a plain checkpoint into a model with compiled (``OptimizedModule``) children.
    Keys that match already, or match nothing, are kept; ``_metadata`` is carried over.

    Args:
        state_dict: The state dict to load.
        own_keys: The keys of the model's own state dict.

    Returns:
        ``state_dict`` itself when nothing is renamed, else a renamed copy.
    """
    own = set(own_keys)
    by_plain = {strip_compile_prefix(k): k for k in own}
    renamed = {k: by_plain.get(strip_compile_prefix(k), k) for k in state_dict if k not in own}
    if all(k == v for k, v in renamed.items()):
        return state_dict
    out = OrderedDict((renamed.get(k, k), v) for k, v in state_dict.items())
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        # attr-defined: torch's version info attribute (see state_dict_of above).
        out._metadata = metadata  # type: ignore[attr-defined]
    return out
