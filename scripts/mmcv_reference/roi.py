"""mmcv-full's RoIAlign CPU kernel (avg and max modes, forward and input gradient).

Run: ``python -m scripts.mmcv_reference.roi`` in a Python with mmcv-full's CPU build.
"""

from __future__ import annotations

import torch
from mmcv.ops import roi_align

from scripts.mmcv_reference import save_case


def main() -> None:
    """Write this family's cases under tests/data/mmcv_reference/."""
    g = torch.Generator().manual_seed(0)
    feat = torch.randn(2, 4, 12, 14, generator=g)
    corners = torch.rand(16, 2, generator=g) * 26 - 2
    sizes = torch.rand(16, 2, generator=g) * 14
    batch = torch.randint(0, 2, (16, 1), generator=g).float()
    rois = torch.cat([batch, corners, corners + sizes], 1)
    grad_out = torch.randn(16, 4, 3, 2, generator=g)
    for mode in ("avg", "max"):
        for aligned in (True, False):
            for ratio in (0, 2):
                x = feat.clone().requires_grad_(True)
                out = roi_align(x, rois, (3, 2), 0.5, ratio, mode, aligned)
                out.backward(grad_out)
                save_case(
                    "roi",
                    f"roi_align_{mode}_aligned{int(aligned)}_ratio{ratio}",
                    {
                        "feat": feat,
                        "rois": rois,
                        "grad_out": grad_out,
                        "out": out,
                        "grad_feat": x.grad,
                        "ratio": torch.tensor(ratio),
                        "aligned": torch.tensor(aligned),
                    },
                )


if __name__ == "__main__":
    main()
