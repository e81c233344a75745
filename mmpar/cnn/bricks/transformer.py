"""Transformer bricks of mmcv 1.x (``mmcv.cnn.bricks.transformer``), config-built.

Attention, FFN, layer and layer-sequence classes are registered in ``ATTENTION``,
``FEEDFORWARD_NETWORK``, ``TRANSFORMER_LAYER`` and ``TRANSFORMER_LAYER_SEQUENCE`` under
mmcv's names, with mmcv's constructor arguments (including the deprecated ones, which warn)
and mmcv's sub-module names, so mmcv checkpoints load: ``attn.in_proj_weight`` in
:class:`MultiheadAttention`; ``layers.0.0.weight`` ... ``layers.<num_fcs - 1>.weight`` in
:class:`FFN`; ``attentions.<i>``, ``ffns.<i>``, ``norms.<i>`` in :class:`BaseTransformerLayer`;
``layers.<i>`` in :class:`TransformerLayerSequence`.

Tensors are ``(num_tokens, batch, embed_dims)`` unless ``batch_first=True`` (then
``(batch, num_tokens, embed_dims)``), as in ``torch.nn.MultiheadAttention``. mmcv's
``MultiScaleDeformableAttention`` belongs to ``mmpar.ops`` and is not re-exported here.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Sequence
from typing import Any, Union

import torch
import torch.nn.functional as F
from torch import nn

from mmpar.runner.base_module import BaseModule, ModuleList, Sequential

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import ConfigDict as ConfigDict
from mmpar.utils import deprecated_api_warning, to_2tuple
from mmpar.utils.registry import build_from_cfg

from .activation import build_activation_layer
from .conv import build_conv_layer
from .drop import build_dropout
from .norm import build_norm_layer
from .registry import (
    ATTENTION,
    FEEDFORWARD_NETWORK,
    POSITIONAL_ENCODING,
    TRANSFORMER_LAYER,
    TRANSFORMER_LAYER_SEQUENCE,
)
from .wrappers import Linear

__all__ = [
    "FFN",
    "AdaptivePadding",
    "BaseTransformerLayer",
    "MultiheadAttention",
    "PatchEmbed",
    "PatchMerging",
    "TransformerLayerSequence",
    "build_attention",
    "build_feedforward_network",
    "build_positional_encoding",
    "build_transformer_layer",
    "build_transformer_layer_sequence",
]

Size2 = Union[int, Sequence[int]]
OPERATIONS = ("self_attn", "norm", "ffn", "cross_attn")


def build_positional_encoding(cfg: dict, default_args: dict | None = None) -> Any:
    """Build a positional encoding from ``POSITIONAL_ENCODING``."""
    return build_from_cfg(cfg, POSITIONAL_ENCODING, default_args)


def build_attention(cfg: dict, default_args: dict | None = None) -> Any:
    """Build an attention module from ``ATTENTION``."""
    return build_from_cfg(cfg, ATTENTION, default_args)


def build_feedforward_network(cfg: dict, default_args: dict | None = None) -> Any:
    """Build a feed-forward network from ``FEEDFORWARD_NETWORK``."""
    return build_from_cfg(cfg, FEEDFORWARD_NETWORK, default_args)


def build_transformer_layer(cfg: dict, default_args: dict | None = None) -> Any:
    """Build a transformer layer from ``TRANSFORMER_LAYER``."""
    return build_from_cfg(cfg, TRANSFORMER_LAYER, default_args)


def build_transformer_layer_sequence(cfg: dict, default_args: dict | None = None) -> Any:
    """Build a transformer encoder or decoder from ``TRANSFORMER_LAYER_SEQUENCE``."""
    return build_from_cfg(cfg, TRANSFORMER_LAYER_SEQUENCE, default_args)


# ------------------------------------------------------------------------ patch layers
def _conv_out_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    # torch.nn.Conv2d's (and nn.Unfold's) output-size formula along one axis.
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


class AdaptivePadding(nn.Module):
    """Zero-pad an image so that a kernel with this stride covers every pixel.

    The padded size is the smallest for which ``ceil(size / stride)`` windows fit.

    Args:
        kernel_size: Kernel size of the layer that follows.
        stride: Its stride.
        dilation: Its dilation.
        padding: ``'corner'`` pads bottom and right only; ``'same'`` splits the padding
            between both sides (TensorFlow's ``SAME``, the extra pixel at the end).

    Example:
        >>> pad = AdaptivePadding(kernel_size=16, stride=16)
        >>> pad(torch.rand(1, 1, 15, 17)).shape[-2:]
        torch.Size([16, 32])
    """

    def __init__(
        self,
        kernel_size: Size2 = 1,
        stride: Size2 = 1,
        dilation: Size2 = 1,
        padding: str = "corner",
    ) -> None:
        super().__init__()
        assert padding in ("same", "corner"), f"padding must be 'same' or 'corner', got {padding!r}"
        self.padding = padding
        self.kernel_size = to_2tuple(kernel_size)
        self.stride = to_2tuple(stride)
        self.dilation = to_2tuple(dilation)

    def get_pad_shape(self, input_shape: Sequence[int]) -> tuple[int, int]:
        """``(pad_h, pad_w)`` needed for an input of spatial size ``(H, W)``."""
        pads = []
        for size, kernel, stride, dilation in zip(
            input_shape, self.kernel_size, self.stride, self.dilation
        ):
            windows = math.ceil(size / stride)
            pads.append(max((windows - 1) * stride + (kernel - 1) * dilation + 1 - size, 0))
        return pads[0], pads[1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Pad ``x`` (B, C, H, W) as needed (unchanged when it already fits)."""
        pad_h, pad_w = self.get_pad_shape(x.shape[-2:])
        if pad_h == 0 and pad_w == 0:
            return x
        if self.padding == "corner":
            return F.pad(x, [0, pad_w, 0, pad_h])
        return F.pad(x, [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2])


class PatchEmbed(BaseModule):
    """Cut an image into patches and embed each one with a strided convolution.

    Args:
        in_channels: Input channels.
        embed_dims: Embedding size.
        conv_type: ``CONV_LAYERS`` type of the projection.
        kernel_size: Patch size.
        stride: Patch stride (None: ``kernel_size``).
        padding: Conv padding, or ``'corner'``/``'same'`` for :class:`AdaptivePadding`.
        dilation: Conv dilation.
        bias: Whether the projection has a bias.
        norm_cfg: Norm applied to the embeddings (None: none).
        input_size: If given, ``init_out_size`` is the patch grid of this input size.
        init_cfg: Initialisation config.

    ``forward(x)`` takes (B, C, H, W) and returns ``(tokens (B, out_h * out_w, embed_dims),
    (out_h, out_w))``. Parameters: ``projection.*`` and ``norm.*``.
    """

    def __init__(
        self,
        in_channels: int = 3,
        embed_dims: int = 768,
        conv_type: str = "Conv2d",
        kernel_size: Size2 = 16,
        stride: Size2 | None = 16,
        padding: Union[int, Sequence[int], str] = "corner",
        dilation: Size2 = 1,
        bias: bool = True,
        norm_cfg: dict | None = None,
        input_size: Size2 | None = None,
        init_cfg: Union[dict, list, None] = None,
    ) -> None:
        super().__init__(init_cfg=init_cfg)
        self.embed_dims = embed_dims
        kernel_size = to_2tuple(kernel_size)
        stride = to_2tuple(kernel_size if stride is None else stride)
        dilation = to_2tuple(dilation)
        if isinstance(padding, str):
            self.adaptive_padding = AdaptivePadding(kernel_size, stride, dilation, padding)
            padding = 0  # the adaptive padding replaces the conv's
        else:
            self.adaptive_padding = None
        padding = to_2tuple(padding)

        self.projection = build_conv_layer(
            dict(type=conv_type),
            in_channels=in_channels,
            out_channels=embed_dims,
            kernel_size=kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            bias=bias,
        )
        self.norm = build_norm_layer(norm_cfg, embed_dims)[1] if norm_cfg is not None else None

        self.init_input_size: tuple | None = None
        self.init_out_size: tuple | None = None
        if input_size:
            # Models read init_out_size to size absolute position embeddings.
            self.init_input_size = to_2tuple(input_size)
            size = self.init_input_size
            if self.adaptive_padding is not None:
                pad = self.adaptive_padding.get_pad_shape(size)
                size = (size[0] + pad[0], size[1] + pad[1])
            self.init_out_size = tuple(
                _conv_out_size(size[i], kernel_size[i], stride[i], padding[i], dilation[i])
                for i in range(2)
            )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[int, int]]:
        """Embed ``x`` (B, C, H, W) into ``(B, out_h * out_w, embed_dims)`` and the grid size."""
        if self.adaptive_padding is not None:
            x = self.adaptive_padding(x)
        x = self.projection(x)
        out_size = (x.shape[2], x.shape[3])
        x = x.flatten(2).transpose(1, 2)
        if self.norm is not None:
            x = self.norm(x)
        return x, out_size


