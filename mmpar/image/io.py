"""Image reading and writing of mmcv 1.x: ``imread``, ``imfrombytes``, ``imwrite``.

Decoding backends: OpenCV (default), Pillow, and, when installed, PyTurboJPEG and tifffile.
Files are read and written through :class:`mmpar.fileio.FileClient`, so ``file_client_args``
and URI prefixes (``http://``, ``s3://`` with petrel, ...) work as in mmcv.
"""

from __future__ import annotations

import importlib
import io
import os.path as osp
import warnings
from pathlib import Path
from typing import Any, Union

import cv2
import numpy as np
from cv2 import IMREAD_COLOR, IMREAD_GRAYSCALE, IMREAD_IGNORE_ORIENTATION, IMREAD_UNCHANGED
from PIL import Image, ImageOps

from ..fileio import FileClient
from ..utils import is_filepath, is_str
from ..utils.compat_errors import same_type_error
from ..utils.misc import import_optional

supported_backends = ["cv2", "turbojpeg", "pillow", "tifffile"]

imread_flags = {
    "color": IMREAD_COLOR,
    "grayscale": IMREAD_GRAYSCALE,
    "unchanged": IMREAD_UNCHANGED,
    "color_ignore_orientation": IMREAD_IGNORE_ORIENTATION | IMREAD_COLOR,
    "grayscale_ignore_orientation": IMREAD_IGNORE_ORIENTATION | IMREAD_GRAYSCALE,
}

# The decoder ``imread``/``imfrombytes`` use when called with ``backend=None``.
imread_backend = "cv2"
# The ``turbojpeg.TurboJPEG`` decoder, made on first use (it loads libturbojpeg).
jpeg = None

# Optional packages: (module, what pip installs).
_OPTIONAL = {"turbojpeg": ("turbojpeg", "PyTurboJPEG"), "tifffile": ("tifffile", "tifffile")}

# The Pillow flags; ``*_ignore_orientation`` skips the EXIF rotation.
_PILLOW_FLAGS = (
    "color",
    "grayscale",
    "unchanged",
    "color_ignore_orientation",
    "grayscale_ignore_orientation",
)
# Canvas for Pillow's 'LA' images: converting them to RGB directly would paint the transparent
# part black and hide black foreground; mmcv composes them on this colour instead.
_LA_CANVAS = (124, 117, 104)


# mmcv's module attributes for the optional packages (None when missing), looked up on first
# access so that importing this module does not import them.
_OPTIONAL_ATTRIBUTES = {
    "TurboJPEG": ("turbojpeg", "TurboJPEG"),
    "TJCS_RGB": ("turbojpeg", "TJCS_RGB"),
    "TJPF_BGR": ("turbojpeg", "TJPF_BGR"),
    "TJPF_GRAY": ("turbojpeg", "TJPF_GRAY"),
    "tifffile": ("tifffile", None),
}


