"""Models: registries, classifiers, backbones, necks, heads and losses (mmcls 0.x layout)."""

from . import builder
from .backbones import LeNet, ResNet
from .builder import *  # noqa: F403 (the registries and builders, listed in builder.__all__)
from .classifiers import ImageClassifier
from .heads import LinearClsHead
from .losses import CrossEntropyLoss, accuracy
from .necks import GlobalAveragePooling

# builder.py lists the registries and builders; the package leaves out its cfg helper.
__all__ = [
    *(name for name in builder.__all__ if name != "build_model_from_cfg"),
    "CrossEntropyLoss",
    "GlobalAveragePooling",
    "ImageClassifier",
    "LeNet",
    "LinearClsHead",
    "ResNet",
    "accuracy",
]
