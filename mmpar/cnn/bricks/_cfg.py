"""The config checks, registry lookup and name stems the ``build_*_layer`` functions share."""

from __future__ import annotations

import inspect
from typing import Any

from mmpar.utils.compat_errors import MessageKeyError
from mmpar.utils.registry import Registry

# Layer names that importing ``mmpar.ops`` (``mmcv.ops`` under mmcv) registers, by registry
# name: the cnn layer cannot import ops (it sits above), so a lookup that misses one says to.
OPS_LAYER_NAMES: dict[str, frozenset] = {
    "conv layer": frozenset(
        {"DCN", "DCNv2", "SAC", "SubMConv2d", "SubMConv3d", "SubMConv4d"}
        | {f"Sparse{kind}{d}d" for kind in ("Conv", "ConvTranspose", "InverseConv") for d in (2, 3)}
        | {"SparseConv4d"}
    ),
    "norm layer": frozenset({"MMSyncBN"}),
    "upsample layer": frozenset({"carafe"}),
    "plugin layer": frozenset({"CrissCrossAttention"}),
}


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
        if layer_type in OPS_LAYER_NAMES.get(registry.name, ()):
            raise MessageKeyError(
                f"Unrecognized {what} type {layer_type!r}: it is registered by importing the ops; "
                f"add `import mmpar.ops` (or `import mmcv.ops`) before building the model, or "
                f"custom_imports = dict(imports=['mmpar.ops']) to the config"
            )
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
