"""Geometric and photometric transforms on H×W(×C) NumPy images (mmcls 0.x semantics)."""

from __future__ import annotations

import numbers
from typing import Sequence, Union

import numpy as np
import torch
import torch.nn.functional as F

from ..registry import PIPELINES
from .rng import get_rng

_PAD_MODES = ("constant", "edge", "reflect", "symmetric")
_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "area")


def _img_keys(results: dict) -> list[str]:
    return list(results.get("img_fields", ["img"]))


def _pair(value: Union[int, Sequence[int]], name: str) -> tuple[int, int]:
    if isinstance(value, numbers.Integral):
        return int(value), int(value)
    if isinstance(value, Sequence) and len(value) == 2:
        return int(value[0]), int(value[1])
    raise TypeError(f"{name} must be an int or an (h, w) pair, got {value!r}")


def pad_image(
    img: np.ndarray,
    left: int,
    top: int,
    right: int,
    bottom: int,
    pad_val: Union[float, Sequence[float]] = 0,
    padding_mode: str = "constant",
) -> np.ndarray:
    """Pad an H×W(×C) image on each side.

    Args:
        img: The image.
        left: Pixels added on the left.
        top: Pixels added on top.
        right: Pixels added on the right.
        bottom: Pixels added at the bottom.
        pad_val: Fill value (scalar, or one per channel) for ``padding_mode='constant'``.
        padding_mode: ``'constant'``, ``'edge'``, ``'reflect'`` or ``'symmetric'``.

    Returns:
        The padded image (same dtype).
    """
    if padding_mode not in _PAD_MODES:
        raise ValueError(f"padding_mode must be one of {_PAD_MODES}, got {padding_mode!r}")
    width = [(top, bottom), (left, right)] + [(0, 0)] * (img.ndim - 2)
    if padding_mode != "constant":
        return np.pad(img, width, mode=padding_mode)
    if isinstance(pad_val, numbers.Number):
        return np.pad(img, width, mode="constant", constant_values=pad_val)
    if img.ndim != 3 or len(pad_val) != img.shape[2]:
        raise ValueError(
            f"pad_val {tuple(pad_val)} must have one value per channel of an H×W×C image, "
            f"got image shape {img.shape}"
        )
    out = np.empty(
        (img.shape[0] + top + bottom, img.shape[1] + left + right, img.shape[2]), img.dtype
    )
    out[...] = np.asarray(pad_val, dtype=img.dtype)
    out[top : top + img.shape[0], left : left + img.shape[1]] = img
    return out


@PIPELINES.register_module()
class RandomCrop:
    """Crop a random ``size`` window, optionally after padding (CIFAR's ``padding=4`` recipe).

    Args:
        size: Output ``(h, w)`` or an int for a square crop.
        padding: Border added first: int (all sides), ``(lr, tb)`` or ``(left, top, right,
            bottom)``.
        pad_if_needed: Pad images smaller than ``size`` so the crop always fits.
        pad_val: Fill value for constant padding (scalar or per channel).
        padding_mode: ``'constant'``, ``'edge'``, ``'reflect'`` or ``'symmetric'``.
    """

    def __init__(
        self,
        size: Union[int, Sequence[int]],
        padding: Union[int, Sequence[int]] | None = None,
        pad_if_needed: bool = False,
        pad_val: Union[float, Sequence[float]] = 0,
        padding_mode: str = "constant",
    ) -> None:
        self.size = _pair(size, "RandomCrop size")
        if min(self.size) <= 0:
            raise ValueError(f"RandomCrop size must be positive, got {size!r}")
        if padding_mode not in _PAD_MODES:
            raise ValueError(f"padding_mode must be one of {_PAD_MODES}, got {padding_mode!r}")
        if padding is None:
            self.padding = None
        elif isinstance(padding, numbers.Integral):
            self.padding = (int(padding),) * 4
        elif len(padding) == 2:
            self.padding = (padding[0], padding[1], padding[0], padding[1])
        elif len(padding) == 4:
            self.padding = tuple(padding)
        else:
            raise ValueError(f"padding must be an int or have 2 or 4 values, got {padding!r}")
        self.pad_if_needed = pad_if_needed
        self.pad_val = pad_val
        self.padding_mode = padding_mode

    def __call__(self, results: dict) -> dict:
        """Crop every image field with the same window."""
        rng = get_rng(results)
        th, tw = self.size
        for key in _img_keys(results):
            img = results[key]
            if self.padding is not None:
                img = pad_image(img, *self.padding, self.pad_val, self.padding_mode)
            h, w = img.shape[:2]
            if self.pad_if_needed and (h < th or w < tw):
                dh, dw = max(th - h, 0), max(tw - w, 0)
                img = pad_image(img, dw, dh, dw, dh, self.pad_val, self.padding_mode)
                h, w = img.shape[:2]
            if h < th or w < tw:
                raise ValueError(
                    f"RandomCrop size {self.size} is larger than the image {(h, w)} in "
                    f"results[{key!r}]; set pad_if_needed=True or resize first"
                )
            top = int(rng.integers(0, h - th + 1))
            left = int(rng.integers(0, w - tw + 1))
            results[key] = np.ascontiguousarray(img[top : top + th, left : left + tw])
        results["img_shape"] = results[_img_keys(results)[0]].shape
        return results

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


