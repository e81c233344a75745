""":class:`ConvModule`: a convolution with its norm and activation layers, in a chosen order."""

from __future__ import annotations

import warnings
from typing import Union

import torch
from torch import nn

from mmpar.runner.model_setup.weight_init import constant_init, kaiming_init
from mmpar.utils.parrots_wrapper import _BatchNorm, _InstanceNorm

from ..types import IntPair
from .activation import build_activation_layer
from .conv import build_conv_layer
from .norm import build_norm_layer
from .padding import build_padding_layer
from .registry import PLUGIN_LAYERS

# Padding modes nn.Conv2d implements itself; any other is a PADDING_LAYERS layer before the conv.
_CONV_PADDING_MODES = ("zeros", "circular")
# Activations whose constructor has no ``inplace`` argument.
_NO_INPLACE = ("Tanh", "PReLU", "Sigmoid", "HSigmoid", "Swish", "GELU")


@PLUGIN_LAYERS.register_module()
class ConvModule(nn.Module):
    """Convolution, normalisation and activation, built from configs and run in ``order``.

    Its sub-modules are ``conv``, the norm layer under the name :func:`build_norm_layer` gives
    it (``bn``, ``gn``, ``ln``, ... also reachable as ``self.norm``), ``activate`` and, for an
    explicit padding mode, ``padding_layer``: the state-dict keys of mmcv's ConvModule.

    Args:
        in_channels: Input channels.
        out_channels: Output channels.
        kernel_size: Kernel size.
        stride: Stride. Default: 1.
        padding: Padding on each side. Default: 0.
        dilation: Dilation. Default: 1.
        groups: Groups. Default: 1.
        bias: Learn a conv bias; ``'auto'`` learns one only without a norm layer.
        conv_cfg: Config of the conv layer (None: ``Conv2d``).
        norm_cfg: Config of the norm layer (None: no norm layer).
        act_cfg: Config of the activation (None: no activation). Default: ReLU.
        inplace: Default ``inplace`` of the activation (not passed to the activations
            that have none: Tanh, PReLU, Sigmoid, HSigmoid, Swish, GELU). Default: True.
        with_spectral_norm: Wrap the conv in ``nn.utils.spectral_norm``. Default: False.
        padding_mode: ``'zeros'`` or ``'circular'`` (done by the conv), or a ``PADDING_LAYERS``
            name such as ``'reflect'`` or ``'replicate'`` (a padding layer before the conv,
            which then pads nothing). Default: ``'zeros'``. (mmcv 1.7.2 accepted
            ``'circular'`` but never passed it on, so its conv padded with zeros.)
        order: The order of ``'conv'``, ``'norm'`` and ``'act'``. Default: conv, norm, act.

    Raises:
        AssertionError: A cfg is not a dict or None; ``order`` is not a 3-tuple of the three
            names.
        KeyError: An unknown layer type or padding mode.
    """

    _abbr_ = "conv_block"

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntPair,
        stride: IntPair = 1,
        padding: IntPair = 0,
        dilation: IntPair = 1,
        groups: int = 1,
        bias: Union[bool, str] = "auto",
        conv_cfg: dict | None = None,
        norm_cfg: dict | None = None,
        act_cfg: dict | None = dict(type="ReLU"),  # noqa: B006 (mmcv's default; read-only)
        inplace: bool = True,
        with_spectral_norm: bool = False,
        padding_mode: str = "zeros",
        order: tuple = ("conv", "norm", "act"),
    ) -> None:
        super().__init__()
        assert conv_cfg is None or isinstance(conv_cfg, dict), "conv_cfg must be a dict or None"
        assert norm_cfg is None or isinstance(norm_cfg, dict), "norm_cfg must be a dict or None"
        assert act_cfg is None or isinstance(act_cfg, dict), "act_cfg must be a dict or None"
        assert isinstance(order, tuple) and len(order) == 3, f"order must be a 3-tuple: {order}"
        assert set(order) == {"conv", "norm", "act"}, f"order must name conv, norm, act: {order}"
        self.conv_cfg = conv_cfg
        self.norm_cfg = norm_cfg
        self.act_cfg = act_cfg
        self.inplace = inplace
        self.with_spectral_norm = with_spectral_norm
        self.with_explicit_padding = padding_mode not in _CONV_PADDING_MODES
        self.order = order
        self.with_norm = norm_cfg is not None
        self.with_activation = act_cfg is not None
        if bias == "auto":
            bias = not self.with_norm  # a norm right after the conv makes its bias redundant
        self.with_bias = bias

        if self.with_explicit_padding:
            self.padding_layer = build_padding_layer(dict(type=padding_mode), padding)
        conv_extra = {"padding_mode": padding_mode} if padding_mode == "circular" else {}
        self.conv = build_conv_layer(
            conv_cfg,
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=0 if self.with_explicit_padding else padding,
            dilation=dilation,
            groups=groups,
            bias=bias,
            **conv_extra,
        )
        # The conv's attributes, at the block's level (as given: padding is the block's).
        self.in_channels = self.conv.in_channels
        self.out_channels = self.conv.out_channels
        self.kernel_size = self.conv.kernel_size
        self.stride = self.conv.stride
        self.padding = padding
        self.dilation = self.conv.dilation
        self.transposed = self.conv.transposed
        self.output_padding = self.conv.output_padding
        self.groups = self.conv.groups
        if with_spectral_norm:
            self.conv = nn.utils.spectral_norm(self.conv)

        self.norm_name: str | None = None
        if self.with_norm:
            after_conv = order.index("norm") > order.index("conv")
            norm_channels = out_channels if after_conv else in_channels
            self.norm_name, norm = build_norm_layer(norm_cfg, norm_channels)
            self.add_module(self.norm_name, norm)
            if self.with_bias and isinstance(norm, (_BatchNorm, _InstanceNorm)):
                warnings.warn("Unnecessary conv bias before batch/instance norm", stacklevel=2)

        if self.with_activation:
            act_cfg_ = dict(act_cfg)
            if act_cfg_["type"] not in _NO_INPLACE:
                act_cfg_.setdefault("inplace", inplace)
            self.activate = build_activation_layer(act_cfg_)

        self.init_weights()

    @property
    def norm(self) -> nn.Module | None:
        """The norm layer, or None."""
        return getattr(self, self.norm_name) if self.norm_name else None

    def init_weights(self) -> None:
        """Kaiming-init the conv (unless it has its own ``init_weights``); norm to 1 and 0.

        The Kaiming fill is fan-out, for ReLU, or for leaky ReLU with the activation's
        ``negative_slope`` (default 0.01) when the activation is ``LeakyReLU``.
        """
        if not hasattr(self.conv, "init_weights"):
            if self.with_activation and self.act_cfg["type"] == "LeakyReLU":
                nonlinearity, a = "leaky_relu", self.act_cfg.get("negative_slope", 0.01)
            else:
                nonlinearity, a = "relu", 0
            kaiming_init(self.conv, a=a, nonlinearity=nonlinearity)
        if self.with_norm:
            constant_init(self.norm, 1, bias=0)

    def forward(self, x: torch.Tensor, activate: bool = True, norm: bool = True) -> torch.Tensor:
        """Run the layers in ``order``; ``activate``/``norm`` False skip those layers."""
        for layer in self.order:
            if layer == "conv":
                if self.with_explicit_padding:
                    x = self.padding_layer(x)
                x = self.conv(x)
            elif layer == "norm" and norm and self.with_norm:
                x = self.norm(x)
            elif layer == "act" and activate and self.with_activation:
                x = self.activate(x)
        return x


__all__ = ["ConvModule"]
