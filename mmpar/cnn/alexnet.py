"""AlexNet (mmcv 1.x's ``mmcv.cnn.AlexNet``; the same layers, so the same state-dict keys)."""

from __future__ import annotations

import torch
from torch import nn

from ._pretrained import init_or_load

__all__ = ["AlexNet"]


class AlexNet(nn.Module):
    """AlexNet: five conv layers (``features``) and, with classes, three FC layers.

    State-dict keys are ``features.{0,3,6,8,10}.*`` and ``classifier.{1,4,6}.*``, as in mmcv
    (and torchvision), so their checkpoints load.

    Args:
        num_classes: Number of classes; ``<= 0`` builds no classifier and ``forward`` returns
            the feature map.
    """

    def __init__(self, num_classes: int = -1) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
        )
        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Dropout(),
                nn.Linear(256 * 6 * 6, 4096),
                nn.ReLU(inplace=True),
                nn.Dropout(),
                nn.Linear(4096, 4096),
                nn.ReLU(inplace=True),
                nn.Linear(4096, num_classes),
            )

    def init_weights(self, pretrained: str | None = None) -> None:
        """Load ``pretrained`` (a path or URL) non-strictly; None keeps PyTorch's init."""
        init_or_load(self, pretrained, lambda: None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Features of ``x`` (N, 3, H, W); class scores (N, num_classes) with a classifier.

        The classifier expects 224x224 inputs (a 6x6 feature map).
        """
        x = self.features(x)
        if self.num_classes > 0:
            x = self.classifier(x.view(x.size(0), 256 * 6 * 6))
        return x
