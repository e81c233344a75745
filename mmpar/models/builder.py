"""Model registries (mmcls 0.x layout: one ``MODELS`` registry, per-kind aliases) and builders."""

from __future__ import annotations

from typing import Any, Union

from torch import nn

from mmpar.utils.registry import Registry, build_from_cfg


def build_model_from_cfg(
    cfg: Union[dict, list], registry: Registry, default_args: dict | None = None
) -> nn.Module:
    """Build a module from a config dict, or an ``nn.Sequential`` from a list of them."""
    if isinstance(cfg, list):
        return nn.Sequential(*[build_from_cfg(c, registry, default_args) for c in cfg])
    return build_from_cfg(cfg, registry, default_args)


MODELS = Registry("model", build_func=build_model_from_cfg)
# Aliases, as in mmcls 0.x: every kind lives in one registry, so any config can name any model.
BACKBONES = MODELS
NECKS = MODELS
HEADS = MODELS
LOSSES = MODELS
CLASSIFIERS = MODELS


def build_backbone(cfg: dict) -> nn.Module:
    """Build a backbone."""
    return BACKBONES.build(cfg)


def build_neck(cfg: dict) -> nn.Module:
    """Build a neck."""
    return NECKS.build(cfg)


def build_head(cfg: dict) -> nn.Module:
    """Build a head."""
    return HEADS.build(cfg)


def build_loss(cfg: dict) -> nn.Module:
    """Build a loss."""
    return LOSSES.build(cfg)


def build_classifier(cfg: dict) -> nn.Module:
    """Build a classifier."""
    return CLASSIFIERS.build(cfg)


def build_model(cfg: dict, **kwargs: Any) -> nn.Module:
    """Build any model from ``MODELS`` (extra kwargs are default arguments)."""
    return MODELS.build(cfg, default_args=kwargs or None)
