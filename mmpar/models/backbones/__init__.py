"""Backbones."""

from .lenet import LeNet
from .resnet import ResNet

__all__ = ["LeNet", "ResNet"]
