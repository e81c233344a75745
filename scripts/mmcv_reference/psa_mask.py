"""mmcv-full's PSAMask CPU kernel, both modes, forward and input gradient.

Run: ``python -m scripts.mmcv_reference.psa_mask`` in a Python with mmcv-full's CPU build.
"""

from __future__ import annotations

import torch
from mmcv.ops import PSAMask

from scripts.mmcv_reference import save_case


def main() -> None:
    """Write this family's cases under tests/data/mmcv_reference/."""
    g = torch.Generator().manual_seed(0)
    for psa_type in ("collect", "distribute"):
        for mask in ((5, 5), (3, 5)):
            x = torch.randn(2, mask[0] * mask[1], 6, 7, generator=g).requires_grad_(True)
            out = PSAMask(psa_type, mask)(x)
            grad_out = torch.randn(out.shape, generator=g)
            out.backward(grad_out)
            save_case(
                "psa_mask",
                f"{psa_type}_{mask[0]}x{mask[1]}",
                {"x": x, "out": out, "grad_out": grad_out, "grad_x": x.grad},
            )


if __name__ == "__main__":
    main()
