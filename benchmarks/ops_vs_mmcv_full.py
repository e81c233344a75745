"""mmpar.ops against mmcv-full 1.7.2's compiled CPU kernels: same inputs, same run.

Run in a Python where ``import mmcv.ops`` is mmcv-full's CPU build (docs/migrating_from_mmcv.md,
"Reference data"), with this repository on the path::

    PYTHONPATH=. /work/mmcvfull/venv/bin/python benchmarks/ops_vs_mmcv_full.py

Prints, per op, the median time of mmcv-full and of mmpar (forward only, one thread) and
their ratio. ``roi_pool`` and ``border_align`` have no CPU kernel in mmcv-full: only mmpar's
time is shown. ``--only TEXT`` times the cases whose name contains TEXT (e.g. ``--only
pixel_group``).
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable

import cv2
import numpy as np
import torch

warnings.filterwarnings("ignore")

import mmcv.ops as mmcv_ops  # noqa: E402
from timing import median_ms  # noqa: E402  (benchmarks/timing.py, beside this script)

import mmpar.ops as ours  # noqa: E402


def detections(n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Detector-like boxes: jittered copies around ~n/20 objects on an 800-pixel image."""
    g = torch.Generator().manual_seed(seed)
    objects = n // 20 + 1
    centers = torch.rand(objects, 2, generator=g) * 800
    sizes = torch.rand(objects, 2, generator=g) * 150 + 20
    k = torch.randint(0, objects, (n,), generator=g)
    c = centers[k] + torch.randn(n, 2, generator=g) * sizes[k] * 0.1
    wh = sizes[k] * (1 + torch.randn(n, 2, generator=g) * 0.1).abs()
    return torch.cat([c - wh / 2, c + wh / 2], 1), torch.rand(n, generator=g)


