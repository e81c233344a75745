"""Load images from disk with PIL."""

from __future__ import annotations

import os.path as osp

import numpy as np
from PIL import Image, UnidentifiedImageError

from ..registry import PIPELINES

_COLOR_MODES = {"color": "RGB", "grayscale": "L", "unchanged": None}


def read_image(path: str, color_type: str = "color", channel_order: str = "rgb") -> np.ndarray:
    """Decode an image file into a NumPy array.

    Args:
        path: Image file path.
        color_type: ``'color'`` (H×W×3), ``'grayscale'`` (H×W) or ``'unchanged'`` (as stored).
        channel_order: ``'rgb'`` or ``'bgr'`` (mmcv's default order) for colour images.

    Returns:
        The decoded image (uint8 for 8-bit files).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        OSError: The file is not a decodable image (the message names the file).
    """
    if color_type not in _COLOR_MODES:
        raise ValueError(f"color_type must be one of {list(_COLOR_MODES)}, got {color_type!r}")
    if channel_order not in ("rgb", "bgr"):
        raise ValueError(f"channel_order must be 'rgb' or 'bgr', got {channel_order!r}")
    if not osp.isfile(path):
        raise FileNotFoundError(f"image file not found: {path}")
    try:
        with Image.open(path) as img:
            mode = _COLOR_MODES[color_type]
            if mode is not None and img.mode != mode:
                img = img.convert(mode)
            array = np.array(img)  # a writable copy (torch.from_numpy warns on read-only)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as err:
        raise OSError(
            f"cannot decode image file {path!r} ({err}); the file is corrupt or not an image. "
            f"Replace or remove it from the dataset."
        ) from err
    if array.ndim == 3 and array.shape[2] >= 3 and channel_order == "bgr":
        array = np.ascontiguousarray(array[..., 2::-1] if array.shape[2] == 3 else array)
    return array


@PIPELINES.register_module()
class LoadImageFromFile:
    """Read ``results['img_path']`` (or ``img_prefix`` + ``img_info['filename']``, mmcls style).

    Adds ``img``, ``filename``, ``ori_filename``, ``img_shape`` and ``ori_shape``.

    Args:
        to_float32: Convert the image to float32.
        color_type: ``'color'``, ``'grayscale'`` or ``'unchanged'``.
        channel_order: ``'rgb'`` (default) or ``'bgr'`` (what mmcv's loader returns).
        file_client_args: Accepted for mmcv compatibility; only ``backend='disk'`` is supported.
    """

    def __init__(
        self,
        to_float32: bool = False,
        color_type: str = "color",
        channel_order: str = "rgb",
        file_client_args: dict | None = None,
    ) -> None:
        backend = (file_client_args or {}).get("backend", "disk")
        if backend != "disk":
            raise ValueError(f"LoadImageFromFile supports only backend='disk', got {backend!r}")
        if color_type not in _COLOR_MODES:
            raise ValueError(f"color_type must be one of {list(_COLOR_MODES)}, got {color_type!r}")
        self.to_float32 = to_float32
        self.color_type = color_type
        self.channel_order = channel_order

    def __call__(self, results: dict) -> dict:
        """Load the image into ``results['img']``."""
        if "img_path" in results:
            filename = results["img_path"]
            ori_filename = osp.basename(filename)
        elif "img_info" in results:
            ori_filename = results["img_info"]["filename"]
            prefix = results.get("img_prefix")
            filename = osp.join(prefix, ori_filename) if prefix else ori_filename
        else:
            raise KeyError(
                "LoadImageFromFile needs results['img_path'] or results['img_info']['filename'], "
                f"got keys {sorted(results)}"
            )
        img = read_image(filename, self.color_type, self.channel_order)
        if self.to_float32:
            img = img.astype(np.float32)
        results["img"] = img
        results["filename"] = filename
        results["ori_filename"] = ori_filename
        results["img_shape"] = img.shape
        results["ori_shape"] = img.shape
        return results

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(to_float32={self.to_float32}, "
            f"color_type='{self.color_type}', channel_order='{self.channel_order}')"
        )
