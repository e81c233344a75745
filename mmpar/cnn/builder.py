"""The root model registry of mmcv 1.x (``mmcv.cnn.MODELS``) and its list-aware builder.

Downstream projects create ``Registry('models', parent=MODELS)``: their registries become
children of this one, so ``'mmcls.ResNet'`` resolves from any of them. mmpar's own models
(``mmpar.models``) register here directly: this registry is ``mmpar.models.MODELS``.
"""

from __future__ import annotations

from typing import Union

from torch import nn

from mmpar.runner.base_module import Sequential
from mmpar.utils.registry import Registry, build_from_cfg

__all__ = ["MODELS", "build_model_from_cfg"]


def build_model_from_cfg(
    cfg: Union[dict, list], registry: Registry, default_args: dict | None = None
) -> nn.Module:
    """Build a module from a config dict; a list of configs gives a :class:`Sequential` of them.

    Args:
        cfg: One config dict, or a list of them (built in order, then chained).
        registry: Registry the ``type`` names are looked up in.
        default_args: Arguments used where a config does not set them.

    Returns:
        The built module (an ``mmpar.runner.Sequential``, also an ``nn.Sequential``, for a list).
    """
    if isinstance(cfg, list):
        return Sequential(*[build_from_cfg(one, registry, default_args) for one in cfg])
    return build_from_cfg(cfg, registry, default_args)


MODELS = Registry("model", build_func=build_model_from_cfg)
