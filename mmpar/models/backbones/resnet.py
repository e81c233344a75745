"""ResNet-18/34/50 backbones with an ImageNet or a CIFAR stem, built from mmpar.cnn's layers.

Convolution, normalisation and activation layers come from mmpar.cnn's builders, so any
``conv_cfg`` / ``norm_cfg`` / ``act_cfg`` registered there (a plugin's norm included) works
here, as in mmcls 0.x. The module names are those of mmpar's first ResNet: checkpoints keep
their keys (``stem.0``, ``layers.<stage>.<block>.conv1``, ``norm1``, ``downsample.0``, ...).
"""

from __future__ import annotations

from typing import Sequence, Union

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

from mmpar.cnn import build_activation_layer, build_conv_layer, build_norm_layer
from mmpar.runner.base_module import BaseModule
from mmpar.runner.model_setup.weight_init import constant_init

from ..builder import BACKBONES

_RELU = dict(type="ReLU", inplace=True)


class _ResidualBlock(nn.Module):
    """``act(branch(x) + shortcut(x))``: the part BasicBlock and Bottleneck share.

    A subclass builds its conv/norm layers in :meth:`_build_branch` (called first, so modules,
    parameters and checkpoint keys keep the order branch layers, then ``downsample``), runs
    them in :meth:`_branch` and names the branch's last norm layer in ``_last_norm_name``.

    Args:
        in_channels: Input channels.
        channels: Channels of the branch (its output has ``channels * expansion``).
        stride: Stride of the block.
        downsample: Shortcut that matches the branch's output shape; ``None``: identity.
        norm_cfg: Normalisation layer config, see ``build_norm_layer``.
        conv_cfg: Convolution layer config (None: ``nn.Conv2d``), see ``build_conv_layer``.
        act_cfg: Activation layer config, see ``build_activation_layer``.
    """

    expansion = 1
    _last_norm_name: str

    def __init__(
        self,
        in_channels: int,
        channels: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        norm_cfg: dict = dict(type="BN"),  # noqa: B006 (read-only default)
        conv_cfg: dict | None = None,  # after norm_cfg: the blocks' first arguments stay in place
        act_cfg: dict = _RELU,  # noqa: B006 (read-only default)
    ) -> None:
        super().__init__()
        self._build_branch(in_channels, channels, stride, conv_cfg, norm_cfg)
        self.relu = build_activation_layer(act_cfg)
        self.downsample = downsample

    @property
    def last_norm(self) -> nn.Module:
        """The norm layer before the residual addition (zero-initialised by default)."""
        return getattr(self, self._last_norm_name)

    def _build_branch(
        self, in_channels: int, channels: int, stride: int, conv_cfg: dict | None, norm_cfg: dict
    ) -> None:
        raise NotImplementedError

    def _branch(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Residual block forward."""
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(self._branch(x) + identity)


class BasicBlock(_ResidualBlock):
    """Two 3×3 convolutions with a residual connection (ResNet-18/34)."""

    expansion = 1
    _last_norm_name = "norm2"

    def _build_branch(
        self, in_channels: int, channels: int, stride: int, conv_cfg: dict | None, norm_cfg: dict
    ) -> None:
        self.conv1 = build_conv_layer(conv_cfg, in_channels, channels, 3, stride, 1, bias=False)
        self.norm1 = build_norm_layer(norm_cfg, channels)[1]
        self.conv2 = build_conv_layer(conv_cfg, channels, channels, 3, 1, 1, bias=False)
        self.norm2 = build_norm_layer(norm_cfg, channels)[1]

    def _branch(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.norm1(self.conv1(x)))
        return self.norm2(self.conv2(out))


class Bottleneck(_ResidualBlock):
    """1×1 → 3×3 → 1×1 bottleneck block (ResNet-50), stride on the 3×3 conv."""

    expansion = 4
    _last_norm_name = "norm3"

    def _build_branch(
        self, in_channels: int, channels: int, stride: int, conv_cfg: dict | None, norm_cfg: dict
    ) -> None:
        out_channels = channels * self.expansion
        self.conv1 = build_conv_layer(conv_cfg, in_channels, channels, 1, bias=False)
        self.norm1 = build_norm_layer(norm_cfg, channels)[1]
        self.conv2 = build_conv_layer(conv_cfg, channels, channels, 3, stride, 1, bias=False)
        self.norm2 = build_norm_layer(norm_cfg, channels)[1]
        self.conv3 = build_conv_layer(conv_cfg, channels, out_channels, 1, bias=False)
        self.norm3 = build_norm_layer(norm_cfg, out_channels)[1]

    def _branch(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.norm1(self.conv1(x)))
        out = self.relu(self.norm2(self.conv2(out)))
        return self.norm3(self.conv3(out))


@BACKBONES.register_module()
class ResNet(BaseModule):
    """ResNet backbone (He et al. 2016), returning the features of ``out_indices`` stages.

    As in mmcls 0.x, the weights are set by :meth:`init_weights` (``tools/train.py`` calls it
    after building the model): ``init_cfg`` (by default Kaiming for convolutions, 1 and 0 for
    the norms), then, unless ``init_cfg`` is a ``Pretrained`` one, the zero-init of each
    block's last norm.

    Args:
        depth: 18, 34 or 50.
        in_channels: Input image channels.
        stem: ``'imagenet'`` (7×7 stride-2 conv + max-pool) or ``'cifar'`` (3×3 stride-1
            conv, no max-pool; for 32×32 inputs).
        stem_channels: Stem output channels.
        base_channels: Channels of the first stage (doubled each stage).
        num_stages: 1–4 stages.
        strides: Stride of each stage.
        out_indices: Stages whose outputs are returned (0-based).
        frozen_stages: Freeze the stem and stages ``0..frozen_stages-1`` (``-1``: nothing).
        conv_cfg: Convolution layer config (None: ``nn.Conv2d``), a ``CONV_LAYERS`` type.
        norm_cfg: Normalisation layer config, a ``NORM_LAYERS`` type (``BN``, ``SyncBN``,
            ``GN``, ``LN``, ``IN``, or one a plugin registers).
        act_cfg: Activation layer config, an ``ACTIVATION_LAYERS`` type.
        norm_eval: Keep BatchNorm layers in eval mode while training (frozen statistics).
        zero_init_residual: Zero-init each block's last norm so blocks start as identities.
        init_cfg: mmcv-style init configs, applied by :meth:`init_weights`.

    Example:
        >>> net = ResNet(18, stem='cifar')
        >>> net.init_weights()
        >>> [f.shape for f in net(torch.rand(2, 3, 32, 32))]
        [torch.Size([2, 512, 4, 4])]
    """

    arch_settings = {
        18: (BasicBlock, (2, 2, 2, 2)),
        34: (BasicBlock, (3, 4, 6, 3)),
        50: (Bottleneck, (3, 4, 6, 3)),
    }

    def __init__(
        self,
        depth: int,
        in_channels: int = 3,
        stem: str = "imagenet",
        stem_channels: int = 64,
        base_channels: int = 64,
        num_stages: int = 4,
        strides: Sequence[int] = (1, 2, 2, 2),
        out_indices: Sequence[int] = (3,),
        frozen_stages: int = -1,
        conv_cfg: dict | None = None,
        norm_cfg: dict = dict(type="BN", requires_grad=True),  # noqa: B006
        act_cfg: dict = _RELU,  # noqa: B006 (read-only default)
        norm_eval: bool = False,
        zero_init_residual: bool = True,
        init_cfg: Union[dict, list] | None = [  # noqa: B006 (BaseModule copies it)
            dict(type="Kaiming", layer="Conv2d", mode="fan_out", nonlinearity="relu"),
            dict(type="Constant", val=1, bias=0, layer=["_BatchNorm", "GroupNorm"]),
        ],
    ) -> None:
        super().__init__(init_cfg)
        if depth not in self.arch_settings:
            raise KeyError(f"ResNet depth must be one of {sorted(self.arch_settings)}, got {depth}")
        if stem not in ("imagenet", "cifar"):
            raise ValueError(f"ResNet stem must be 'imagenet' or 'cifar', got {stem!r}")
        if not 1 <= num_stages <= 4 or len(strides) < num_stages:
            raise ValueError(
                f"ResNet needs 1 <= num_stages <= 4 and a stride per stage, got "
                f"num_stages={num_stages}, strides={tuple(strides)}"
            )
        if any(not 0 <= i < num_stages for i in out_indices):
            raise ValueError(f"out_indices {tuple(out_indices)} must lie in [0, {num_stages})")
        self.depth = depth
        self.stem_type = stem
        self.out_indices = tuple(out_indices)
        self.frozen_stages = frozen_stages
        self.norm_eval = norm_eval
        self.zero_init_residual = zero_init_residual
        block, blocks_per_stage = self.arch_settings[depth]
        layer_cfgs = dict(conv_cfg=conv_cfg, norm_cfg=norm_cfg, act_cfg=act_cfg)

        kernel, stride, padding = (3, 1, 1) if stem == "cifar" else (7, 2, 3)
        stem_layers = [
            build_conv_layer(
                conv_cfg, in_channels, stem_channels, kernel, stride, padding, bias=False
            ),
            build_norm_layer(norm_cfg, stem_channels)[1],
            build_activation_layer(act_cfg),
        ]
        if stem == "imagenet":
            stem_layers.append(nn.MaxPool2d(3, 2, 1))
        self.stem = nn.Sequential(*stem_layers)
        self.layers = nn.ModuleList()
        channels_in = stem_channels
        for i in range(num_stages):
            channels = base_channels * 2**i
            self.layers.append(
                self._make_stage(
                    block, channels_in, channels, blocks_per_stage[i], strides[i], layer_cfgs
                )
            )
            channels_in = channels * block.expansion
        self.feat_dim = channels_in
        self._freeze_stages()

    @staticmethod
    def _make_stage(
        block: type, in_ch: int, channels: int, num_blocks: int, stride: int, layer_cfgs: dict
    ) -> nn.Sequential:
        out_ch = channels * block.expansion
        downsample = None
        if stride != 1 or in_ch != out_ch:
            downsample = nn.Sequential(
                build_conv_layer(layer_cfgs["conv_cfg"], in_ch, out_ch, 1, stride, bias=False),
                build_norm_layer(layer_cfgs["norm_cfg"], out_ch)[1],
            )
        blocks = [block(in_ch, channels, stride, downsample, **layer_cfgs)]
        blocks += [block(out_ch, channels, 1, None, **layer_cfgs) for _ in range(num_blocks - 1)]
        return nn.Sequential(*blocks)

    def init_weights(self) -> None:
        """Apply ``init_cfg``, then zero each block's last norm (not after ``Pretrained``)."""
        super().init_weights()
        pretrained = isinstance(self.init_cfg, dict) and self.init_cfg.get("type") == "Pretrained"
        if self.zero_init_residual and not pretrained:
            for m in self.modules():
                if isinstance(m, _ResidualBlock):
                    constant_init(m.last_norm, 0)

    def _freeze_stages(self) -> None:
        if self.frozen_stages < 0:
            return
        frozen = [self.stem, *self.layers[: self.frozen_stages]]
        for module in frozen:
            module.eval()
            for param in module.parameters():
                param.requires_grad = False

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Return the feature maps of ``out_indices``."""
        x = self.stem(x)
        outs = []
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i in self.out_indices:
                outs.append(x)
        return tuple(outs)

    def train(self, mode: bool = True) -> ResNet:
        """Set train mode; frozen stages (and with ``norm_eval`` all batch norms) stay in eval."""
        super().train(mode)
        self._freeze_stages()
        if mode and self.norm_eval:
            for m in self.modules():
                if isinstance(m, _BatchNorm):
                    m.eval()
        return self
