"""mmcv-full's deformable convolution CPU kernels (DCNv1, DCNv2): outputs and gradients.

Offsets include taps that sample at exactly -1 (zero offsets at the border with padding 1),
where mmcv's offset gradient is 0. Run: ``python -m scripts.mmcv_reference.deform_conv`` in a
Python with mmcv-full's CPU build.
"""

from __future__ import annotations

import torch
from mmcv.ops import deform_conv2d, modulated_deform_conv2d

from scripts.mmcv_reference import save_case


def main() -> None:
    """Write this family's cases under tests/data/mmcv_reference/."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 4, 7, 6, generator=g)
    weight = torch.randn(6, 2, 3, 3, generator=g)
    for name, scale in (("zero_offsets", 0.0), ("random_offsets", 1.5)):
        offset = torch.randn(2, 2 * 2 * 9, 7, 6, generator=g) * scale
        # Integer offsets put many taps exactly on pixels and on -1.
        offset = offset.round() if scale else offset
        mask = torch.rand(2, 2 * 9, 7, 6, generator=g)
        grad_out = torch.randn(2, 6, 7, 6, generator=g)
        tensors = {"x": x, "weight": weight, "offset": offset, "mask": mask, "grad_out": grad_out}
        leaves = [t.clone().requires_grad_(True) for t in (x, offset, weight)]
        out = deform_conv2d(*leaves, 1, 1, 1, 2, 2)
        out.backward(grad_out)
        tensors.update(
            dcn_out=out, dcn_gx=leaves[0].grad, dcn_goff=leaves[1].grad, dcn_gw=leaves[2].grad
        )
        leaves = [t.clone().requires_grad_(True) for t in (x, offset, mask, weight)]
        out = modulated_deform_conv2d(*leaves, None, 1, 1, 1, 2, 2)
        out.backward(grad_out)
        tensors.update(
            mdcn_out=out,
            mdcn_gx=leaves[0].grad,
            mdcn_goff=leaves[1].grad,
            mdcn_gmask=leaves[2].grad,
            mdcn_gw=leaves[3].grad,
        )
        save_case("deform_conv", name, tensors)


if __name__ == "__main__":
    main()
