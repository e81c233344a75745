"""ResNet backbone (mmcv 1.x's ``mmcv.cnn.ResNet``; same layers, so the same state-dict keys).

This is mmcv's plain backbone (no norm/conv configs, no init_cfg); the configurable ResNet
of mmcls-style configs is :class:`mmpar.models.ResNet`.
"""

from __future__ import annotations

from typing import Sequence, Union

import torch.utils.checkpoint as cp
from torch import Tensor, nn

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.cnn.utils import constant_init as constant_init
from mmpar.cnn.utils import kaiming_init as kaiming_init

from ._frozen import apply_bn_eval, freeze
from ._pretrained import default_init, init_or_load

__all__ = ["BasicBlock", "Bottleneck", "ResNet", "conv3x3", "make_res_layer"]

_STYLES = ("pytorch", "caffe")


def conv3x3(in_planes: int, out_planes: int, stride: int = 1, dilation: int = 1) -> nn.Module:
    """A bias-free 3x3 convolution whose padding keeps the size (at stride 1)."""
    return nn.Conv2d(
        in_planes,
        out_planes,
        kernel_size=3,
        stride=stride,
        padding=dilation,
        dilation=dilation,
        bias=False,
    )


class BasicBlock(nn.Module):
    """Two 3x3 convs with a residual connection (ResNet-18/34).

    Args:
        inplanes: Input channels.
        planes: Output channels.
        stride: Stride of the first conv.
        dilation: Dilation of the first conv.
        downsample: Shortcut module (None: identity).
        style: ``'pytorch'`` or ``'caffe'`` (no difference for this block).
        with_cp: Not supported by this block (must be False), as in mmcv.
    """

    expansion = 1

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        dilation: int = 1,
        downsample: nn.Module | None = None,
        style: str = "pytorch",
        with_cp: bool = False,
    ) -> None:
        super().__init__()
        assert style in _STYLES, f"style must be one of {_STYLES}, got {style!r}"
        assert not with_cp, "BasicBlock does not support with_cp"
        self.conv1 = conv3x3(inplanes, planes, stride, dilation)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride
        self.dilation = dilation

    def forward(self, x: Tensor) -> Tensor:
        """``relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))``."""
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    """1x1, 3x3, 1x1 convs (4x expansion) with a residual connection (ResNet-50 and deeper).

    Args:
        inplanes: Input channels.
        planes: Channels of the middle conv (the output has ``4 * planes``).
        stride: Stride of the block: on the 3x3 conv (``'pytorch'`` style) or on the first
            1x1 conv (``'caffe'`` style).
        dilation: Dilation of the 3x3 conv.
        downsample: Shortcut module (None: identity).
        style: ``'pytorch'`` or ``'caffe'``.
        with_cp: Recompute the block in backward (gradient checkpointing) to save memory.
    """

    expansion = 4

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        dilation: int = 1,
        downsample: nn.Module | None = None,
        style: str = "pytorch",
        with_cp: bool = False,
    ) -> None:
        super().__init__()
        assert style in _STYLES, f"style must be one of {_STYLES}, got {style!r}"
        conv1_stride, conv2_stride = (1, stride) if style == "pytorch" else (stride, 1)
        # Created in mmcv's order (conv1, conv2, bn1, bn2, conv3, bn3) so that the
        # parameter order, which optimizer state follows, matches mmcv's.
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=1, stride=conv1_stride, bias=False)
        self.conv2 = nn.Conv2d(
            planes,
            planes,
            kernel_size=3,
            stride=conv2_stride,
            padding=dilation,
            dilation=dilation,
            bias=False,
        )
        self.bn1 = nn.BatchNorm2d(planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride
        self.dilation = dilation
        self.with_cp = with_cp

    def _residual_sum(self, x: Tensor) -> Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return out + identity

    def forward(self, x: Tensor) -> Tensor:
        """``relu(branch(x) + shortcut(x))``, checkpointed when ``with_cp`` and training."""
        if self.with_cp and x.requires_grad:
            out = cp.checkpoint(self._residual_sum, x, use_reentrant=False)
        else:
            out = self._residual_sum(x)
        return self.relu(out)


def make_res_layer(
    block: type[nn.Module],
    inplanes: int,
    planes: int,
    blocks: int,
    stride: int = 1,
    dilation: int = 1,
    style: str = "pytorch",
    with_cp: bool = False,
) -> nn.Module:
    """A stage of ``blocks`` residual blocks; the first one strides and gets the shortcut conv.

    The shortcut (``0.downsample``: a 1x1 conv and a BatchNorm) is added when the stride or
    the channel count changes.
    """
    downsample = None
    if stride != 1 or inplanes != planes * block.expansion:
        downsample = nn.Sequential(
            nn.Conv2d(inplanes, planes * block.expansion, 1, stride=stride, bias=False),
            nn.BatchNorm2d(planes * block.expansion),
        )
    layers = [block(inplanes, planes, stride, dilation, downsample, style=style, with_cp=with_cp)]
    inplanes = planes * block.expansion
    for _ in range(1, blocks):
        layers.append(block(inplanes, planes, 1, dilation, style=style, with_cp=with_cp))
    return nn.Sequential(*layers)


class ResNet(nn.Module):
    """ResNet-18/34/50/101/152 backbone (7x7 stem and max-pool, then ``layer1``...).

    Args:
        depth: 18, 34, 50, 101 or 152.
        num_stages: Stages to build (1 to 4).
        strides: Stride of the first block of each stage.
        dilations: Dilation of each stage.
        out_indices: Stages whose outputs ``forward`` returns.
        style: ``'pytorch'`` (stride on the 3x3 conv) or ``'caffe'`` (on the first 1x1).
        frozen_stages: Freeze the stem and stages ``1..frozen_stages`` during training
            (eval mode, no gradients); -1 freezes nothing, 0 only the stem.
        bn_eval: Keep BatchNorm layers in eval mode (frozen running statistics).
        bn_frozen: Also freeze BatchNorm weights and biases (with ``bn_eval``).
        with_cp: Gradient checkpointing in Bottleneck blocks.

    Raises:
        KeyError: An unknown ``depth`` (mmcv's type).
    """

    arch_settings = {
        18: (BasicBlock, (2, 2, 2, 2)),
        34: (BasicBlock, (3, 4, 6, 3)),
        50: (Bottleneck, (3, 4, 6, 3)),
        101: (Bottleneck, (3, 4, 23, 3)),
        152: (Bottleneck, (3, 8, 36, 3)),
    }

    def __init__(
        self,
        depth: int,
        num_stages: int = 4,
        strides: Sequence[int] = (1, 2, 2, 2),
        dilations: Sequence[int] = (1, 1, 1, 1),
        out_indices: Sequence[int] = (0, 1, 2, 3),
        style: str = "pytorch",
        frozen_stages: int = -1,
        bn_eval: bool = True,
        bn_frozen: bool = False,
        with_cp: bool = False,
    ) -> None:
        super().__init__()
        if depth not in self.arch_settings:
            raise KeyError(
                f"invalid depth {depth} for resnet (use one of {list(self.arch_settings)})"
            )
        assert 1 <= num_stages <= 4, f"num_stages must be 1 to 4, got {num_stages}"
        block, stage_blocks = self.arch_settings[depth]
        stage_blocks = stage_blocks[:num_stages]
        assert len(strides) == len(dilations) == num_stages, "one stride and dilation per stage"
        assert max(out_indices) < num_stages, f"out_indices {out_indices} beyond the stages"

        self.out_indices = out_indices
        self.style = style
        self.frozen_stages = frozen_stages
        self.bn_eval = bn_eval
        self.bn_frozen = bn_frozen
        self.with_cp = with_cp

        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

        self.res_layers: list[str] = []
        for i, num_blocks in enumerate(stage_blocks):
            planes = 64 * 2**i
            layer = make_res_layer(
                block,
                self.inplanes,
                planes,
                num_blocks,
                stride=strides[i],
                dilation=dilations[i],
                style=style,
                with_cp=with_cp,
            )
            self.inplanes = planes * block.expansion
            self.add_module(f"layer{i + 1}", layer)
            self.res_layers.append(f"layer{i + 1}")
        self.feat_dim = block.expansion * 64 * 2 ** (len(stage_blocks) - 1)

    def init_weights(self, pretrained: str | None = None) -> None:
        """Load ``pretrained`` non-strictly, or Kaiming convs and BatchNorm weight 1, bias 0."""
        init_or_load(self, pretrained, lambda: default_init(self))

    def forward(self, x: Tensor) -> Union[Tensor, tuple[Tensor, ...]]:
        """The outputs of the ``out_indices`` stages: a tensor for one, else a tuple."""
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        outs = []
        for i, name in enumerate(self.res_layers):
            x = getattr(self, name)(x)
            if i in self.out_indices:
                outs.append(x)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def train(self, mode: bool = True) -> ResNet:
        """Set the training mode, then re-apply ``bn_eval``/``bn_frozen`` and frozen stages."""
        super().train(mode)
        if self.bn_eval:
            apply_bn_eval(self, self.bn_frozen)
        if mode and self.frozen_stages >= 0:
            freeze(self.conv1, eval_mode=False)  # as mmcv: the stem conv keeps its mode
            stages = [getattr(self, f"layer{i}") for i in range(1, self.frozen_stages + 1)]
            for module in [self.bn1, *stages]:
                freeze(module)
        return self
