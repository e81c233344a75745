"""Plugin layers (blocks inserted into a backbone stage) and :func:`build_plugin_layer`."""

from __future__ import annotations

import re
from typing import Any, Union

from torch import nn

from ._cfg import NO_ABBR, declared_abbr, split_layer_cfg
from .registry import PLUGIN_LAYERS


def _camel_to_snake(word: str) -> str:
    # 'FancyBlock' -> 'fancy_block', 'GCBlock' -> 'gc_block' (the inflection library's rule).
    word = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", word)
    word = re.sub(r"([a-z\d])([A-Z])", r"\1_\2", word)
    return word.replace("-", "_").lower()


def infer_abbr(class_type: type) -> str:
    """The attribute-name stem of a plugin class: its ``_abbr_``, else its snake-case name.

    Raises:
        TypeError: ``class_type`` is not a class.
    """
    abbr = declared_abbr(class_type)
    if abbr is not NO_ABBR:
        return abbr
    return _camel_to_snake(class_type.__name__)


def build_plugin_layer(
    cfg: dict, postfix: Union[int, str] = "", **kwargs: Any
) -> tuple[str, nn.Module]:
    """Build a plugin layer and the attribute name to store it under.

    Args:
        cfg: ``type`` (a ``PLUGIN_LAYERS`` name) and the layer's arguments.
        postfix: Appended to the name.
        **kwargs: More arguments of the layer (``in_channels`` from the backbone, ...).

    Returns:
        ``(name, layer)``, the name being :func:`infer_abbr` of the class plus ``postfix``.

    Raises:
        TypeError: ``cfg`` is not a dict.
        KeyError: ``cfg`` has no ``type`` or names an unregistered one.
        AssertionError: ``postfix`` is not an int or str.
    """
    plugin_cls, cfg_args = split_layer_cfg(cfg, PLUGIN_LAYERS, "plugin")
    assert isinstance(postfix, (int, str)), f"postfix must be an int or str, got {postfix!r}"
    return infer_abbr(plugin_cls) + str(postfix), plugin_cls(**kwargs, **cfg_args)


__all__ = ["build_plugin_layer", "infer_abbr"]
