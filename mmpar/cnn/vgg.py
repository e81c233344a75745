"""VGG backbone (mmcv 1.x's ``mmcv.cnn.VGG``; same layers, so the same state-dict keys)."""

from __future__ import annotations

from typing import Sequence, Union

from torch import Tensor, nn

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.cnn.utils import constant_init as constant_init
from mmpar.cnn.utils import kaiming_init as kaiming_init
from mmpar.cnn.utils import normal_init as normal_init

from ._frozen import apply_bn_eval, freeze
from ._pretrained import default_init, init_or_load

__all__ = ["VGG", "conv3x3", "make_vgg_layer"]


def conv3x3(in_planes: int, out_planes: int, dilation: int = 1) -> nn.Module:
    """A 3x3 convolution (with bias) whose padding keeps the spatial size."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, padding=dilation, dilation=dilation)


def make_vgg_layer(
    inplanes: int,
    planes: int,
    num_blocks: int,
    dilation: int = 1,
    with_bn: bool = False,
    ceil_mode: bool = False,
) -> list[nn.Module]:
    """One VGG stage as a flat list: ``num_blocks`` x (conv [, BN], ReLU), then a 2x2 max-pool."""
    layers: list[nn.Module] = []
    for _ in range(num_blocks):
        layers.append(conv3x3(inplanes, planes, dilation))
        if with_bn:
            layers.append(nn.BatchNorm2d(planes))
        layers.append(nn.ReLU(inplace=True))
        inplanes = planes
    layers.append(nn.MaxPool2d(kernel_size=2, stride=2, ceil_mode=ceil_mode))
    return layers


class VGG(nn.Module):
    """VGG-11/13/16/19 backbone; all stages live in one ``nn.Sequential`` named ``features``.

    Args:
        depth: 11, 13, 16 or 19.
        with_bn: Put a BatchNorm after every conv.
        num_classes: Build the 3-layer classifier (for 224x224 inputs) when > 0.
        num_stages: Stages to build (1 to 5).
        dilations: Dilation of each stage.
        out_indices: Stages whose outputs ``forward`` returns.
        frozen_stages: Stages (counted from the first) put in eval mode with frozen
            parameters during training; -1 freezes none.
        bn_eval: Keep BatchNorm layers in eval mode (frozen running statistics).
        bn_frozen: Also freeze BatchNorm weights and biases (with ``bn_eval``).
        ceil_mode: ``ceil_mode`` of the max-pool layers.
        with_last_pool: Keep the max-pool that ends the last stage.

    Raises:
        KeyError: An unknown ``depth`` (mmcv's type).
    """

    arch_settings = {
        11: (1, 1, 2, 2, 2),
        13: (2, 2, 2, 2, 2),
        16: (2, 2, 3, 3, 3),
        19: (2, 2, 4, 4, 4),
    }

    def __init__(
        self,
        depth: int,
        with_bn: bool = False,
        num_classes: int = -1,
        num_stages: int = 5,
        dilations: Sequence[int] = (1, 1, 1, 1, 1),
        out_indices: Sequence[int] = (0, 1, 2, 3, 4),
        frozen_stages: int = -1,
        bn_eval: bool = True,
        bn_frozen: bool = False,
        ceil_mode: bool = False,
        with_last_pool: bool = True,
    ) -> None:
        super().__init__()
        if depth not in self.arch_settings:
            raise KeyError(f"invalid depth {depth} for vgg (use one of {list(self.arch_settings)})")
        assert 1 <= num_stages <= 5, f"num_stages must be 1 to 5, got {num_stages}"
        assert len(dilations) == num_stages, "one dilation per stage"
        # Empty out_indices (only the classifier's output) failed in mmcv's max(); allowed here.
        assert max(out_indices, default=0) <= num_stages, f"out_indices {out_indices} too large"
        self.stage_blocks = self.arch_settings[depth][:num_stages]
        self.num_classes = num_classes
        self.out_indices = out_indices
        self.frozen_stages = frozen_stages
        self.bn_eval = bn_eval
        self.bn_frozen = bn_frozen

        self.inplanes = 3
        layers: list[nn.Module] = []
        # [start, end) of each stage inside ``features``: forward and freezing walk these.
        self.range_sub_modules: list[list[int]] = []
        for i, num_blocks in enumerate(self.stage_blocks):
            planes = 64 * 2**i if i < 4 else 512
            stage = make_vgg_layer(
                self.inplanes, planes, num_blocks, dilations[i], with_bn, ceil_mode
            )
            self.range_sub_modules.append([len(layers), len(layers) + len(stage)])
            layers.extend(stage)
            self.inplanes = planes
        if not with_last_pool:
            layers.pop()
            self.range_sub_modules[-1][1] -= 1
        self.module_name = "features"
        self.add_module(self.module_name, nn.Sequential(*layers))

        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Linear(512 * 7 * 7, 4096),
                nn.ReLU(True),
                nn.Dropout(),
                nn.Linear(4096, 4096),
                nn.ReLU(True),
                nn.Dropout(),
                nn.Linear(4096, num_classes),
            )

    def init_weights(self, pretrained: str | None = None) -> None:
        """Load ``pretrained`` non-strictly, or use mmcv's default initialisation.

        The default: Kaiming (fan-out) convs, BatchNorm weight 1 and bias 0, linear layers
        normal with std 0.01.
        """
        init_or_load(self, pretrained, lambda: default_init(self, linear_std=0.01))

    def forward(self, x: Tensor) -> Union[Tensor, tuple[Tensor, ...]]:
        """The outputs of the ``out_indices`` stages (then the class scores, with a classifier).

        One output is returned as a tensor, several as a tuple.
        """
        features = getattr(self, self.module_name)
        outs = []
        for i, (start, end) in enumerate(self.range_sub_modules):
            for j in range(start, end):
                x = features[j](x)
            if i in self.out_indices:
                outs.append(x)
        if self.num_classes > 0:
            outs.append(self.classifier(x.view(x.size(0), -1)))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def train(self, mode: bool = True) -> VGG:
        """Set the training mode, then re-apply ``bn_eval``/``bn_frozen`` and frozen stages."""
        super().train(mode)
        if self.bn_eval:
            apply_bn_eval(self, self.bn_frozen)
        features = getattr(self, self.module_name)
        if mode and self.frozen_stages >= 0:
            for start, end in self.range_sub_modules[: self.frozen_stages]:
                for j in range(start, end):
                    freeze(features[j])
        return self
