"""mmcv-full's NMS CPU kernels (nms, soft_nms, batched_nms) on fixed-seed boxes.

Run: ``python -m scripts.mmcv_reference.nms`` in a Python with mmcv-full's CPU build.
"""

from __future__ import annotations

import torch
from mmcv.ops import batched_nms, nms, soft_nms

from scripts.mmcv_reference import save_case


def integer_boxes(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Boxes with integer corners (many exact IoU ties with a threshold) and distinct scores."""
    g = torch.Generator().manual_seed(seed)
    xy = torch.randint(0, 40, (n, 2), generator=g).float()
    wh = torch.randint(1, 20, (n, 2), generator=g).float()
    return torch.cat([xy, xy + wh], 1), torch.randperm(n, generator=g).float() / n + 0.001


def clustered_boxes(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Detector-like boxes: jittered copies around a few objects, random scores."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.rand(n // 20 + 1, 2, generator=g) * 300
    sizes = torch.rand(n // 20 + 1, 2, generator=g) * 80 + 10
    k = torch.randint(0, len(centers), (n,), generator=g)
    c = centers[k] + torch.randn(n, 2, generator=g) * sizes[k] * 0.1
    wh = sizes[k] * (1 + torch.randn(n, 2, generator=g) * 0.1).abs()
    return torch.cat([c - wh / 2, c + wh / 2], 1), torch.rand(n, generator=g)


def main() -> None:
    """Write this family's cases under tests/data/mmcv_reference/."""
    boxes, scores = integer_boxes(400, 0)
    for thr in (0.6, 0.3, 0.1):
        for offset in (0, 1):
            _, keep = nms(boxes, scores, thr, offset=offset)
            save_case(
                "nms",
                f"nms_int400_thr{int(thr * 10)}_off{offset}",
                {"boxes": boxes, "scores": scores, "thr": torch.tensor(thr), "keep": keep},
            )
    boxes, scores = clustered_boxes(300, 1)
    for method in ("linear", "gaussian", "naive"):
        dets, keep = soft_nms(boxes, scores, 0.3, 0.5, 1e-3, method)
        save_case(
            "nms",
            f"soft_nms_{method}",
            {"boxes": boxes, "scores": scores, "dets": dets, "keep": keep},
        )
    crowded_soft_nms()
    idxs = torch.arange(300) % 3
    dets, keep = batched_nms(boxes, scores, idxs, dict(iou_threshold=0.5))
    save_case(
        "nms",
        "batched_nms",
        {"boxes": boxes, "scores": scores, "idxs": idxs, "dets": dets, "keep": keep},
    )


def crowded_soft_nms() -> None:
    """Linear soft-NMS where boxes are decayed several times in one round (exact products)."""
    boxes, scores = clustered_boxes(200, 2)
    dets, keep = soft_nms(boxes, scores, 0.3, 0.5, 1e-3, "linear")
    save_case(
        "nms",
        "soft_nms_linear_crowded",
        {"boxes": boxes, "scores": scores, "dets": dets, "keep": keep},
    )


if __name__ == "__main__":
    main()
