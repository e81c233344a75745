"""The conv net of PyTorch's "Training a classifier" (blitz) tutorial, as a backbone."""

from __future__ import annotations

import numbers
from typing import Sequence, Union

import torch
from torch import nn

from mmpar.cnn import build_activation_layer, build_conv_layer
from mmpar.runner.base_module import BaseModule

from ..builder import BACKBONES


@BACKBONES.register_module()
class LeNet(BaseModule):
    """conv(6, k) → ReLU → max-pool 2 → conv(16, k) → ReLU → max-pool 2 → fc 120 → fc 84.

    With the defaults it is the tutorial's network for 32×32 RGB (the final fc 84 → 10 is the
    head's job: ``LinearClsHead(in_channels=84)``). Smaller inputs need padding so the second
    convolution still fits, e.g. 8×8 digits: ``LeNet(in_channels=1, input_size=8, padding=2)``.

    Args:
        in_channels: Input channels.
        input_size: Input ``(h, w)`` or side length; fixes the size of the first fc layer.
        kernel_size: Convolution kernel size.
        padding: Convolution padding.
        conv_cfg: Convolution layer config (None: ``nn.Conv2d``), a ``CONV_LAYERS`` type.
        act_cfg: Activation layer config, an ``ACTIVATION_LAYERS`` type.
        init_cfg: mmcv-style init configs, applied by ``init_weights()`` (None: PyTorch's
            default initialisation).

    Returns (forward):
        A 1-tuple with the N×84 features.
    """

    def __init__(
        self,
        in_channels: int = 3,
        input_size: Union[int, Sequence[int]] = 32,
        kernel_size: int = 5,
        padding: int = 0,
        conv_cfg: dict | None = None,
        act_cfg: dict = dict(type="ReLU", inplace=True),  # noqa: B006 (read-only default)
        init_cfg: Union[dict, list] | None = None,
    ) -> None:
        super().__init__(init_cfg)
        h, w = (input_size, input_size) if isinstance(input_size, numbers.Integral) else input_size
        self.input_size = (int(h), int(w))

        def out_size(side: int) -> int:
            conv1 = side + 2 * padding - kernel_size + 1
            conv2 = conv1 // 2 + 2 * padding - kernel_size + 1
            return conv2 // 2

        fh, fw = out_size(h), out_size(w)
        if fh < 1 or fw < 1:
            raise ValueError(
                f"LeNet: input {self.input_size} is too small for kernel_size={kernel_size}, "
                f"padding={padding}; increase padding (e.g. padding=2 for 8×8 inputs)"
            )
        self.features = nn.Sequential(
            build_conv_layer(conv_cfg, in_channels, 6, kernel_size, padding=padding),
            build_activation_layer(act_cfg),
            nn.MaxPool2d(2, 2),
            build_conv_layer(conv_cfg, 6, 16, kernel_size, padding=padding),
            build_activation_layer(act_cfg),
            nn.MaxPool2d(2, 2),
        )
        self.fc = nn.Sequential(
            nn.Linear(16 * fh * fw, 120),
            build_activation_layer(act_cfg),
            nn.Linear(120, 84),
            build_activation_layer(act_cfg),
        )
        self.feat_dim = 84

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor]:
        """Return ``(features,)``; raises ValueError for an input size other than configured."""
        if tuple(x.shape[-2:]) != self.input_size:
            raise ValueError(
                f"LeNet was built for {self.input_size} inputs but got {tuple(x.shape[-2:])}; "
                f"set input_size (and padding) to match the images"
            )
        return (self.fc(torch.flatten(self.features(x), 1)),)
