"""Model registries (mmcls 0.x layout: one ``MODELS`` registry, per-kind aliases) and builders.

``MODELS`` is mmcv's root model registry, :data:`mmpar.cnn.MODELS` itself: mmpar's models
live where an mmcv user's ``@MODELS.register_module()`` puts theirs, and the registries that
downstream projects create with ``Registry('models', parent=mmcv.cnn.MODELS)`` are its
children, so a config can name ``'mmpar.ResNet'`` from them (and ``'mmcls.ResNet'`` from here).
"""

from __future__ import annotations

from typing import Any

from torch import nn

from mmpar.cnn.builder import MODELS, build_model_from_cfg

# Aliases, as in mmcls 0.x: every kind lives in one registry, so any config can name any model.
BACKBONES = MODELS
NECKS = MODELS
HEADS = MODELS
LOSSES = MODELS
CLASSIFIERS = MODELS


__all__ = [
    "BACKBONES",
    "CLASSIFIERS",
    "HEADS",
    "LOSSES",
    "MODELS",
    "NECKS",
    "build_backbone",
    "build_classifier",
    "build_head",
    "build_loss",
    "build_model",
    "build_model_from_cfg",
    "build_neck",
]


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
