"""Normalisation layers: the ``NORM_LAYERS`` entries, :func:`build_norm_layer`, :func:`is_norm`.

A built norm layer comes with the attribute name mmcv gives it (``bn``, ``gn1``, ``ln``, ...),
which is part of the state-dict keys of every model that uses it.
"""

from __future__ import annotations

from typing import Union

from torch import nn

from mmpar.utils.misc import is_tuple_of
from mmpar.utils.parrots_wrapper import SyncBatchNorm, _BatchNorm, _InstanceNorm

from ._cfg import NO_ABBR, declared_abbr, split_layer_cfg
from .registry import NORM_LAYERS

NORM_LAYERS.register_module("BN", module=nn.BatchNorm2d)
NORM_LAYERS.register_module("BN1d", module=nn.BatchNorm1d)
NORM_LAYERS.register_module("BN2d", module=nn.BatchNorm2d)
NORM_LAYERS.register_module("BN3d", module=nn.BatchNorm3d)
NORM_LAYERS.register_module("SyncBN", module=SyncBatchNorm)
NORM_LAYERS.register_module("GN", module=nn.GroupNorm)
NORM_LAYERS.register_module("LN", module=nn.LayerNorm)
NORM_LAYERS.register_module("IN", module=nn.InstanceNorm2d)
NORM_LAYERS.register_module("IN1d", module=nn.InstanceNorm1d)
NORM_LAYERS.register_module("IN2d", module=nn.InstanceNorm2d)
NORM_LAYERS.register_module("IN3d", module=nn.InstanceNorm3d)

# Checked in this order: mmcv gives instance norm precedence (older torch derived _InstanceNorm
# from _BatchNorm, and a user class may derive from both).
_ABBR_BY_BASE = (
    (_InstanceNorm, "in"),
    (_BatchNorm, "bn"),
    (nn.GroupNorm, "gn"),
    (nn.LayerNorm, "ln"),
)
_ABBR_BY_WORD = (("batch", "bn"), ("group", "gn"), ("layer", "ln"), ("instance", "in"))


def infer_abbr(class_type: type) -> str:
    """The attribute-name stem for a norm layer class (mmcv's rules, in order).

    1. the class's ``_abbr_`` attribute;
    2. ``'in'``, ``'bn'``, ``'gn'``, ``'ln'`` for subclasses of torch's instance norm, batch norm,
       GroupNorm, LayerNorm;
    3. the same for a class name containing ``batch``, ``group``, ``layer``, ``instance``;
    4. ``'norm_layer'``.

    Raises:
        TypeError: ``class_type`` is not a class.
    """
    abbr = declared_abbr(class_type)
    if abbr is not NO_ABBR:
        return abbr
    for base, abbr in _ABBR_BY_BASE:
        if issubclass(class_type, base):
            return abbr
    name = class_type.__name__.lower()
    for word, abbr in _ABBR_BY_WORD:
        if word in name:
            return abbr
    return "norm_layer"


def build_norm_layer(
    cfg: dict, num_features: int, postfix: Union[int, str] = ""
) -> tuple[str, nn.Module]:
    """Build a normalisation layer and the attribute name to store it under.

    Args:
        cfg: ``type`` (a ``NORM_LAYERS`` name), ``requires_grad`` (default True: whether the
            layer's parameters train) and the layer's own arguments. ``eps`` defaults to 1e-5;
            ``GN`` needs ``num_groups``.
        num_features: Channels of the input (``num_channels`` for GroupNorm; the normalised
            shape for LayerNorm).
        postfix: Appended to the name (``('bn1', layer)`` for ``postfix=1``).

    Returns:
        ``(name, layer)``, the name being :func:`infer_abbr` of the class plus ``postfix``.

    Raises:
        TypeError: ``cfg`` is not a dict.
        KeyError: ``cfg`` has no ``type`` or names an unregistered one.
        AssertionError: ``postfix`` is not an int or str; ``GN`` without ``num_groups``.
    """
    norm_cls, args = split_layer_cfg(cfg, NORM_LAYERS, "norm")
    assert isinstance(postfix, (int, str)), f"postfix must be an int or str, got {postfix!r}"
    name = infer_abbr(norm_cls) + str(postfix)

    requires_grad = args.pop("requires_grad", True)
    args.setdefault("eps", 1e-5)
    if cfg["type"] == "GN":
        assert "num_groups" in args, f"a GN norm_cfg needs num_groups, got {cfg}"
        layer = norm_cls(num_channels=num_features, **args)
    else:
        layer = norm_cls(num_features, **args)
    for param in layer.parameters():
        param.requires_grad = requires_grad
    return name, layer


def is_norm(layer: nn.Module, exclude: Union[type, tuple, None] = None) -> bool:
    """Whether ``layer`` is a batch, instance, group or layer norm (and not of ``exclude``).

    Raises:
        TypeError: ``exclude`` is not None, a type or a tuple of types.
    """
    if exclude is not None:
        if not isinstance(exclude, tuple):
            exclude = (exclude,)
        if not is_tuple_of(exclude, type):
            raise TypeError(
                f'"exclude" must be either None or type or a tuple of types, '
                f"but got {type(exclude)}: {exclude}"
            )
        if isinstance(layer, exclude):
            return False
    return isinstance(layer, (_BatchNorm, _InstanceNorm, nn.GroupNorm, nn.LayerNorm))


__all__ = ["NORM_LAYERS", "build_norm_layer", "infer_abbr", "is_norm"]
