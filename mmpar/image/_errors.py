"""The errors of ``mmpar.image`` that name what is wrong, where OpenCV would name nothing."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import cv2
import numpy as np

__all__ = ["ImageOpError", "NotAnImageError", "name_opencv_errors", "name_opencv_errors_of"]


class ImageOpError(ValueError, cv2.error):
    """OpenCV refused an image (empty, a dtype or channel count it cannot take).

    A ``ValueError`` naming the function, the image's shape and dtype; and a ``cv2.error``,
    which OpenCV raised under mmcv, so ``except cv2.error:`` keeps working.
    """


class NotAnImageError(ImageOpError, TypeError):
    """An array that is not an ``(h, w)`` or ``(h, w, c)`` image.

    Also a ``TypeError``: what mmcv raised for it where it checked (``adjust_hue``).
    """


# Functions that work value by value on any array (as in mmcv, whose tests pass them 1-D
# arrays): only a 0-D array is refused there.
ELEMENTWISE = frozenset(
    {"iminvert", "solarize", "posterize", "lut_transform", "imnormalize", "imnormalize_",
     "imdenormalize"}
)  # fmt: skip


def name_opencv_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Make a ``cv2.error`` raised inside ``func`` an :class:`ImageOpError` that names the input.

    A function whose first parameter is ``img`` also refuses an array that is not an image
    (``(h, w)`` or ``(h, w, c)``; any array but a 0-D one for :data:`ELEMENTWISE` functions)
    with a :class:`NotAnImageError`, before indexing it.
    """
    params = list(inspect.signature(func).parameters)
    takes_image = bool(params) and params[0] == "img"
    image_dims = range(1, 33) if func.__name__ in ELEMENTWISE else (2, 3)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if takes_image:
            img = args[0] if args else kwargs.get("img")
            if isinstance(img, np.ndarray) and img.ndim not in image_dims:
                raise NotAnImageError(
                    f"{func.__name__}: img must be an (h, w) or (h, w, c) array, but it has "
                    f"shape {img.shape}"
                )
        try:
            return func(*args, **kwargs)
        except cv2.error as err:
            if isinstance(err, ValueError):  # already says what is wrong
                raise
            img = args[0] if args else next(iter(kwargs.values()), None)
            what = (
                f"an image of shape {img.shape} and dtype {img.dtype}"
                if isinstance(img, np.ndarray)
                else f"a {type(img).__name__}"
            )
            reason = str(err).strip().splitlines()[-1][:200] if str(err).strip() else ""
            raise ImageOpError(
                f"{func.__name__}: OpenCV cannot process {what} ({reason}); pass a non-empty "
                f"(h, w) or (h, w, c) array of a dtype OpenCV supports (uint8, uint16, int16, "
                f"float32, float64)"
            ) from err

    wrapper.__doc__ = _with_wrapper_errors(func.__doc__ or "", takes_image, func.__name__)
    return wrapper


def _with_wrapper_errors(doc: str, takes_image: bool, name: str) -> str:
    """``doc`` with the errors the wrapper raises added to its ``Raises:`` section.

    The wrapper raises them, so it documents them: written once here, not in every function.
    The entries go at the end of the function's ``Raises:`` section, or a section is started.
    """
    refused = "a 0-D array" if name in ELEMENTWISE else "not an ``(h, w)`` or ``(h, w, c)`` array"
    entries = []
    if takes_image:
        entries.append(
            f"NotAnImageError: ``img`` is {refused} (a ``ValueError`` and ``TypeError``)."
        )
    entries.append(
        "ImageOpError: OpenCV (where this function uses it) refused the input (empty, or a "
        "dtype or channel count it cannot take); a ``ValueError`` and ``cv2.error`` naming "
        "the function, shape and dtype."
    )
    lines = inspect.cleandoc(doc).rstrip().splitlines()
    added = [f"    {entry}" for entry in entries]
    if "Raises:" not in lines:
        return "\n".join([*lines, "", "Raises:", *added, ""])
    end = lines.index("Raises:") + 1
    while end < len(lines) and (lines[end].startswith(" ") or not lines[end]):
        end += 1  # past the section's indented entries (and blank lines between them)
    while not lines[end - 1]:
        end -= 1
    return "\n".join([*lines[:end], *added, *lines[end:], ""])


def name_opencv_errors_of(namespace: dict) -> None:
    """Wrap every public function a module defines (its ``globals()``) with the above.

    Called at the end of the modules that hand images to OpenCV, so no entry point is missed.
    """
    module = namespace["__name__"]
    for name, value in list(namespace.items()):
        if name.startswith("_") or not callable(value) or isinstance(value, type):
            continue
        if getattr(value, "__module__", None) == module:
            namespace[name] = name_opencv_errors(value)
