"""mmcv.ops.fused_bias_leakyrelu: not provided (it needs a compiled mmcv-full kernel).

Its names import; using one raises :class:`~mmpar.ops._unsupported.UnsupportedOpError`.
"""

from __future__ import annotations

from ._unsupported import GAN, unsupported_class, unsupported_function

__all__ = ["FusedBiasLeakyReLU", "fused_bias_leakyrelu"]

FusedBiasLeakyReLU = unsupported_class("FusedBiasLeakyReLU", GAN, __name__)
fused_bias_leakyrelu = unsupported_function("fused_bias_leakyrelu", GAN, __name__)
