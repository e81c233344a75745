"""The config checks, registry lookup and name stems the ``build_*_layer`` functions share."""

from __future__ import annotations

import inspect
from typing import Any

from mmpar.utils.registry import Registry


def split_layer_cfg(cfg: Any, registry: Registry, what: str) -> tuple[Any, dict]:
    """Return the class registered as ``cfg['type']`` and a copy of the other keys.

    Args:
        cfg: The layer config, a dict with ``type``.
        registry: Where ``type`` is looked up.
        what: The kind of layer, for the error text (``'norm'``, ``'padding'``, ...).

    Raises:
        TypeError: ``cfg`` is not a dict.
        KeyError: ``cfg`` has no ``type``, or ``type`` is not registered.
    """
    if not isinstance(cfg, dict):
        raise TypeError(f"cfg must be a dict, but got {type(cfg).__name__}: {cfg!r}")
    if "type" not in cfg:
        raise KeyError(f'the cfg dict must contain the key "type", but got {cfg}')
    args = dict(cfg)
    layer_type = args.pop("type")
    layer_cls = registry.get(layer_type) if isinstance(layer_type, str) else None
    if layer_cls is None:
        raise KeyError(
            f"Unrecognized {what} type {layer_type!r}: {registry.missing_message(str(layer_type))}"
        )
    return layer_cls, args


# A class may declare ``_abbr_ = None``, so "none declared" needs its own marker.
NO_ABBR = object()


def declared_abbr(class_type: Any) -> Any:
    """The ``_abbr_`` a layer class declares for its attribute names, else ``NO_ABBR``.

    Raises:
        TypeError: ``class_type`` is not a class.
    """
    if not inspect.isclass(class_type):
        raise TypeError(f"class_type must be a type, but got {type(class_type)}")
    return getattr(class_type, "_abbr_", NO_ABBR)