@PIPELINES.register_module()
class RandomFlip:
    """Flip images with probability ``flip_prob``.

    Args:
        flip_prob: Probability of flipping, in [0, 1].
        direction: ``'horizontal'`` or ``'vertical'``.
    """

    def __init__(self, flip_prob: float = 0.5, direction: str = "horizontal") -> None:
        if not 0 <= flip_prob <= 1:
            raise ValueError(f"flip_prob must be in [0, 1], got {flip_prob}")
        if direction not in ("horizontal", "vertical"):
            raise ValueError(f"direction must be 'horizontal' or 'vertical', got {direction!r}")
        self.flip_prob = flip_prob
        self.direction = direction

    def __call__(self, results: dict) -> dict:
        """Flip (or not) and record ``flip``/``flip_direction``."""
        flip = bool(get_rng(results).random() < self.flip_prob)
        results["flip"] = flip
        results["flip_direction"] = self.direction
        if flip:
            axis = 1 if self.direction == "horizontal" else 0
            for key in _img_keys(results):
                results[key] = np.ascontiguousarray(np.flip(results[key], axis=axis))
        return results

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(flip_prob={self.flip_prob}, direction='{self.direction}')"
        )


def resize_image(img: np.ndarray, size: tuple[int, int], interpolation: str) -> np.ndarray:
    """Resize an H×W(×C) image to ``size`` = (h, w), keeping its dtype (uint8 is rounded)."""
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {_INTERPOLATIONS}, got {interpolation!r}")
    if img.shape[:2] == tuple(size):
        return img
    tensor = torch.from_numpy(np.ascontiguousarray(img)).float()
    tensor = tensor.unsqueeze(-1) if img.ndim == 2 else tensor
    tensor = tensor.permute(2, 0, 1).unsqueeze(0)
    kwargs = {}
    if interpolation in ("bilinear", "bicubic"):
        kwargs = dict(align_corners=False, antialias=True)
    out = F.interpolate(tensor, size=tuple(size), mode=interpolation, **kwargs)
    out = out.squeeze(0).permute(1, 2, 0)
    out = out.squeeze(-1) if img.ndim == 2 else out
    array = out.numpy()
    if np.issubdtype(img.dtype, np.integer):
        info = np.iinfo(img.dtype)
        array = np.clip(np.rint(array), info.min, info.max)
    return array.astype(img.dtype)