def __getattr__(name: str) -> Any:
    """Serve mmcv's ``TurboJPEG``/``TJPF_*``/``tifffile`` attributes: the object or None."""
    if name not in _OPTIONAL_ATTRIBUTES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, attribute = _OPTIONAL_ATTRIBUTES[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return module if attribute is None else getattr(module, attribute)


def _optional_module(backend: str) -> Any:
    module, package = _OPTIONAL[backend]
    return import_optional(
        module, f"the {backend!r} image backend", f"install it with: pip install {package}"
    )


def _turbojpeg_decoder() -> Any:
    global jpeg
    if jpeg is None:
        jpeg = _optional_module("turbojpeg").TurboJPEG()
    return jpeg


def use_backend(backend: str) -> None:
    """Select the decoder that ``imread``/``imfrombytes`` use when given ``backend=None``.

    Only decoding follows it; the transforms (``imresize``, ``adjust_*``, ...) use OpenCV when
    given ``backend=None``, as in mmcv.

    Args:
        backend: ``'cv2'``, ``'pillow'``, ``'turbojpeg'`` (JPEG only) or ``'tifffile'``.

    Raises:
        AssertionError: Unknown backend.
        ImportError: The backend's package is not installed (the selection is unchanged).
    """
    global imread_backend
    assert backend in supported_backends, (
        f"unknown image backend {backend!r}; use one of {supported_backends}"
    )
    if backend == "pillow" and Image is None:  # Pillow is a dependency; a stripped install
        raise ImportError("the 'pillow' image backend needs Pillow: pip install Pillow")
    if backend == "turbojpeg":
        _turbojpeg_decoder()
    elif backend == "tifffile":
        _optional_module("tifffile")
    imread_backend = backend


def _check_channel_order(channel_order: str) -> str:
    channel_order = channel_order.lower()
    if channel_order not in ("rgb", "bgr"):
        raise ValueError(f'channel_order must be "rgb" or "bgr", but got {channel_order!r}')
    return channel_order


def _pillow2array(img: Image.Image, flag: str = "color", channel_order: str = "bgr") -> np.ndarray:
    """Convert a Pillow image to an array, following ``imread``'s ``flag`` and channel order."""
    channel_order = _check_channel_order(channel_order)
    if flag == "unchanged":
        array = np.array(img)
        if array.ndim >= 3 and array.shape[2] >= 3:
            # Colour channels in OpenCV's order (alpha stays last), like cv2's IMREAD_UNCHANGED.
            array[:, :, :3] = array[:, :, (2, 1, 0)]
        return array
    if flag in ("color", "grayscale"):
        img = ImageOps.exif_transpose(img)
    if img.mode == "LA":
        rgba = img.convert("RGBA")
        img = Image.new("RGB", rgba.size, _LA_CANVAS)
        img.paste(rgba, mask=rgba.split()[3])
    elif img.mode != "RGB":
        img = img.convert("RGB")
    if flag in ("color", "color_ignore_orientation"):
        array = np.array(img)
        return array if channel_order == "rgb" else array[:, :, ::-1]
    if flag in ("grayscale", "grayscale_ignore_orientation"):
        return np.array(img.convert("L"))
    raise ValueError(f"flag must be one of {_PILLOW_FLAGS}, but got {flag!r}")


def _decode_cv2(content: bytes, flag: Union[str, int], channel_order: str) -> np.ndarray | None:
    code = imread_flags[flag] if is_str(flag) else flag
    channel_order = _check_channel_order(channel_order)
    if len(content) == 0:  # OpenCV's own assertion names nothing (content may be an array)
        raise UnreadableImageError("imfrombytes: the content is empty (0 bytes), not an image")
    img = cv2.imdecode(np.frombuffer(content, np.uint8), code)
    # mmcv converted only for flag 'color' and returned BGR for 'color_ignore_orientation' even
    # when asked for RGB; every 3-channel colour read honours channel_order here.
    is_color = code != IMREAD_UNCHANGED and code & IMREAD_COLOR
    if img is not None and is_color and channel_order == "rgb":
        cv2.cvtColor(img, cv2.COLOR_BGR2RGB, img)
    return img


def _decode_turbojpeg(content: bytes, flag: str, channel_order: str) -> np.ndarray:
    turbojpeg = _optional_module("turbojpeg")
    channel_order = _check_channel_order(channel_order)
    if flag == "color":
        pixel_format = turbojpeg.TJPF_BGR if channel_order == "bgr" else turbojpeg.TJPF_RGB
    elif flag == "grayscale":
        pixel_format = turbojpeg.TJPF_GRAY
    else:
        raise ValueError(f'the turbojpeg backend takes flag "color" or "grayscale", not {flag!r}')
    img = _turbojpeg_decoder().decode(content, pixel_format)
    return img[:, :, 0] if img.shape[-1] == 1 else img


def _decode_pillow(content: bytes, flag: str, channel_order: str) -> np.ndarray:
    with io.BytesIO(content) as buffer:
        return _pillow2array(Image.open(buffer), flag, channel_order)


def _decode_tifffile(content: bytes, flag: str, channel_order: str) -> np.ndarray:
    # tifffile returns the stored array as is: flag and channel_order do not apply.
    tifffile = _optional_module("tifffile")
    with io.BytesIO(content) as buffer:
        return tifffile.imread(buffer)


_DECODERS = {
    "cv2": _decode_cv2,
    "turbojpeg": _decode_turbojpeg,
    "pillow": _decode_pillow,
    "tifffile": _decode_tifffile,
}


def imfrombytes(
    content: bytes, flag: str = "color", channel_order: str = "bgr", backend: str | None = None
) -> np.ndarray:
    """Decode an image from bytes.

    Args:
        content: The encoded image.
        flag: ``'color'``, ``'grayscale'``, ``'unchanged'``, ``'color_ignore_orientation'`` or
            ``'grayscale_ignore_orientation'`` (OpenCV also takes an ``IMREAD_*`` int). The
            cv2 and pillow backends apply the EXIF orientation unless the flag says otherwise;
            turbojpeg and tifffile never do.
        channel_order: ``'bgr'`` or ``'rgb'``, for colour reads.
        backend: ``'cv2'``, ``'pillow'``, ``'turbojpeg'``, ``'tifffile'``, or None for the one
            chosen with :func:`use_backend` (initially ``'cv2'``).

    Returns:
        The image. With OpenCV, None when the bytes cannot be decoded (as ``cv2.imdecode``;
        mmpose checks for it).

    Raises:
        ValueError: Unknown backend or channel order (or a flag the backend does not take).
        UnreadableImageError: OpenCV and empty ``content`` (a ``ValueError`` and the
            ``cv2.error`` mmcv raised).
        ImportError: The backend's package is not installed.
        OSError: Pillow cannot identify or finish decoding ``content`` (PIL's errors).
    """
    backend = imread_backend if backend is None else backend
    if backend not in supported_backends:
        raise ValueError(
            f"image backend {backend!r} is not supported; use one of {supported_backends}"
        )
    return _DECODERS[backend](content, flag, channel_order)


class ImageReadError(Exception):
    """Marks an error of :func:`imread` that names the file it could not read as an image.

    What the decoder raised keeps its type (``cv2.error``, PIL's ``UnidentifiedImageError``,
    ``OSError``) and gains the file's name; a file that decodes to nothing is an
    :class:`UnreadableImageError`.
    """


class UnreadableImageError(ImageReadError, ValueError, cv2.error):
    """A file is empty or does not decode to an image (truncated, corrupt, not an image).

    A ``ValueError``, and a ``cv2.error`` as OpenCV raised for an empty file under mmcv.
    """


def imread(
    img_or_path: Union[np.ndarray, str, Path],
    flag: str = "color",
    channel_order: str = "bgr",
    backend: str | None = None,
    file_client_args: dict | None = None,
) -> np.ndarray:
    """Read an image from a file or URI; an array is returned as it is.

    Args:
        img_or_path: An image array, or a path / URI (str or ``pathlib.Path``).
        flag: As :func:`imfrombytes`.
        channel_order: As :func:`imfrombytes`.
        backend: As :func:`imfrombytes`.
        file_client_args: Arguments of :class:`mmpar.fileio.FileClient`; None to pick the
            client from the path's prefix.

    Returns:
        The image (never None: mmcv's OpenCV read returned None for a file it could not
        decode; :func:`imfrombytes` still does).

    Raises:
        TypeError: ``img_or_path`` is neither an array, a str nor a Path.
        FileNotFoundError: The file does not exist (disk backend).
        UnreadableImageError: The file is empty, or does not decode to an image (truncated,
            corrupt, not an image); a ``ValueError`` and a ``cv2.error``, naming the file.
        ValueError: Unknown backend, flag or channel order (as :func:`imfrombytes`).
        ImageReadError: The backend's decoder failed on the file: its error type (e.g.
            PIL's ``UnidentifiedImageError``, an ``OSError``), with the file named.
    """
    if isinstance(img_or_path, Path):
        img_or_path = str(img_or_path)
    if isinstance(img_or_path, np.ndarray):
        return img_or_path
    if not is_str(img_or_path):
        raise TypeError(
            f"img_or_path must be a numpy array, a str or a pathlib.Path, not {type(img_or_path)}"
        )
    client = FileClient.infer_client(file_client_args, img_or_path)
    content = client.get(img_or_path)
    hint = "re-create or re-download it, or leave it out of the data"
    if len(content) == 0:  # (bytes, or an array from a mocked client)
        raise UnreadableImageError(f"{img_or_path} is empty (0 bytes), not an image: {hint}")
    try:
        img = imfrombytes(content, flag, channel_order, backend)
    except (ValueError, ImportError):
        raise  # a wrong backend, flag or channel order (or a missing package), not the file
    except Exception as err:  # the decoder's own error (cv2.error, PIL, tifffile, OSError)
        message = f"{img_or_path} ({len(content)} bytes) cannot be read as an image: {err}"
        raise same_type_error(err, message, ImageReadError) from err
    if img is None:
        raise UnreadableImageError(
            f"{img_or_path} ({len(content)} bytes) does not decode to an image (truncated, "
            f"corrupt or not an image file): {hint}"
        )
    return img


def imwrite(
    img: np.ndarray,
    file_path: str,
    params: list | None = None,
    auto_mkdir: bool | None = None,
    file_client_args: dict | None = None,
) -> bool:
    """Encode an image in the format of ``file_path``'s extension and write it.

    Args:
        img: The image.
        file_path: Destination path or URI; its extension picks the format (``.jpg``, ...).
        params: OpenCV's ``imencode`` parameters, e.g. ``[cv2.IMWRITE_JPEG_QUALITY, 90]``.
        auto_mkdir: Deprecated, as in mmcv: parent folders are always created.
        file_client_args: Arguments of :class:`mmpar.fileio.FileClient`; None to pick the
            client from the path's prefix.

    Returns:
        Whether OpenCV encoded the image.

    Raises:
        AssertionError: ``file_path`` is neither a str nor a Path.
    """
    assert is_filepath(file_path), f"file_path must be a str or a Path, not {type(file_path)}"
    file_path = str(file_path)
    if auto_mkdir is not None:
        warnings.warn(
            "imwrite's auto_mkdir is deprecated: parent folders are always created",
            DeprecationWarning,
            stacklevel=2,
        )
    client = FileClient.infer_client(file_client_args, file_path)
    ok, buffer = cv2.imencode(osp.splitext(file_path)[-1], img, params)
    client.put(buffer.tobytes(), file_path)
    return ok
