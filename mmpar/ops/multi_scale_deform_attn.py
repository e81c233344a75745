"""mmcv 1.x's ``mmcv.ops.multi_scale_deform_attn``: Deformable DETR's attention, in PyTorch.

mmcv runs a CUDA kernel on the GPU and :func:`multi_scale_deformable_attn_pytorch` elsewhere;
both compute the same thing, so here the PyTorch path serves every device and
:class:`MultiScaleDeformableAttnFunction` is a ``Function`` that runs it.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from mmpar.cnn.bricks.registry import ATTENTION
from mmpar.runner.base_module import BaseModule
from mmpar.runner.model_setup.weight_init import constant_init, xavier_init

# IS_*_AVAILABLE: mmcv's module has these names too (imported there from mmcv.utils).
from mmpar.utils import IS_CUDA_AVAILABLE, IS_MLU_AVAILABLE, deprecated_api_warning

from ._autograd import op_function

__all__ = [
    "IS_CUDA_AVAILABLE",
    "IS_MLU_AVAILABLE",
    "MultiScaleDeformableAttention",
    "MultiScaleDeformableAttnFunction",
    "multi_scale_deformable_attn_pytorch",
]


def multi_scale_deformable_attn_pytorch(
    value: Tensor,
    value_spatial_shapes: Tensor,
    sampling_locations: Tensor,
    attention_weights: Tensor,
) -> Tensor:
    """Multi-scale deformable attention with ``grid_sample``.

    Args:
        value: Flattened multi-level values, shape (bs, num_keys, num_heads, head_dims), the
            levels one after another (row-major within each level).
        value_spatial_shapes: (h, w) of each level, shape (num_levels, 2).
        sampling_locations: (x, y) in ``[0, 1]`` of each level's map, shape
            (bs, num_queries, num_heads, num_levels, num_points, 2).
        attention_weights: Weight of each sample, shape
            (bs, num_queries, num_heads, num_levels, num_points).

    Returns:
        The attended values, shape (bs, num_queries, num_heads * head_dims).
    """
    bs, _, num_heads, head_dims = value.shape
    _, num_queries, _, num_levels, num_points, _ = sampling_locations.shape
    shapes = [(int(h), int(w)) for h, w in value_spatial_shapes]
    value_list = value.split([h * w for h, w in shapes], dim=1)
    # grid_sample wants [-1, 1]; with align_corners=False, 0 and 1 are the maps' outer edges,
    # as in mmcv's kernel (pixel centres at (i + 0.5) / size).
    grids = 2 * sampling_locations - 1
    sampled = []
    for level, (h, w) in enumerate(shapes):
        # (bs, h*w, heads, dims) -> (bs*heads, dims, h, w)
        value_l = value_list[level].permute(0, 2, 3, 1).reshape(bs * num_heads, head_dims, h, w)
        # (bs, queries, heads, points, 2) -> (bs*heads, queries, points, 2)
        grid_l = grids[:, :, :, level].transpose(1, 2).flatten(0, 1)
        sampled.append(
            F.grid_sample(
                value_l, grid_l, mode="bilinear", padding_mode="zeros", align_corners=False
            )
        )
    # (bs*heads, dims, queries, levels*points)
    stacked = torch.stack(sampled, dim=-2).flatten(-2)
    weights = attention_weights.transpose(1, 2).reshape(
        bs * num_heads, 1, num_queries, num_levels * num_points
    )
    output = (stacked * weights).sum(-1).view(bs, num_heads * head_dims, num_queries)
    return output.transpose(1, 2).contiguous()


def _attention(
    value: Tensor,
    value_spatial_shapes: Tensor,
    value_level_start_index: Tensor,
    sampling_locations: Tensor,
    attention_weights: Tensor,
    im2col_step: Any = None,
) -> Tensor:
    # value_level_start_index is implied by the shapes, and im2col_step is the CUDA kernel's
    # batching step. Like mmcv, locations and weights follow value's dtype (AMP casts value).
    return multi_scale_deformable_attn_pytorch(
        value,
        value_spatial_shapes,
        sampling_locations.type_as(value),
        attention_weights.type_as(value),
    )


MultiScaleDeformableAttnFunction = op_function(
    "MultiScaleDeformableAttnFunction",
    _attention,
    __name__,
    doc="""mmcv's autograd function of its CUDA kernel; here it runs the PyTorch path.

    ``apply(value, value_spatial_shapes, value_level_start_index, sampling_locations,
    attention_weights, im2col_step)`` gives the attended values ``(bs, num_queries,
    embed_dims)``, as :func:`multi_scale_deformable_attn_pytorch`.
    """,
)


@ATTENTION.register_module()
class MultiScaleDeformableAttention(BaseModule):
    """The attention of `Deformable DETR <https://arxiv.org/abs/2010.04159>`_.

    Args:
        embed_dims: Embedding dimension. Default: 256.
        num_heads: Attention heads. Default: 8.
        num_levels: Feature levels. Default: 4.
        num_points: Sampling points per query, head and level. Default: 4.
        im2col_step: Step of mmcv's CUDA kernel (kept for configs). Default: 64.
        dropout: Dropout on the output before adding the identity. Default: 0.1.
        batch_first: Whether inputs are (batch, n, embed_dims) instead of (n, batch,
            embed_dims). Default: False.
        norm_cfg: Kept for mmcv's signature (unused, as in mmcv). Default: None.
        init_cfg: Initialisation config. Default: None.

    Raises:
        ValueError: ``embed_dims`` is not divisible by ``num_heads``.
    """

    def __init__(
        self,
        embed_dims: int = 256,
        num_heads: int = 8,
        num_levels: int = 4,
        num_points: int = 4,
        im2col_step: int = 64,
        dropout: float = 0.1,
        batch_first: bool = False,
        norm_cfg: dict | None = None,
        init_cfg: dict | None = None,
    ) -> None:
        super().__init__(init_cfg)
        if embed_dims % num_heads != 0:
            raise ValueError(
                f"embed_dims must be divisible by num_heads, got {embed_dims} and {num_heads}"
            )
        head_dims = embed_dims // num_heads
        if head_dims & (head_dims - 1) != 0:
            # Same advice as mmcv gives (it matters for its CUDA kernel, and is harmless here).
            warnings.warn(
                "MultiScaleDeformableAttention: embed_dims // num_heads is "
                f"{head_dims}; a power of 2 is the efficient choice for mmcv's CUDA kernel",
                stacklevel=2,
            )
        self.norm_cfg = norm_cfg
        self.dropout = nn.Dropout(dropout)
        self.batch_first = batch_first
        self.im2col_step = im2col_step
        self.embed_dims = embed_dims
        self.num_levels = num_levels
        self.num_heads = num_heads
        self.num_points = num_points
        self.sampling_offsets = nn.Linear(embed_dims, num_heads * num_levels * num_points * 2)
        self.attention_weights = nn.Linear(embed_dims, num_heads * num_levels * num_points)
        self.value_proj = nn.Linear(embed_dims, embed_dims)
        self.output_proj = nn.Linear(embed_dims, embed_dims)
        self.init_weights()

    def init_weights(self) -> None:
        """Initialise as mmcv does.

        Offsets start on rays in ``num_heads`` directions (point ``i`` at distance ``i + 1``),
        attention weights uniform, projections Xavier-uniform with zero bias.
        """
        constant_init(self.sampling_offsets, 0.0)
        device = self.sampling_offsets.weight.device
        thetas = torch.arange(self.num_heads, dtype=torch.float32, device=device) * (
            2.0 * math.pi / self.num_heads
        )
        directions = torch.stack([thetas.cos(), thetas.sin()], -1)
        # Scale each direction so its larger component is +-1 (a square, not a circle).
        directions = directions / directions.abs().max(-1, keepdim=True)[0]
        grid = directions.view(self.num_heads, 1, 1, 2).repeat(
            1, self.num_levels, self.num_points, 1
        )
        grid = grid * torch.arange(1, self.num_points + 1, device=device).view(1, 1, -1, 1)
        self.sampling_offsets.bias.data = grid.reshape(-1)
        constant_init(self.attention_weights, val=0.0, bias=0.0)
        xavier_init(self.value_proj, distribution="uniform", bias=0.0)
        xavier_init(self.output_proj, distribution="uniform", bias=0.0)
        self._is_init = True

    @deprecated_api_warning({"residual": "identity"}, cls_name="MultiScaleDeformableAttention")
    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        identity: Tensor | None = None,
        query_pos: Tensor | None = None,
        key_padding_mask: Tensor | None = None,
        reference_points: Tensor | None = None,
        spatial_shapes: Tensor | None = None,
        level_start_index: Tensor | None = None,
        **kwargs: Any,
    ) -> Tensor:
        """Attend from each query to sampled points of every level.

        Args:
            query: Queries, (num_query, bs, embed_dims) (or batch first).
            key: Unused (the keys are the sampled values), as in mmcv.
            value: Flattened multi-level values, (num_value, bs, embed_dims) (or batch
                first). Default: ``query``.
            identity: Added to the output. Default: ``query`` (before ``query_pos``).
            query_pos: Positional encoding added to ``query``.
            key_padding_mask: True at padded values, shape (bs, num_value).
            reference_points: Normalised reference points (bs, num_query, num_levels, 2), or
                boxes (cx, cy, w, h) with shape (bs, num_query, num_levels, 4).
            spatial_shapes: (h, w) of each level, shape (num_levels, 2).
            level_start_index: Start of each level in ``value``, shape (num_levels,).
            **kwargs: Ignored (callers pass the arguments of other attentions).

        Returns:
            The output, shaped like ``query``.

        Raises:
            ValueError: the last dimension of ``reference_points`` is neither 2 nor 4.
        """
        if value is None:
            value = query
        if identity is None:
            identity = query
        if query_pos is not None:
            query = query + query_pos
        if not self.batch_first:
            query = query.permute(1, 0, 2)
            value = value.permute(1, 0, 2)
        bs, num_query, _ = query.shape
        _, num_value, _ = value.shape
        assert int((spatial_shapes[:, 0] * spatial_shapes[:, 1]).sum()) == num_value, (
            "the spatial shapes do not add up to the number of values"
        )
        value = self.value_proj(value)
        if key_padding_mask is not None:
            value = value.masked_fill(key_padding_mask[..., None], 0.0)
        value = value.view(bs, num_value, self.num_heads, -1)
        offsets = self.sampling_offsets(query).view(
            bs, num_query, self.num_heads, self.num_levels, self.num_points, 2
        )
        weights = self.attention_weights(query).view(
            bs, num_query, self.num_heads, self.num_levels * self.num_points
        )
        weights = weights.softmax(-1).view(
            bs, num_query, self.num_heads, self.num_levels, self.num_points
        )
        if reference_points.shape[-1] == 2:
            # Offsets are in pixels of each level: divide by that level's (w, h).
            normalizer = torch.stack([spatial_shapes[..., 1], spatial_shapes[..., 0]], -1)
            locations = (
                reference_points[:, :, None, :, None, :]
                + offsets / normalizer[None, None, None, :, None, :]
            )
        elif reference_points.shape[-1] == 4:
            # Offsets are relative to the box: half its size over num_points per unit.
            locations = (
                reference_points[:, :, None, :, None, :2]
                + offsets / self.num_points * reference_points[:, :, None, :, None, 2:] * 0.5
            )
        else:
            raise ValueError(
                "the last dimension of reference_points must be 2 or 4, got "
                f"{reference_points.shape[-1]}"
            )
        output = MultiScaleDeformableAttnFunction.apply(
            value, spatial_shapes, level_start_index, locations, weights, self.im2col_step
        )
        output = self.output_proj(output)
        if not self.batch_first:
            output = output.permute(1, 0, 2)
        return self.dropout(output) + identity