@PIPELINES.register_module()
class Resize:
    """Resize images.

    Args:
        size: ``(h, w)`` or an int (square). With ``keep_ratio=True`` an int (or ``(s, -1)``)
            sets the short edge, and ``(h, w)`` is the box the image is scaled to fit in
            (long edge ≤ max, short edge ≤ min, as mmcv's ``rescale``).
        keep_ratio: Keep the aspect ratio.
        interpolation: ``'nearest'``, ``'bilinear'``, ``'bicubic'`` or ``'area'``.
    """

    def __init__(
        self,
        size: Union[int, Sequence[int]],
        keep_ratio: bool = False,
        interpolation: str = "bilinear",
    ) -> None:
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(
                f"interpolation must be one of {_INTERPOLATIONS}, got {interpolation!r}"
            )
        if isinstance(size, Sequence) and len(size) == 2 and size[1] == -1:
            self.size, self.short_edge = (int(size[0]), -1), True
        else:
            self.size = _pair(size, "Resize size")
            self.short_edge = keep_ratio and isinstance(size, numbers.Integral)
        if self.size[0] <= 0 or (self.size[1] <= 0 and not self.short_edge):
            raise ValueError(f"Resize size must be positive, got {size!r}")
        self.keep_ratio = keep_ratio or self.short_edge
        self.interpolation = interpolation

    def _target(self, h: int, w: int) -> tuple[int, int]:
        if not self.keep_ratio:
            return self.size
        if self.short_edge:
            scale = self.size[0] / min(h, w)
        else:
            scale = min(max(self.size) / max(h, w), min(self.size) / min(h, w))
        return max(int(h * scale + 0.5), 1), max(int(w * scale + 0.5), 1)

    def __call__(self, results: dict) -> dict:
        """Resize every image field; records ``img_shape`` and ``scale_factor`` (w, h)."""
        keys = _img_keys(results)
        h, w = results[keys[0]].shape[:2]
        target = self._target(h, w)
        for key in keys:
            results[key] = resize_image(results[key], target, self.interpolation)
        results["img_shape"] = results[keys[0]].shape
        results["scale_factor"] = (target[1] / w, target[0] / h)
        return results

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(size={self.size}, keep_ratio={self.keep_ratio}, "
            f"interpolation='{self.interpolation}')"
        )


@PIPELINES.register_module()
class Normalize:
    """``(img - mean) / std`` per channel, as float32; records ``img_norm_cfg``.

    Args:
        mean: Per-channel mean (in the image's value range, e.g. 0–255).
        std: Per-channel standard deviation.
        to_rgb: Reverse the channel order first (BGR → RGB, mmcv semantics). Images loaded
            by mmpar are already RGB, so mmpar configs use ``to_rgb=False``.
    """

    def __init__(self, mean: Sequence[float], std: Sequence[float], to_rgb: bool = True) -> None:
        self.mean = np.asarray(mean, dtype=np.float32)
        self.std = np.asarray(std, dtype=np.float32)
        if self.mean.shape != self.std.shape or self.mean.ndim != 1:
            raise ValueError(f"mean {mean!r} and std {std!r} must be equal-length sequences")
        if np.any(self.std == 0):
            raise ValueError(f"std must be non-zero, got {std!r}")
        self.to_rgb = to_rgb

    def __call__(self, results: dict) -> dict:
        """Normalize every image field."""
        for key in _img_keys(results):
            img = results[key].astype(np.float32)
            channels = 1 if img.ndim == 2 else img.shape[2]
            if channels != len(self.mean):
                raise ValueError(
                    f"Normalize has {len(self.mean)} mean/std values but results[{key!r}] has "
                    f"{channels} channels (shape {img.shape}); give one value per channel"
                )
            if self.to_rgb and img.ndim == 3 and channels == 3:
                img = img[..., ::-1]
            results[key] = np.ascontiguousarray((img - self.mean) / self.std)
        results["img_norm_cfg"] = dict(
            mean=self.mean.tolist(), std=self.std.tolist(), to_rgb=self.to_rgb
        )
        return results

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(mean={self.mean.tolist()}, std={self.std.tolist()}, "
            f"to_rgb={self.to_rgb})"
        )
