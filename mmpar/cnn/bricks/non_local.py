"""Non-local blocks (Wang et al., 2018): :class:`NonLocal1d`, :class:`NonLocal2d`, ``3d``.

Every position attends to every other: ``y = softmax-ish(theta(x) . phi(x)) @ g(x)`` and the
block returns ``x + conv_out(y)``. ``g``, ``theta``, ``phi`` and ``conv_out`` are
:class:`ConvModule` s, so a state dict has keys such as ``g.conv.weight`` and
``conv_out.conv.weight`` (``g.0.conv.weight`` with ``sub_sample``), as in mmcv.
"""

from __future__ import annotations

from abc import ABCMeta
from typing import Any

import torch
from torch import nn

from mmpar.runner.model_setup.weight_init import constant_init, normal_init

from .conv_module import ConvModule
from .registry import PLUGIN_LAYERS

_MODES = ("gaussian", "embedded_gaussian", "dot_product", "concatenation")


class _NonLocalNd(nn.Module, metaclass=ABCMeta):
    """The non-local block for any number of spatial dimensions (via ``conv_cfg``).

    Args:
        in_channels: Channels of the input.
        reduction: ``inter_channels = max(in_channels // reduction, 1)``. Default: 2.
        use_scale: Divide the ``embedded_gaussian`` affinities by ``sqrt(inter_channels)``.
            Default: True.
        conv_cfg: Config of the convolutions (None: Conv2d).
        norm_cfg: Config of a norm layer in ``conv_out`` only. Default: None.
        mode: ``'gaussian'``, ``'embedded_gaussian'``, ``'dot_product'`` or
            ``'concatenation'``. Default: ``'embedded_gaussian'``.
        **kwargs: ``std`` and ``zeros_init`` for :meth:`init_weights`.

    Raises:
        ValueError: An unknown ``mode``.
    """

    def __init__(
        self,
        in_channels: int,
        reduction: int = 2,
        use_scale: bool = True,
        conv_cfg: dict | None = None,
        norm_cfg: dict | None = None,
        mode: str = "embedded_gaussian",
        **kwargs: Any,
    ) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.reduction = reduction
        self.use_scale = use_scale
        self.inter_channels = max(in_channels // reduction, 1)
        self.mode = mode
        if mode not in _MODES:
            raise ValueError(f"Mode should be one of {_MODES}, but got {mode!r} instead.")

        def conv1x1(in_ch: int, out_ch: int, norm: dict | None = None) -> ConvModule:
            return ConvModule(
                in_ch, out_ch, kernel_size=1, conv_cfg=conv_cfg, norm_cfg=norm, act_cfg=None
            )

        self.g = conv1x1(in_channels, self.inter_channels)
        self.conv_out = conv1x1(self.inter_channels, in_channels, norm_cfg)
        if mode != "gaussian":
            self.theta = conv1x1(in_channels, self.inter_channels)
            self.phi = conv1x1(in_channels, self.inter_channels)
        if mode == "concatenation":
            # A 2-D conv on purpose (mmcv's): it sees the [N, 2C, HW, HW] pair map.
            self.concat_project = ConvModule(
                self.inter_channels * 2,
                1,
                kernel_size=1,
                stride=1,
                padding=0,
                bias=False,
                act_cfg=dict(type="ReLU"),
            )
        self.init_weights(**kwargs)

    def init_weights(self, std: float = 0.01, zeros_init: bool = True) -> None:
        """Normal(0, std) for g, theta, phi; conv_out (or its norm) zeroed or normal.

        Zeroing ``conv_out`` (``zeros_init``) makes the block start as the identity.
        """
        convs = [self.g] if self.mode == "gaussian" else [self.g, self.theta, self.phi]
        for module in convs:
            normal_init(module.conv, std=std)
        out_layer = self.conv_out.conv if self.conv_out.norm_cfg is None else self.conv_out.norm
        if zeros_init:
            constant_init(out_layer, 0)
        else:
            normal_init(out_layer, std=std)

    def gaussian(self, theta_x: torch.Tensor, phi_x: torch.Tensor) -> torch.Tensor:
        """Affinities ``softmax(theta_x @ phi_x)`` over the last dimension."""
        return torch.matmul(theta_x, phi_x).softmax(dim=-1)

    def embedded_gaussian(self, theta_x: torch.Tensor, phi_x: torch.Tensor) -> torch.Tensor:
        """Like :meth:`gaussian`, scaled by ``1 / sqrt(inter_channels)`` when ``use_scale``."""
        pairwise = torch.matmul(theta_x, phi_x)
        if self.use_scale:
            pairwise /= theta_x.shape[-1] ** 0.5
        return pairwise.softmax(dim=-1)

    def dot_product(self, theta_x: torch.Tensor, phi_x: torch.Tensor) -> torch.Tensor:
        """Affinities ``theta_x @ phi_x`` divided by the number of positions."""
        pairwise = torch.matmul(theta_x, phi_x)
        return pairwise / pairwise.shape[-1]

    def concatenation(self, theta_x: torch.Tensor, phi_x: torch.Tensor) -> torch.Tensor:
        """Affinities from ``concat_project`` of every (theta, phi) pair, over the positions."""
        h, w = theta_x.size(2), phi_x.size(3)
        pairs = torch.cat([theta_x.repeat(1, 1, 1, w), phi_x.repeat(1, 1, h, 1)], dim=1)
        pairwise = self.concat_project(pairs)
        n, _, h, w = pairwise.size()
        pairwise = pairwise.view(n, h, w)
        return pairwise / pairwise.shape[-1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``x + conv_out(y)``, y the affinity-weighted sum of ``g(x)``."""
        n = x.size(0)
        g_x = self.g(x).view(n, self.inter_channels, -1).permute(0, 2, 1)  # [N, P, C]
        if self.mode == "gaussian":
            theta_x = x.view(n, self.in_channels, -1).permute(0, 2, 1)
            source = self.phi(x) if self.sub_sample else x
            phi_x = source.view(n, self.in_channels, -1)
        elif self.mode == "concatenation":
            theta_x = self.theta(x).view(n, self.inter_channels, -1, 1)
            phi_x = self.phi(x).view(n, self.inter_channels, 1, -1)
        else:
            theta_x = self.theta(x).view(n, self.inter_channels, -1).permute(0, 2, 1)
            phi_x = self.phi(x).view(n, self.inter_channels, -1)
        pairwise = getattr(self, self.mode)(theta_x, phi_x)  # [N, P, P']
        y = torch.matmul(pairwise, g_x).permute(0, 2, 1).contiguous()
        y = y.reshape(n, self.inter_channels, *x.size()[2:])
        return x + self.conv_out(y)


def _sub_sample(block: _NonLocalNd, pool: nn.Module) -> None:
    # Pool the keys and values (g and phi) spatially; with 'gaussian', phi is the pool alone.
    block.g = nn.Sequential(block.g, pool)
    block.phi = pool if block.mode == "gaussian" else nn.Sequential(block.phi, pool)


class NonLocal1d(_NonLocalNd):
    """1-D non-local block (on ``[N, C, L]``).

    Args:
        in_channels: Channels of the input.
        sub_sample: Max-pool (size 2) the keys and values. Default: False.
        conv_cfg: Config of the convolutions. Default: ``Conv1d``.
        **kwargs: The other arguments of the N-d block (``reduction``, ``mode``, ...).
    """

    def __init__(
        self,
        in_channels: int,
        sub_sample: bool = False,
        conv_cfg: dict = dict(type="Conv1d"),  # noqa: B006 (mmcv's default; read-only)
        **kwargs: Any,
    ) -> None:
        super().__init__(in_channels, conv_cfg=conv_cfg, **kwargs)
        self.sub_sample = sub_sample
        if sub_sample:
            _sub_sample(self, nn.MaxPool1d(kernel_size=2))


@PLUGIN_LAYERS.register_module()
class NonLocal2d(_NonLocalNd):
    """2-D non-local block (on ``[N, C, H, W]``); plugin name ``nonlocal_block``.

    Args:
        in_channels: Channels of the input.
        sub_sample: Max-pool (2x2) the keys and values. Default: False.
        conv_cfg: Config of the convolutions. Default: ``Conv2d``.
        **kwargs: The other arguments of the N-d block (``reduction``, ``mode``, ...).
    """

    _abbr_ = "nonlocal_block"

    def __init__(
        self,
        in_channels: int,
        sub_sample: bool = False,
        conv_cfg: dict = dict(type="Conv2d"),  # noqa: B006 (mmcv's default; read-only)
        **kwargs: Any,
    ) -> None:
        super().__init__(in_channels, conv_cfg=conv_cfg, **kwargs)
        self.sub_sample = sub_sample
        if sub_sample:
            _sub_sample(self, nn.MaxPool2d(kernel_size=(2, 2)))


class NonLocal3d(_NonLocalNd):
    """3-D non-local block (on ``[N, C, T, H, W]``).

    Args:
        in_channels: Channels of the input.
        sub_sample: Max-pool (1x2x2, space only) the keys and values. Default: False.
        conv_cfg: Config of the convolutions. Default: ``Conv3d``.
        **kwargs: The other arguments of the N-d block (``reduction``, ``mode``, ...).
    """

    def __init__(
        self,
        in_channels: int,
        sub_sample: bool = False,
        conv_cfg: dict = dict(type="Conv3d"),  # noqa: B006 (mmcv's default; read-only)
        **kwargs: Any,
    ) -> None:
        super().__init__(in_channels, conv_cfg=conv_cfg, **kwargs)
        self.sub_sample = sub_sample
        if sub_sample:
            _sub_sample(self, nn.MaxPool3d(kernel_size=(1, 2, 2)))


__all__ = ["NonLocal1d", "NonLocal2d", "NonLocal3d"]
