""":class:`GeneralizedAttention` (Zhu et al., "An Empirical Study of Spatial Attention").

The attention energy between a query position and a key position is the sum of up to four
terms, switched on by the four digits of ``attention_type``:

1. query content x key content,
2. query content x relative position,
3. a learnt bias (``appr_bias``) x key content,
4. a learnt bias (``geom_bias``) x relative position.

Relative positions are sinusoidal embeddings of the x and y offsets, projected by
``appr_geom_fc_x`` / ``appr_geom_fc_y``; x and y contribute separately (``energy_x``
broadcast over rows, ``energy_y`` over columns).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from mmpar.runner.model_setup.weight_init import kaiming_init

from .registry import PLUGIN_LAYERS

# The feature-map side the spatial-range mask is built for, by channel count: the block is
# meant to follow a ResNet stage's 3x3 conv (mmcv's constants).
_MASK_SIDE = {256: 84, 512: 42}


def _local_constraint_map(max_len: int, spatial_range: int, kv_stride: int) -> torch.Tensor:
    """``[max_len, max_len, max_len_kv, max_len_kv]`` uint8; 0 where the key is in range.

    A key row ``ky`` is in range of query row ``iy`` when
    ``(iy - r) // s <= ky < (iy + r + 1) // s + 1`` (likewise for columns), r the spatial
    range and s the key/value stride.
    """
    max_len_kv = int((max_len - 1.0) / kv_stride + 1)
    query = torch.arange(max_len).view(-1, 1)
    key = torch.arange(max_len_kv).view(1, -1)
    low = ((query - spatial_range) // kv_stride).clamp(min=0)
    high = ((query + spatial_range + 1) // kv_stride + 1).clamp(max=max_len)
    in_range = (key >= low) & (key < high)  # [max_len, max_len_kv], rows and columns alike
    inside = in_range.view(max_len, 1, max_len_kv, 1) & in_range.view(1, max_len, 1, max_len_kv)
    return (~inside).to(torch.uint8)


@PLUGIN_LAYERS.register_module()
class GeneralizedAttention(nn.Module):
    """Generalized attention block; plugin name ``gen_attention_block``.

    Args:
        in_channels: Channels of the input.
        spatial_range: Restrict each query to keys within this many pixels; -1: no limit
            (the limit needs ``in_channels`` 256 or 512). Default: -1.
        num_heads: Attention heads. Default: 9.
        position_embedding_dim: Width of the position embeddings; <= 0: ``in_channels``.
            Default: -1.
        position_magnitude: Multiplies the coordinate offsets. Default: 1.
        kv_stride: Average-pool stride of the keys/values. Default: 2.
        q_stride: Average-pool stride of the queries (the output is upsampled back).
            Default: 1.
        attention_type: Four binary digits switching the energy terms (see the module
            docstring). Default: ``'1111'``.

    Raises:
        ValueError: ``spatial_range >= 0`` with ``in_channels`` other than 256 or 512
            (mmcv failed with an UnboundLocalError).
    """

    _abbr_ = "gen_attention_block"

    def __init__(
        self,
        in_channels: int,
        spatial_range: int = -1,
        num_heads: int = 9,
        position_embedding_dim: int = -1,
        position_magnitude: int = 1,
        kv_stride: int = 2,
        q_stride: int = 1,
        attention_type: str = "1111",
    ) -> None:
        super().__init__()
        self.position_embedding_dim = (
            position_embedding_dim if position_embedding_dim > 0 else in_channels
        )
        self.position_magnitude = position_magnitude
        self.num_heads = num_heads
        self.in_channels = in_channels
        self.spatial_range = spatial_range
        self.kv_stride = kv_stride
        self.q_stride = q_stride
        self.attention_type = [bool(int(digit)) for digit in attention_type]
        self.qk_embed_dim = in_channels // num_heads
        out_c = self.qk_embed_dim * num_heads
        use = self.attention_type

        # Modules marked ``kaiming_init = True`` get init_weights' Kaiming fill (mmcv's mark).
        def marked(module: nn.Module) -> nn.Module:
            module.kaiming_init = True
            return module

        if use[0] or use[1]:
            self.query_conv = marked(nn.Conv2d(in_channels, out_c, kernel_size=1, bias=False))
        if use[0] or use[2]:
            self.key_conv = marked(nn.Conv2d(in_channels, out_c, kernel_size=1, bias=False))
        self.v_dim = in_channels // num_heads
        self.value_conv = marked(
            nn.Conv2d(in_channels, self.v_dim * num_heads, kernel_size=1, bias=False)
        )
        if use[1] or use[3]:
            half = self.position_embedding_dim // 2
            self.appr_geom_fc_x = marked(nn.Linear(half, out_c, bias=False))
            self.appr_geom_fc_y = marked(nn.Linear(half, out_c, bias=False))
        stdv = 1.0 / math.sqrt(self.qk_embed_dim * 2)
        if use[2]:
            self.appr_bias = nn.Parameter(-2 * stdv * torch.rand(out_c) + stdv)
        if use[3]:
            self.geom_bias = nn.Parameter(-2 * stdv * torch.rand(out_c) + stdv)
        self.proj_conv = marked(
            nn.Conv2d(self.v_dim * num_heads, in_channels, kernel_size=1, bias=True)
        )
        self.gamma = nn.Parameter(torch.zeros(1))

        if spatial_range >= 0:
            if in_channels not in _MASK_SIDE:
                raise ValueError(
                    f"GeneralizedAttention's spatial_range needs in_channels 256 or 512 (the "
                    f"mask is sized for those feature maps), got {in_channels}"
                )
            # A parameter, not a buffer, so that the state-dict key matches mmcv's.
            self.local_constraint_map = nn.Parameter(
                _local_constraint_map(_MASK_SIDE[in_channels], spatial_range, kv_stride),
                requires_grad=False,
            )
        self.q_downsample = nn.AvgPool2d(kernel_size=1, stride=q_stride) if q_stride > 1 else None
        self.kv_downsample = (
            nn.AvgPool2d(kernel_size=1, stride=kv_stride) if kv_stride > 1 else None
        )
        self.init_weights()

    def get_position_embedding(
        self,
        h: int,
        w: int,
        h_kv: int,
        w_kv: int,
        q_stride: int,
        kv_stride: int,
        device: torch.device,
        dtype: torch.dtype,
        feat_dim: int,
        wave_length: int = 1000,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Sinusoidal embeddings of the x and y offsets between query and key positions.

        Returns:
            ``(embedding_x [w, w_kv, feat_dim / 2], embedding_y [h, h_kv, feat_dim / 2])``,
            in ``dtype`` (so fp16 training works).
        """

        def coords(n: int, stride: int) -> torch.Tensor:
            return torch.linspace(0, n - 1, n).to(device=device, dtype=dtype).view(n, 1) * stride

        h_diff = (coords(h, q_stride).unsqueeze(1) - coords(h_kv, kv_stride).unsqueeze(0)) * (
            self.position_magnitude
        )
        w_diff = (coords(w, q_stride).unsqueeze(1) - coords(w_kv, kv_stride).unsqueeze(0)) * (
            self.position_magnitude
        )
        feat_range = torch.arange(0, feat_dim / 4).to(device=device, dtype=dtype)
        dim_mat = torch.tensor([wave_length]).to(device=device, dtype=dtype)
        dim_mat = (dim_mat ** ((4.0 / feat_dim) * feat_range)).view(1, 1, -1)
        embedding_x = torch.cat(((w_diff / dim_mat).sin(), (w_diff / dim_mat).cos()), dim=2)
        embedding_y = torch.cat(((h_diff / dim_mat).sin(), (h_diff / dim_mat).cos()), dim=2)
        return embedding_x, embedding_y

    def _position_energy(
        self,
        proj_query: torch.Tensor | None,
        feat_x: torch.Tensor,
        feat_y: torch.Tensor,
        shape: tuple[int, int, int, int, int],
    ) -> torch.Tensor:
        """Terms 2 and 4: ``[n, heads, h, w, h_kv, w_kv]`` (broadcastable) position energy.

        With term 2 and without term 4, mmcv 1.7.2 took the y term from the transposed query
        map (wrong on square maps, a shape error on others); here every case uses the query
        at its own position. The configs downstream projects ship ('1111', '0010') compute
        exactly what mmcv computes.
        """
        n, h, w, h_kv, w_kv = shape
        heads, dim = self.num_heads, self.qk_embed_dim
        use = self.attention_type
        if use[1]:
            query = proj_query
            if use[3]:
                query = query + self.geom_bias.view(1, heads, 1, dim)
            query = query.view(n, heads, h, w, dim)
            energy_x = torch.matmul(query.permute(0, 1, 3, 2, 4), feat_x.permute(0, 1, 2, 4, 3))
            energy_x = energy_x.permute(0, 1, 3, 2, 4).unsqueeze(4)
            energy_y = torch.matmul(query, feat_y.permute(0, 1, 2, 4, 3)).unsqueeze(5)
            return energy_x + energy_y
        geom_bias = self.geom_bias.view(1, heads, dim, 1).repeat(n, 1, 1, 1)
        energy_x = torch.matmul(feat_x.reshape(n, heads, w * w_kv, dim), geom_bias)
        energy_y = torch.matmul(feat_y.reshape(n, heads, h * h_kv, dim), geom_bias)
        return energy_x.view(n, heads, 1, w, 1, w_kv) + energy_y.view(n, heads, h, 1, h_kv, 1)

    def forward(self, x_input: torch.Tensor) -> torch.Tensor:
        """Return ``gamma * attention output + x_input``."""
        heads, dim = self.num_heads, self.qk_embed_dim
        use = self.attention_type
        x_q = self.q_downsample(x_input) if self.q_downsample is not None else x_input
        x_kv = self.kv_downsample(x_input) if self.kv_downsample is not None else x_input
        n, _, h, w = x_q.shape
        _, _, h_kv, w_kv = x_kv.shape

        proj_query = proj_key = None
        if use[0] or use[1]:
            proj_query = self.query_conv(x_q).view(n, heads, dim, h * w).permute(0, 1, 3, 2)
        if use[0] or use[2]:
            proj_key = self.key_conv(x_kv).view(n, heads, dim, h_kv * w_kv)

        if sum(use) == 1 and use[2]:
            # Key saliency only: one energy row shared by every query position.
            appr_bias = self.appr_bias.view(1, heads, 1, dim).repeat(n, 1, 1, 1)
            energy = torch.matmul(appr_bias, proj_key).view(n, heads, 1, h_kv * w_kv)
            h = w = 1
        else:
            if use[0]:
                query = proj_query
                if use[2]:
                    query = query + self.appr_bias.view(1, heads, 1, dim)
                energy = torch.matmul(query, proj_key).view(n, heads, h, w, h_kv, w_kv)
            else:
                energy = x_input.new_zeros(n, heads, h, w, h_kv, w_kv)
                if use[2]:
                    appr_bias = self.appr_bias.view(1, heads, 1, dim).repeat(n, 1, 1, 1)
                    saliency = torch.matmul(appr_bias, proj_key)
                    energy = energy + saliency.view(n, heads, 1, 1, h_kv, w_kv)
            if use[1] or use[3]:
                embed_x, embed_y = self.get_position_embedding(
                    h, w, h_kv, w_kv, self.q_stride, self.kv_stride, x_input.device,
                    x_input.dtype, self.position_embedding_dim,
                )  # fmt: skip
                # [n, heads, w, w_kv, dim] and [n, heads, h, h_kv, dim]
                feat_x = self.appr_geom_fc_x(embed_x).view(1, w, w_kv, heads, dim)
                feat_x = feat_x.permute(0, 3, 1, 2, 4).repeat(n, 1, 1, 1, 1) / math.sqrt(2)
                feat_y = self.appr_geom_fc_y(embed_y).view(1, h, h_kv, heads, dim)
                feat_y = feat_y.permute(0, 3, 1, 2, 4).repeat(n, 1, 1, 1, 1) / math.sqrt(2)
                energy = energy + self._position_energy(
                    proj_query, feat_x, feat_y, (n, h, w, h_kv, w_kv)
                )
            energy = energy.view(n, heads, h * w, h_kv * w_kv)

        if self.spatial_range >= 0:
            mask = self.local_constraint_map[:h, :w, :h_kv, :w_kv].contiguous()
            energy = energy.masked_fill(mask.view(1, 1, h * w, h_kv * w_kv).bool(), float("-inf"))
        attention = F.softmax(energy, 3)

        value = self.value_conv(x_kv).view(n, heads, self.v_dim, h_kv * w_kv).permute(0, 1, 3, 2)
        out = torch.matmul(attention, value).permute(0, 1, 3, 2).contiguous()
        out = self.proj_conv(out.view(n, self.v_dim * heads, h, w))
        if self.q_downsample is not None:
            # Queries were downsampled: bring the output back to the input's size.
            out = F.interpolate(out, size=x_input.shape[2:], mode="bilinear", align_corners=False)
        return self.gamma * out + x_input

    def init_weights(self) -> None:
        """Kaiming-uniform (fan-in, leaky ReLU a=1) for every module marked ``kaiming_init``."""
        for module in self.modules():
            if getattr(module, "kaiming_init", False):
                kaiming_init(
                    module,
                    mode="fan_in",
                    nonlinearity="leaky_relu",
                    bias=0,
                    distribution="uniform",
                    a=1,
                )


__all__ = ["GeneralizedAttention"]
