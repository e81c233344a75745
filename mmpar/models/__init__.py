"""Models: registries, classifiers, backbones, necks, heads and losses (mmcls 0.x layout)."""

from .backbones import LeNet, ResNet
from .builder import (
    BACKBONES,
    CLASSIFIERS,
    HEADS,
    LOSSES,
    MODELS,
    NECKS,
    build_backbone,
    build_classifier,
    build_head,
    build_loss,
    build_model,
    build_neck,
)
from .classifiers import ImageClassifier
from .heads import LinearClsHead
from .losses import CrossEntropyLoss, accuracy
from .necks import GlobalAveragePooling

__all__ = [
    "BACKBONES",
    "CLASSIFIERS",
    "HEADS",
    "LOSSES",
    "MODELS",
    "NECKS",
    "CrossEntropyLoss",
    "GlobalAveragePooling",
    "ImageClassifier",
    "LeNet",
    "LinearClsHead",
    "ResNet",
    "accuracy",
    "build_backbone",
    "build_classifier",
    "build_head",
    "build_loss",
    "build_model",
    "build_neck",
]
