"""Drawing boxes and labels on images, and showing them in an OpenCV window.

Drawing works everywhere. Showing needs an OpenCV built with a GUI: with the headless wheel
mmpar installs, ``imshow`` raises :class:`DisplayUnavailableError`; use ``show=False`` and
``out_file`` there.
"""

from __future__ import annotations

from typing import Union

import cv2
import numpy as np

from ..image import imread, imwrite
from .color import Color, color_val

ColorType = Union[Color, str, tuple, int, np.ndarray]


class DisplayUnavailableError(cv2.error, RuntimeError):
    """OpenCV cannot open a window (a headless build, or no display)."""


def imshow(img: Union[str, np.ndarray], win_name: str = "", wait_time: int = 0) -> None:
    """Show an image in a window.

    Args:
        img: The image, or a path to read it from.
        win_name: The window's name.
        wait_time: Milliseconds to wait for a key; 0 waits until a key is pressed or the
            window is closed.

    Raises:
        DisplayUnavailableError: OpenCV has no GUI support here (also a ``cv2.error``).
    """
    try:
        cv2.imshow(win_name, imread(img))
    except cv2.error as err:
        raise DisplayUnavailableError(
            "cannot show the image: this OpenCV has no window support (e.g. the "
            "opencv-python-headless wheel, or no display). Write the image to a file instead "
            f"(show=False, out_file=...), or install opencv-python. OpenCV said: {err}"
        ) from err
    if wait_time != 0:
        cv2.waitKey(wait_time)
        return
    # Poll, so that closing the window with the mouse also returns (waitKey(0) would hang).
    while True:
        key = cv2.waitKey(1)
        closed = cv2.getWindowProperty(win_name, cv2.WND_PROP_VISIBLE) < 1
        if closed or key != -1:
            return


def _show_and_save(
    img: np.ndarray, show: bool, win_name: str, wait_time: int, out_file: str | None
) -> None:
    if show:
        imshow(img, win_name, wait_time)
    if out_file is not None:
        imwrite(img, out_file)


def imshow_bboxes(
    img: Union[str, np.ndarray],
    bboxes: Union[list, np.ndarray],
    colors: ColorType = "green",
    top_k: int = -1,
    thickness: int = 1,
    show: bool = True,
    win_name: str = "",
    wait_time: int = 0,
    out_file: str | None = None,
) -> np.ndarray:
    """Draw boxes on an image.

    Args:
        img: The image (drawn on when it is a contiguous array), or a path.
        bboxes: An array ``(k, 4)`` of ``(x1, y1, x2, y2)``, or a list of them (one per colour).
        colors: One colour for all groups, or a list with one per group.
        top_k: Draw only the first ``top_k`` boxes of each group (all if not positive).
        thickness: Line thickness.
        show: Show the image in a window.
        win_name: The window's name.
        wait_time: As :func:`imshow`.
        out_file: Write the image there.

    Returns:
        The image with the boxes.
    """
    img = np.ascontiguousarray(imread(img))
    if isinstance(bboxes, np.ndarray):
        bboxes = [bboxes]
    if not isinstance(colors, list):
        colors = [colors] * len(bboxes)
    colors = [color_val(c) for c in colors]
    assert len(bboxes) == len(colors), "give one colour per group of boxes"

    for group, color in zip(bboxes, colors):
        group = group.astype(np.int32)
        count = group.shape[0] if top_k <= 0 else min(top_k, group.shape[0])
        for x1, y1, x2, y2 in group[:count, :4].tolist():
            cv2.rectangle(img, (x1, y1), (x2, y2), color, thickness=thickness)

    _show_and_save(img, show, win_name, wait_time, out_file)
    return img


def imshow_det_bboxes(
    img: Union[str, np.ndarray],
    bboxes: np.ndarray,
    labels: np.ndarray,
    class_names: list[str] | None = None,
    score_thr: float = 0,
    bbox_color: ColorType = "green",
    text_color: ColorType = "green",
    thickness: int = 1,
    font_scale: float = 0.5,
    show: bool = True,
    win_name: str = "",
    wait_time: int = 0,
    out_file: str | None = None,
) -> np.ndarray:
    """Draw detections: boxes and their class names (with scores when given).

    Args:
        img: The image (drawn on when it is a contiguous array), or a path.
        bboxes: ``(n, 4)`` boxes or ``(n, 5)`` boxes with scores.
        labels: ``(n,)`` class indices.
        class_names: Names indexed by label; None writes ``cls <label>``.
        score_thr: Draw only boxes scoring above it (needs scores when positive).
        bbox_color: Colour of the boxes.
        text_color: Colour of the text.
        thickness: Line thickness.
        font_scale: Text size.
        show: Show the image in a window.
        win_name: The window's name.
        wait_time: As :func:`imshow`.
        out_file: Write the image there.

    Returns:
        The image with the detections.
    """
    assert bboxes.ndim == 2, f"bboxes must be 2-D, not {bboxes.ndim}-D"
    assert labels.ndim == 1, f"labels must be 1-D, not {labels.ndim}-D"
    assert bboxes.shape[0] == labels.shape[0], "one label per box"
    assert bboxes.shape[1] in (4, 5), f"boxes have 4 values (+ a score), not {bboxes.shape[1]}"
    img = np.ascontiguousarray(imread(img))

    if score_thr > 0:
        assert bboxes.shape[1] == 5, "score_thr needs scores in bboxes[:, 4]"
        keep = bboxes[:, -1] > score_thr
        bboxes, labels = bboxes[keep, :], labels[keep]

    bbox_color = color_val(bbox_color)
    text_color = color_val(text_color)
    for bbox, label in zip(bboxes, labels):
        x1, y1, x2, y2 = bbox.astype(np.int32)[:4].tolist()
        cv2.rectangle(img, (x1, y1), (x2, y2), bbox_color, thickness=thickness)
        text = class_names[label] if class_names is not None else f"cls {label}"
        if len(bbox) > 4:
            text += f"|{bbox[-1]:.02f}"
        cv2.putText(img, text, (x1, y1 - 2), cv2.FONT_HERSHEY_COMPLEX, font_scale, text_color)

    _show_and_save(img, show, win_name, wait_time, out_file)
    return img