class PatchMerging(BaseModule):
    """Merge each ``kernel_size`` neighbourhood of tokens into one (Swin Transformer).

    Uses ``nn.Unfold``, so the channel order inside a merged token is mmcv's (which differs
    from the original Swin code; mmcv-converted checkpoints fit).

    Args:
        in_channels: Channels of the input tokens.
        out_channels: Channels of the merged tokens.
        kernel_size: Neighbourhood size.
        stride: Step between neighbourhoods (None: ``kernel_size``).
        padding: Unfold padding, or ``'corner'``/``'same'`` for :class:`AdaptivePadding`.
        dilation: Unfold dilation.
        bias: Whether the reduction linear layer has a bias.
        norm_cfg: Norm applied before the reduction (None: none).
        init_cfg: Initialisation config.

    Parameters: ``norm.*`` and ``reduction.weight``.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Size2 = 2,
        stride: Size2 | None = None,
        padding: Union[int, Sequence[int], str] = "corner",
        dilation: Size2 = 1,
        bias: bool = False,
        norm_cfg: dict | None = dict(type="LN"),  # noqa: B006 (read-only default)
        init_cfg: Union[dict, list, None] = None,
    ) -> None:
        super().__init__(init_cfg=init_cfg)
        self.in_channels = in_channels
        self.out_channels = out_channels
        kernel_size = to_2tuple(kernel_size)
        stride = to_2tuple(stride if stride else kernel_size)
        dilation = to_2tuple(dilation)
        if isinstance(padding, str):
            self.adaptive_padding = AdaptivePadding(kernel_size, stride, dilation, padding)
            padding = 0
        else:
            self.adaptive_padding = None
        self.sampler = nn.Unfold(
            kernel_size=kernel_size, dilation=dilation, padding=to_2tuple(padding), stride=stride
        )
        sample_dim = kernel_size[0] * kernel_size[1] * in_channels
        self.norm = build_norm_layer(norm_cfg, sample_dim)[1] if norm_cfg is not None else None
        self.reduction = nn.Linear(sample_dim, out_channels, bias=bias)

    def forward(
        self, x: torch.Tensor, input_size: Sequence[int]
    ) -> tuple[torch.Tensor, tuple[int, int]]:
        """Merge ``x`` (B, H * W, C) laid out on the grid ``input_size`` = (H, W).

        Returns:
            ``(B, out_h * out_w, out_channels)`` and ``(out_h, out_w)``.
        """
        batch, length, channels = x.shape
        assert isinstance(input_size, Sequence), f"input_size must be (H, W), got {input_size}"
        height, width = input_size
        assert length == height * width, f"{length} tokens do not fill a {height}x{width} grid"
        x = x.view(batch, height, width, channels).permute(0, 3, 1, 2)
        if self.adaptive_padding is not None:
            x = self.adaptive_padding(x)
            height, width = x.shape[-2:]
        x = self.sampler(x)  # (B, C * kh * kw, out_h * out_w)
        s = self.sampler
        out_size = (
            _conv_out_size(height, s.kernel_size[0], s.stride[0], s.padding[0], s.dilation[0]),
            _conv_out_size(width, s.kernel_size[1], s.stride[1], s.padding[1], s.dilation[1]),
        )
        x = x.transpose(1, 2)
        if self.norm is not None:
            x = self.norm(x)
        return self.reduction(x), out_size


# ----------------------------------------------------------------- attention and FFN
@ATTENTION.register_module()
class MultiheadAttention(BaseModule):
    """``torch.nn.MultiheadAttention`` with positional encodings and a residual connection.

    ``forward`` returns ``identity + dropout_layer(proj_drop(attention))``.

    Args:
        embed_dims: Embedding size.
        num_heads: Number of heads.
        attn_drop: Dropout on the attention weights.
        proj_drop: Dropout on the attention output.
        dropout_layer: ``DROPOUT_LAYERS`` config applied before the residual sum (falsy:
            none).
        init_cfg: Initialisation config.
        batch_first: Inputs are (batch, tokens, embed_dims) instead of (tokens, batch, ...).
        **kwargs: Passed to ``nn.MultiheadAttention`` (``bias``, ``kdim``, ...). The
            deprecated ``dropout=p`` sets both ``attn_drop`` and the drop probability of
            ``dropout_layer``, with a DeprecationWarning.
    """

    def __init__(
        self,
        embed_dims: int,
        num_heads: int,
        attn_drop: float = 0.0,
        proj_drop: float = 0.0,
        dropout_layer: dict | None = dict(type="Dropout", drop_prob=0.0),  # noqa: B006
        init_cfg: Union[dict, list, None] = None,
        batch_first: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(init_cfg)
        if "dropout" in kwargs:
            warnings.warn(
                "The argument `dropout` of MultiheadAttention is deprecated: set `attn_drop` "
                "(float), `proj_drop` (float) and `dropout_layer` (dict) instead",
                DeprecationWarning,
                stacklevel=2,
            )
            attn_drop = kwargs.pop("dropout")
            if dropout_layer:
                # A copy: mmcv wrote into the shared default dict.
                dropout_layer = dict(dropout_layer, drop_prob=attn_drop)
        self.embed_dims = embed_dims
        self.num_heads = num_heads
        self.batch_first = batch_first
        self.attn = nn.MultiheadAttention(embed_dims, num_heads, attn_drop, **kwargs)
        self.proj_drop = nn.Dropout(proj_drop)
        self.dropout_layer = build_dropout(dropout_layer) if dropout_layer else nn.Identity()

    @deprecated_api_warning({"residual": "identity"}, cls_name="MultiheadAttention")
    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        identity: torch.Tensor | None = None,
        query_pos: torch.Tensor | None = None,
        key_pos: torch.Tensor | None = None,
        attn_mask: torch.Tensor | None = None,
        key_padding_mask: torch.Tensor | None = None,
        **kwargs: Any,
    ) -> torch.Tensor:
        """Attend from ``query`` to ``key``/``value`` and add the residual.

        Args:
            query: (num_queries, bs, embed_dims), or batch first.
            key: (num_keys, bs, embed_dims); None: ``query``.
            value: Same shape as ``key``; None: ``key``.
            identity: The residual; None: ``query`` (before adding ``query_pos``).
            query_pos: Added to ``query``.
            key_pos: Added to ``key``; None: ``query_pos`` when it has the key's shape.
            attn_mask: (num_queries, num_keys) mask, as in ``nn.MultiheadAttention``.
            key_padding_mask: (bs, num_keys) mask of padded keys.
            **kwargs: Ignored (other attention types of a layer take more arguments).

        Returns:
            Same shape as ``query``. The deprecated ``residual=`` is ``identity=``.
        """
        key = query if key is None else key
        value = key if value is None else value
        identity = query if identity is None else identity
        if key_pos is None and query_pos is not None:
            if query_pos.shape == key.shape:
                key_pos = query_pos
            else:
                warnings.warn(
                    f"position encoding of key is missing in {type(self).__name__}", stacklevel=2
                )
        if query_pos is not None:
            query = query + query_pos
        if key_pos is not None:
            key = key + key_pos
        if self.batch_first:
            # nn.MultiheadAttention (built without batch_first) wants tokens first.
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        out = self.attn(
            query=query,
            key=key,
            value=value,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
        )[0]
        if self.batch_first:
            out = out.transpose(0, 1)
        return identity + self.dropout_layer(self.proj_drop(out))


@FEEDFORWARD_NETWORK.register_module()
class FFN(BaseModule):
    """Feed-forward network: ``num_fcs`` linear layers with activations, and a residual.

    ``layers`` is ``[Sequential(Linear, act, Dropout)] * (num_fcs - 1) + [Linear, Dropout]``,
    so its parameters are ``layers.0.0.weight``, ..., ``layers.<num_fcs - 1>.weight``.

    Args:
        embed_dims: Input and output size.
        feedforward_channels: Hidden size.
        num_fcs: Number of linear layers (at least 2).
        act_cfg: Activation config (one module, shared by all hidden layers).
        ffn_drop: Dropout after each linear layer (deprecated name: ``dropout``).
        dropout_layer: ``DROPOUT_LAYERS`` config applied before the residual sum.
        add_identity: Add the residual (deprecated name: ``add_residual``).
        init_cfg: Initialisation config.
        **kwargs: Accepted and ignored, as in mmcv.

    Raises:
        AssertionError: ``num_fcs < 2``.
    """

    @deprecated_api_warning({"dropout": "ffn_drop", "add_residual": "add_identity"}, cls_name="FFN")
    def __init__(
        self,
        embed_dims: int = 256,
        feedforward_channels: int = 1024,
        num_fcs: int = 2,
        act_cfg: dict = dict(type="ReLU", inplace=True),  # noqa: B006 (read-only default)
        ffn_drop: float = 0.0,
        dropout_layer: dict | None = None,
        add_identity: bool = True,
        init_cfg: Union[dict, list, None] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(init_cfg)
        assert num_fcs >= 2, f"num_fcs should be no less than 2, got {num_fcs}"
        self.embed_dims = embed_dims
        self.feedforward_channels = feedforward_channels
        self.num_fcs = num_fcs
        self.act_cfg = act_cfg
        self.activate = build_activation_layer(act_cfg)
        layers: list[nn.Module] = []
        in_channels = embed_dims
        for _ in range(num_fcs - 1):
            layers.append(
                Sequential(
                    Linear(in_channels, feedforward_channels), self.activate, nn.Dropout(ffn_drop)
                )
            )
            in_channels = feedforward_channels
        layers += [Linear(feedforward_channels, embed_dims), nn.Dropout(ffn_drop)]
        self.layers = Sequential(*layers)
        self.dropout_layer = build_dropout(dropout_layer) if dropout_layer else nn.Identity()
        self.add_identity = add_identity

    @deprecated_api_warning({"residual": "identity"}, cls_name="FFN")
    def forward(self, x: torch.Tensor, identity: torch.Tensor | None = None) -> torch.Tensor:
        """``identity + dropout_layer(layers(x))`` (``identity`` defaults to ``x``).

        Without ``add_identity``, only ``dropout_layer(layers(x))``.
        """
        out = self.dropout_layer(self.layers(x))
        if not self.add_identity:
            return out
        return (x if identity is None else identity) + out


# ------------------------------------------------------------------- layers, sequences
_DEPRECATED_FFN_ARGS = {
    "feedforward_channels": "feedforward_channels",
    "ffn_dropout": "ffn_drop",
    "ffn_num_fcs": "num_fcs",
}


def _per_item(cfgs: Union[dict, list, None], count: int, what: str) -> list:
    """One deep-copied config per item: a dict is repeated, a list must have ``count``."""
    if isinstance(cfgs, dict):
        return [copy.deepcopy(cfgs) for _ in range(count)]
    cfgs = list(cfgs or [])
    assert len(cfgs) == count, f"{len(cfgs)} {what} configs given for {count} {what}(s)"
    return copy.deepcopy(cfgs)


@TRANSFORMER_LAYER.register_module()
class BaseTransformerLayer(BaseModule):
    """A transformer layer made of attentions, FFNs and norms in a configurable order.

    Args:
        attn_cfgs: Attention config(s), one per ``'self_attn'``/``'cross_attn'`` of
            ``operation_order`` (a dict is used for all).
        ffn_cfgs: FFN config(s), one per ``'ffn'`` (a dict is used for all; ``type``
            defaults to ``'FFN'`` and ``embed_dims`` to the attention's).
        operation_order: The operations in order, from ``'self_attn'``, ``'cross_attn'``,
            ``'norm'`` and ``'ffn'``; starting with ``'norm'`` makes it a pre-norm layer
            (the residuals then skip the norms).
        norm_cfg: Norm config of every ``'norm'``.
        init_cfg: Initialisation config.
        batch_first: Inputs are (batch, tokens, embed_dims); set on every attention config
            that does not say.
        **kwargs: The deprecated ``feedforward_channels``, ``ffn_dropout`` and ``ffn_num_fcs``
            (moved into ``ffn_cfgs``, with a DeprecationWarning); others are ignored, as in
            mmcv.

    Sub-modules: ``attentions.<i>``, ``ffns.<i>``, ``norms.<i>``, each in order of appearance.

    Raises:
        AssertionError: An unknown operation, config counts that do not match it, an
            ``embed_dims`` or ``batch_first`` that contradicts the layer's.
        TypeError: ``operation_order`` is missing.
    """

    def __init__(
        self,
        attn_cfgs: Union[dict, list, None] = None,
        ffn_cfgs: Union[dict, list] = dict(  # noqa: B006 (copied before use)
            type="FFN",
            embed_dims=256,
            feedforward_channels=1024,
            num_fcs=2,
            ffn_drop=0.0,
            act_cfg=dict(type="ReLU", inplace=True),
        ),
        operation_order: Sequence[str] | None = None,
        norm_cfg: dict = dict(type="LN"),  # noqa: B006 (read-only default)
        init_cfg: Union[dict, list, None] = None,
        batch_first: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(init_cfg)
        if operation_order is None:
            raise TypeError(
                f"{type(self).__name__} needs operation_order, e.g. "
                "('self_attn', 'norm', 'ffn', 'norm')"
            )
        unknown = set(operation_order) - set(OPERATIONS)
        assert not unknown, (
            f"operation_order of {type(self).__name__} has {sorted(unknown)}; "
            f"its operations are {list(OPERATIONS)}"
        )
        self.batch_first = batch_first
        self.operation_order = operation_order
        self.norm_cfg = norm_cfg
        self.pre_norm = operation_order[0] == "norm"
        self.num_attn = operation_order.count("self_attn") + operation_order.count("cross_attn")

        self.attentions = ModuleList()
        for attn_cfg, operation in zip(
            _per_item(attn_cfgs, self.num_attn, "attention"),
            [op for op in operation_order if op in ("self_attn", "cross_attn")],
        ):
            if "batch_first" in attn_cfg:
                assert attn_cfg["batch_first"] == batch_first, (
                    f"attention batch_first={attn_cfg['batch_first']} but the layer's is "
                    f"{batch_first}"
                )
            else:
                attn_cfg["batch_first"] = batch_first
            attention = build_attention(attn_cfg)
            # Custom attentions may act differently as self- or cross-attention.
            attention.operation_name = operation
            self.attentions.append(attention)
        self.embed_dims = self.attentions[0].embed_dims

        self.ffns = ModuleList()
        ffn_cfgs = self._with_deprecated_ffn_args(ffn_cfgs, kwargs)
        for ffn_cfg in _per_item(ffn_cfgs, operation_order.count("ffn"), "ffn"):
            ffn_cfg.setdefault("embed_dims", self.embed_dims)
            assert ffn_cfg["embed_dims"] == self.embed_dims, (
                f"ffn embed_dims {ffn_cfg['embed_dims']} differs from the attention's "
                f"{self.embed_dims}"
            )
            self.ffns.append(build_feedforward_network(ffn_cfg, dict(type="FFN")))

        self.norms = ModuleList()
        for _ in range(operation_order.count("norm")):
            self.norms.append(build_norm_layer(norm_cfg, self.embed_dims)[1])

    def _with_deprecated_ffn_args(
        self, ffn_cfgs: Union[dict, list], kwargs: dict
    ) -> Union[dict, list]:
        """Move the deprecated FFN arguments of ``kwargs`` into (a copy of) ``ffn_cfgs``."""
        ffn_cfgs = copy.deepcopy(ffn_cfgs)
        for old, new in _DEPRECATED_FFN_ARGS.items():
            if old not in kwargs:
                continue
            warnings.warn(
                f"The argument `{old}` of {type(self).__name__} is deprecated: set `{new}` and "
                f"the other FFN arguments in the dict `ffn_cfgs`",
                DeprecationWarning,
                stacklevel=3,
            )
            for cfg in [ffn_cfgs] if isinstance(ffn_cfgs, dict) else ffn_cfgs:
                cfg[new] = kwargs[old]
        return ffn_cfgs

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        query_pos: torch.Tensor | None = None,
        key_pos: torch.Tensor | None = None,
        attn_masks: Union[torch.Tensor, list, None] = None,
        query_key_padding_mask: torch.Tensor | None = None,
        key_padding_mask: torch.Tensor | None = None,
        **kwargs: Any,
    ) -> torch.Tensor:
        """Run the operations of ``operation_order`` on ``query``.

        Args:
            query: (num_queries, bs, embed_dims), or batch first.
            key: Keys of the cross-attentions.
            value: Values of the cross-attentions.
            query_pos: Positional encoding of the queries (also the self-attention keys').
            key_pos: Positional encoding of the cross-attention keys.
            attn_masks: One mask per attention, or one tensor for all (warns), or None.
            query_key_padding_mask: (bs, num_queries) padding mask of the self-attentions.
            key_padding_mask: (bs, num_keys) padding mask of the cross-attentions.
            **kwargs: Passed to every attention.

        Returns:
            The updated queries, shaped like ``query``.
        """
        if attn_masks is None:
            attn_masks = [None] * self.num_attn
        elif isinstance(attn_masks, torch.Tensor):
            warnings.warn(
                f"Use same attn_mask in all attentions in {type(self).__name__}", stacklevel=2
            )
            attn_masks = [attn_masks] * self.num_attn
        else:
            assert len(attn_masks) == self.num_attn, (
                f"{len(attn_masks)} attn_masks given for {self.num_attn} attentions"
            )
        attentions, ffns, norms = iter(self.attentions), iter(self.ffns), iter(self.norms)
        masks = iter(attn_masks)
        identity = query
        for operation in self.operation_order:
            if operation == "norm":
                query = next(norms)(query)
            elif operation == "ffn":
                query = next(ffns)(query, identity if self.pre_norm else None)
            else:
                is_self = operation == "self_attn"
                query = next(attentions)(
                    query,
                    query if is_self else key,
                    query if is_self else value,
                    identity if self.pre_norm else None,
                    query_pos=query_pos,
                    key_pos=query_pos if is_self else key_pos,
                    attn_mask=next(masks),
                    key_padding_mask=query_key_padding_mask if is_self else key_padding_mask,
                    **kwargs,
                )
                identity = query
        return query


@TRANSFORMER_LAYER_SEQUENCE.register_module()
class TransformerLayerSequence(BaseModule):
    """A stack of transformer layers (the base of encoders and decoders).

    Args:
        transformerlayers: ``TRANSFORMER_LAYER`` config(s): a dict is repeated
            ``num_layers`` times, a list must have ``num_layers`` entries.
        num_layers: Number of layers.
        init_cfg: Initialisation config.

    Sub-modules: ``layers.<i>``.
    """

    def __init__(
        self,
        transformerlayers: Union[dict, list, None] = None,
        num_layers: int | None = None,
        init_cfg: Union[dict, list, None] = None,
    ) -> None:
        super().__init__(init_cfg)
        if isinstance(transformerlayers, dict):
            transformerlayers = [copy.deepcopy(transformerlayers) for _ in range(num_layers)]
        else:
            assert isinstance(transformerlayers, list) and len(transformerlayers) == num_layers, (
                f"transformerlayers must be a dict or a list of {num_layers} dicts"
            )
        self.num_layers = num_layers
        self.layers = ModuleList()
        for layer_cfg in transformerlayers:
            self.layers.append(build_transformer_layer(layer_cfg))
        self.embed_dims = self.layers[0].embed_dims
        self.pre_norm = self.layers[0].pre_norm

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None,
        value: torch.Tensor | None,
        query_pos: torch.Tensor | None = None,
        key_pos: torch.Tensor | None = None,
        attn_masks: Union[torch.Tensor, list, None] = None,
        query_key_padding_mask: torch.Tensor | None = None,
        key_padding_mask: torch.Tensor | None = None,
        **kwargs: Any,
    ) -> torch.Tensor:
        """Run every layer in turn (same arguments as :meth:`BaseTransformerLayer.forward`)."""
        for layer in self.layers:
            query = layer(
                query,
                key,
                value,
                query_pos=query_pos,
                key_pos=key_pos,
                attn_masks=attn_masks,
                query_key_padding_mask=query_key_padding_mask,
                key_padding_mask=key_padding_mask,
                **kwargs,
            )
        return query