def text_maps(size: int = 640, count: int = 24, seed: int = 0) -> tuple[tuple, tuple]:
    """Arguments of ``pixel_group`` (PAN) and ``contour_expand`` (PSENet), as mmocr makes them.

    ``count`` text lines on a ``size`` x ``size`` map, 4-channel embeddings, 7 kernels.
    """
    rng = np.random.default_rng(seed)
    lines = np.zeros((size, size), np.int32)
    for label in range(1, count + 1):
        center = (int(rng.integers(0, size)), int(rng.integers(0, size)))
        axes = (int(rng.integers(20, size // 4)), int(rng.integers(8, size // 16)))
        cv2.ellipse(lines, center, axes, float(rng.uniform(-20, 20)), 0, 360, label, -1)
    text = lines > 0
    kernel = cv2.erode(text.astype(np.uint8), np.ones((9, 9), np.uint8))
    region_num, labels = cv2.connectedComponents(kernel, connectivity=4)
    contours, _ = cv2.findContours(kernel * 255, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
    contour = np.zeros(text.shape, np.uint8)
    cv2.drawContours(contour, contours, -1, 1)
    centres = rng.normal(0, 1, (count + 1, 4)).astype(np.float32)
    embedding = (centres[lines] + rng.normal(0, 0.3, (size, size, 4))).astype(np.float32)
    score = np.where(text, 0.9, 0.1).astype(np.float32)
    pan = (score, text, embedding, labels.astype(np.int32), contour, region_num, 0.8)
    masks = np.stack(
        [cv2.erode(text.astype(np.uint8), np.ones((k, k), np.uint8)) for k in range(1, 14, 2)]
    )
    kernel_num, kernel_labels = cv2.connectedComponents(masks[-1], connectivity=4)
    pse = (masks, kernel_labels.astype(np.int32), 16, kernel_num)
    return pan, pse


def cases() -> list[tuple[str, Callable[[], object], Callable[[], object] | None]]:
    """(name, mmcv call, mmpar call) per op and size."""
    g = torch.Generator().manual_seed(0)
    boxes, scores = detections(2000)
    sboxes, sscores = detections(1000, 1)
    feat = torch.randn(2, 256, 50, 68, generator=g)
    xy = torch.rand(512, 2, generator=g) * 700
    wh = torch.rand(512, 2, generator=g) * 300 + 16
    rois = torch.cat([torch.randint(0, 2, (512, 1), generator=g).float(), xy, xy + wh], 1)
    x = torch.randn(2, 64, 64, 64, generator=g)
    w = torch.randn(64, 64, 3, 3, generator=g)
    off = torch.randn(2, 18, 64, 64, generator=g)
    mask = torch.rand(2, 9, 64, 64, generator=g)
    psa = torch.randn(2, 97 * 97, 64, 64, generator=g)
    out = []
    out.append(
        (
            "nms, 2000 boxes, thr 0.5",
            lambda: mmcv_ops.nms(boxes, scores, 0.5),
            lambda: ours.nms(boxes, scores, 0.5),
        )
    )
    for method in ("linear", "gaussian"):
        out.append(
            (
                f"soft_nms {method}, 1000 boxes",
                lambda m=method: mmcv_ops.soft_nms(sboxes, sscores, 0.3, 0.5, 1e-3, m),
                lambda m=method: ours.soft_nms(sboxes, sscores, 0.3, 0.5, 1e-3, m),
            )
        )
    for mode in ("avg", "max"):
        out.append(
            (
                f"roi_align {mode}, 512 RoIs, 256x50x68, 7x7, ratio 2",
                lambda m=mode: mmcv_ops.roi_align(feat, rois, 7, 1 / 16, 2, m, True),
                lambda m=mode: ours.roi_align(feat, rois, 7, 1 / 16, 2, m, True),
            )
        )
    out.append(
        ("roi_pool, 512 RoIs, 256x50x68, 7x7", None, lambda: ours.roi_pool(feat, rois, 7, 1 / 16))
    )
    out.append(
        (
            "deform_conv2d, 2x64x64x64, 3x3",
            lambda: mmcv_ops.deform_conv2d(x, off, w, 1, 1),
            lambda: ours.deform_conv2d(x, off, w, 1, 1),
        )
    )
    out.append(
        (
            "modulated_deform_conv2d, 2x64x64x64",
            lambda: mmcv_ops.modulated_deform_conv2d(x, off, mask, w, None, 1, 1),
            lambda: ours.modulated_deform_conv2d(x, off, mask, w, None, 1, 1),
        )
    )
    for kind in ("collect", "distribute"):
        out.append(
            (
                f"PSAMask {kind}, 2x(97*97)x64x64",
                lambda k=kind: mmcv_ops.PSAMask(k, 97)(psa),
                lambda k=kind: ours.PSAMask(k, 97)(psa),
            )
        )
    pan, pse = text_maps()
    out.append(
        (
            "pixel_group, 640x640, 24 text lines",
            lambda: mmcv_ops.pixel_group(*pan),
            lambda: ours.pixel_group(*pan),
        )
    )
    out.append(
        (
            "contour_expand, 7 kernels of 640x640",
            lambda: mmcv_ops.contour_expand(*pse),
            lambda: ours.contour_expand(*pse),
        )
    )
    border = torch.randn(2, 4 * 64, 50, 68, generator=g)
    corner = torch.rand(2, 50 * 68, 2, generator=g) * 600
    boxes = torch.cat([corner, corner + torch.rand(2, 50 * 68, 2, generator=g) * 200], -1) / 16
    out.append(
        (
            "border_align, 2x(4*64)x50x68, a box per pixel, pool 10",
            None,
            lambda: ours.border_align(border, boxes, 10),
        )
    )
    return out


def main(argv: list[str] | None = None) -> None:
    """Time every case (or those named by ``--only``) and print one table row each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="time only cases whose name contains this")
    only = parser.parse_args(argv).only
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread")
    print("| op | mmcv-full (ms) | mmpar (ms) | ratio |")
    print("|---|---|---|---|")
    for name, theirs, mine in cases():
        if only not in name:
            continue
        t_mine = median_ms(mine)
        if theirs is None:
            print(f"| {name} | no CPU kernel | {t_mine:.1f} | - |")
            continue
        t_theirs = median_ms(theirs)
        print(f"| {name} | {t_theirs:.1f} | {t_mine:.1f} | {t_mine / t_theirs:.2f}x |")


if __name__ == "__main__":
    main()
