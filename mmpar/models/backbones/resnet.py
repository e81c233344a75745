"""ResNet-18/34/50 backbones with an ImageNet or a CIFAR stem."""

from __future__ import annotations

from typing import Sequence, Union

import torch
from torch import nn

from mmpar.runner.model_setup.weight_init import apply_init_cfg

from ..builder import BACKBONES


def build_norm(cfg: dict, channels: int) -> nn.Module:
    """Build a normalisation layer from ``dict(type='BN'|'SyncBN'|'GN', requires_grad=True)``."""
    cfg = dict(cfg)
    kind = cfg.pop("type")
    requires_grad = cfg.pop("requires_grad", True)
    if kind == "BN":
        layer = nn.BatchNorm2d(channels, **cfg)
    elif kind == "SyncBN":
        layer = nn.SyncBatchNorm(channels, **cfg)
    elif kind == "GN":
        layer = nn.GroupNorm(num_channels=channels, **cfg)
    else:
        raise ValueError(f"norm_cfg type must be 'BN', 'SyncBN' or 'GN', got {kind!r}")
    for param in layer.parameters():
        param.requires_grad = requires_grad
    return layer


class _ResidualBlock(nn.Module):
    """``relu(branch(x) + shortcut(x))``: the part BasicBlock and Bottleneck share.

    A subclass builds its conv/norm layers in :meth:`_build_branch` (called first, so modules,
    parameters and checkpoint keys keep the order branch layers, then ``downsample``), runs
    them in :meth:`_branch` and names the branch's last norm layer in ``_last_norm_name``.

    Args:
        in_channels: Input channels.
        channels: Channels of the branch (its output has ``channels * expansion``).
        stride: Stride of the block.
        downsample: Shortcut that matches the branch's output shape; ``None``: identity.
        norm_cfg: Normalisation layer config (see :func:`build_norm`).
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
    ) -> None:
        super().__init__()
        self._build_branch(in_channels, channels, stride, norm_cfg)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    @property
    def last_norm(self) -> nn.Module:
        """The norm layer before the residual addition (zero-initialised by default)."""
        return getattr(self, self._last_norm_name)

    def _build_branch(self, in_channels: int, channels: int, stride: int, norm_cfg: dict) -> None:
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

    def _build_branch(self, in_channels: int, channels: int, stride: int, norm_cfg: dict) -> None:
        self.conv1 = nn.Conv2d(in_channels, channels, 3, stride, 1, bias=False)
        self.norm1 = build_norm(norm_cfg, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, 1, 1, bias=False)
        self.norm2 = build_norm(norm_cfg, channels)

    def _branch(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.norm1(self.conv1(x)))
        return self.norm2(self.conv2(out))


class Bottleneck(_ResidualBlock):
    """1×1 → 3×3 → 1×1 bottleneck block (ResNet-50), stride on the 3×3 conv."""

    expansion = 4
    _last_norm_name = "norm3"

    def _build_branch(self, in_channels: int, channels: int, stride: int, norm_cfg: dict) -> None:
        out_channels = channels * self.expansion
        self.conv1 = nn.Conv2d(in_channels, channels, 1, bias=False)
        self.norm1 = build_norm(norm_cfg, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, stride, 1, bias=False)
        self.norm2 = build_norm(norm_cfg, channels)
        self.conv3 = nn.Conv2d(channels, out_channels, 1, bias=False)
        self.norm3 = build_norm(norm_cfg, out_channels)

    def _branch(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.norm1(self.conv1(x)))
        out = self.relu(self.norm2(self.conv2(out)))
        return self.norm3(self.conv3(out))


@BACKBONES.register_module()
class ResNet(nn.Module):
    """ResNet backbone (He et al. 2016), returning the features of ``out_indices`` stages.

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
        norm_cfg: Normalisation layer config.
        norm_eval: Keep BatchNorm layers in eval mode while training (frozen statistics).
        zero_init_residual: Zero-init each block's last norm so blocks start as identities.
        init_cfg: mmcv-style init configs applied after the default init.

    Example:
        >>> net = ResNet(18, stem='cifar')
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
        norm_cfg: dict = dict(type="BN", requires_grad=True),  # noqa: B006
        norm_eval: bool = False,
        zero_init_residual: bool = True,
        init_cfg: Union[dict, list] | None = None,
    ) -> None:
        super().__init__()
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
        block, blocks_per_stage = self.arch_settings[depth]

        if stem == "cifar":
            self.stem = nn.Sequential(
                nn.Conv2d(in_channels, stem_channels, 3, 1, 1, bias=False),
                build_norm(norm_cfg, stem_channels),
                nn.ReLU(inplace=True),
            )
        else:
            self.stem = nn.Sequential(
                nn.Conv2d(in_channels, stem_channels, 7, 2, 3, bias=False),
                build_norm(norm_cfg, stem_channels),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(3, 2, 1),
            )
        self.layers = nn.ModuleList()
        channels_in = stem_channels
        for i in range(num_stages):
            channels = base_channels * 2**i
            self.layers.append(
                self._make_stage(
                    block, channels_in, channels, blocks_per_stage[i], strides[i], norm_cfg
                )
            )
            channels_in = channels * block.expansion
        self.feat_dim = channels_in

        self._default_init(zero_init_residual)
        apply_init_cfg(self, init_cfg)
        self._freeze_stages()

    @staticmethod
    def _make_stage(
        block: type, in_ch: int, channels: int, num_blocks: int, stride: int, norm_cfg: dict
    ) -> nn.Sequential:
        out_ch = channels * block.expansion
        downsample = None
        if stride != 1 or in_ch != out_ch:
            downsample = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride, bias=False), build_norm(norm_cfg, out_ch)
            )
        blocks = [block(in_ch, channels, stride, downsample, norm_cfg)]
        blocks += [block(out_ch, channels, 1, None, norm_cfg) for _ in range(num_blocks - 1)]
        return nn.Sequential(*blocks)

    def _default_init(self, zero_init_residual: bool) -> None:
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.SyncBatchNorm, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, (BasicBlock, Bottleneck)):
                    nn.init.zeros_(m.last_norm.weight)

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
        """Set train mode, keeping frozen stages (and all norms with ``norm_eval``) in eval."""
        super().train(mode)
        self._freeze_stages()
        if mode and self.norm_eval:
            for m in self.modules():
                if isinstance(m, (nn.BatchNorm2d, nn.SyncBatchNorm)):
                    m.eval()
        return self
