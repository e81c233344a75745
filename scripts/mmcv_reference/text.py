"""mmcv-full's text-detection kernels: ``pixel_group`` (PAN) and ``contour_expand`` (PSENet).

Run: ``python -m scripts.mmcv_reference.text`` in a Python with mmcv-full's CPU build. Inputs are
made as mmocr 0.x's post-processors make them (``cv2.connectedComponents`` labels, contours
drawn by ``cv2.drawContours``), plus cases aimed at the kernels' fine print: instances that
compete for pixels (the queue's order decides), embedding distances within a float32 rounding
of the threshold, masks that are not nested, one kernel only. ``pixel_group``'s ragged result is
stored flat, with each list's length.

(``border_align`` has no CPU kernel in mmcv-full 1.7.2, CUDA only: it is tested against a loop
that follows the CUDA kernel, in tests/test_ops/test_border_align.py.)
"""

from __future__ import annotations

import cv2
import numpy as np
import torch
from mmcv.ops import contour_expand, pixel_group

from scripts.mmcv_reference import save_case


def _blobs(rng: np.random.Generator, height: int, width: int, count: int) -> np.ndarray:
    """A label map of ``count`` filled ellipses (later ones drawn over earlier ones)."""
    canvas = np.zeros((height, width), np.int32)
    for label in range(1, count + 1):
        center = (int(rng.integers(0, width)), int(rng.integers(0, height)))
        axes = (int(rng.integers(4, width // 3)), int(rng.integers(3, height // 4)))
        cv2.ellipse(canvas, center, axes, float(rng.uniform(0, 180)), 0, 360, label, -1)
    return canvas


def _kernels(kernel: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """The kernel labels and drawn kernel contours, as mmocr's PAN post-processor makes them."""
    region_num, labels = cv2.connectedComponents(kernel.astype(np.uint8), connectivity=4)
    contours, _ = cv2.findContours(
        (kernel * 255).astype(np.uint8), cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE
    )
    contour = np.zeros(kernel.shape, np.uint8)
    cv2.drawContours(contour, contours, -1, 1)
    return region_num, labels.astype(np.int32), contour


def _save_pixel_group(case: str, inputs: dict, region_num: int, threshold: float) -> None:
    result = pixel_group(
        inputs["score"],
        inputs["mask"],
        inputs["embedding"],
        inputs["kernel_label"],
        inputs["kernel_contour"],
        region_num,
        threshold,
    )
    tensors = {key: torch.from_numpy(np.ascontiguousarray(value)) for key, value in inputs.items()}
    tensors.update(
        kernel_region_num=torch.tensor(region_num),
        distance_threshold=torch.tensor(threshold, dtype=torch.float64),
        out_flat=torch.tensor([v for row in result for v in row], dtype=torch.float32),
        out_lengths=torch.tensor([len(row) for row in result]),
    )
    save_case("text", f"pixel_group_{case}", tensors)


def pixel_group_cases() -> None:
    """PAN-like maps, competing instances, and distances at the threshold's rounding."""
    rng = np.random.default_rng(0)
    height, width, channels = 30, 40, 4
    instances = _blobs(rng, height, width, 5)
    text = instances > 0
    kernel = cv2.erode(text.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    region_num, labels, contour = _kernels(kernel)
    centres = rng.normal(0, 1, (7, channels)).astype(np.float32)
    embedding = (centres[instances] + rng.normal(0, 0.35, (height, width, channels))).astype(
        np.float32
    )
    score = np.where(text, rng.uniform(0.5, 1, text.shape), rng.uniform(0, 0.5, text.shape))
    inputs = dict(
        score=score.astype(np.float32),
        mask=text,
        embedding=embedding,
        kernel_label=labels,
        kernel_contour=contour,
    )
    _save_pixel_group("pan", inputs, region_num, 0.8)

    # Equal embeddings everywhere: every text pixel passes, so which kernel wins a pixel is the
    # queue's order alone (kernels side by side, separated by one free column or touching).
    kernel_label = np.zeros((12, 15), np.int32)
    kernel_label[3:9, 2:5], kernel_label[2:6, 6:8], kernel_label[6:10, 8:10] = 1, 2, 3
    kernel_label[1, 12] = 4
    contour = (kernel_label > 0).astype(np.uint8)
    contour[4:8, 3] = 0  # inner pixels of kernel 1 are not queued
    inputs = dict(
        score=rng.uniform(0, 1, (12, 15)).astype(np.float32),
        mask=np.ones((12, 15), bool),
        embedding=np.full((12, 15, 2), 0.25, np.float32),
        kernel_label=kernel_label,
        kernel_contour=contour,
    )
    inputs["mask"][0, :] = False
    inputs["mask"][:, 11] = False
    _save_pixel_group("ties", inputs, 5, 0.5)

    # Squared distances next to threshold^2, where float32-only arithmetic decides some pixels
    # the other way from the kernel's (squares in double, running sum in float32). They sit on
    # every other row and column; the pixels between them have the kernel's embedding (0), so
    # growth reaches each of them.
    size, channels, threshold = 16, 4, 0.7
    limit = np.float32(threshold) * np.float32(threshold)
    differ, agree = [], []
    while len(differ) < 16 or len(agree) < 48:
        e = rng.normal(0, 1, channels).astype(np.float32)
        e *= np.float32(np.sqrt(limit) / np.linalg.norm(e) * rng.uniform(1 - 1e-7, 1 + 1e-7))
        single = wide = np.float32(0)
        for value in e:
            single = np.float32(single + value * value)
            wide = np.float32(np.float64(wide) + np.float64(value) ** 2)
        (differ if (single >= limit) != (wide >= limit) else agree).append(e)
    near = np.stack(differ[:16] + agree[:48])[rng.permutation(64)]
    embedding = np.zeros((size, size, channels), np.float32)
    embedding[::2, ::2] = near.reshape(8, 8, channels)
    kernel_label = np.zeros((size, size), np.int32)
    kernel_label[7, 7] = 1
    embedding[7, 7] = 0
    inputs = dict(
        score=rng.uniform(0, 1, (size, size)).astype(np.float32),
        mask=np.ones((size, size), bool),
        embedding=embedding,
        kernel_label=kernel_label,
        kernel_contour=(kernel_label > 0).astype(np.uint8),
    )
    _save_pixel_group("threshold_rounding", inputs, 2, threshold)


def _save_contour_expand(case: str, masks: np.ndarray, labels: np.ndarray, area: int, num: int):
    result = contour_expand(masks, labels, area, num)
    save_case(
        "text",
        f"contour_expand_{case}",
        {
            "kernel_mask": torch.from_numpy(masks),
            "internal_kernel_label": torch.from_numpy(labels),
            "min_kernel_area": torch.tensor(area),
            "kernel_num": torch.tensor(num),
            "out": torch.tensor(result, dtype=torch.int32),
        },
    )


def contour_expand_cases() -> None:
    """PSENet-like nested kernels, masks that are not nested, and a single kernel."""
    rng = np.random.default_rng(1)
    height, width = 32, 40
    text = _blobs(rng, height, width, 6) > 0
    masks = [text.astype(np.uint8)]
    for size in (3, 5):
        masks.append(cv2.erode(masks[0], np.ones((size, size), np.uint8)))
    masks = np.stack(masks)
    region_num, labels = cv2.connectedComponents(masks[-1], connectivity=4)
    _save_contour_expand("pse", masks, labels.astype(np.int32), 6, region_num)

    # Random, not nested: the rounds would differ if each read its own kernel's mask.
    masks = (rng.uniform(0, 1, (3, 24, 30)) < [[[0.75]], [[0.6]], [[0.08]]]).astype(np.uint8)
    region_num, labels = cv2.connectedComponents(masks[-1], connectivity=4)
    _save_contour_expand("unnested", masks, labels.astype(np.int32), 1, region_num)

    one = masks[:1].copy()
    _save_contour_expand("one_kernel", one, labels.astype(np.int32), 2, region_num)


def main() -> None:
    """Write this family's cases under tests/data/mmcv_reference/text/."""
    pixel_group_cases()
    contour_expand_cases()


if __name__ == "__main__":
    main()
