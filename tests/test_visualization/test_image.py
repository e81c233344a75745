"""imshow_bboxes / imshow_det_bboxes draw with OpenCV and write out_file; no window opens."""

import cv2
import numpy as np
import pytest
from numpy.testing import assert_array_equal

from mmpar.image import imread
from mmpar.visualization import image as vis_image
from mmpar.visualization import imshow, imshow_bboxes, imshow_det_bboxes


@pytest.fixture
def canvas():
    return np.full((40, 50, 3), 100, np.uint8)


def test_imshow_bboxes_draws_and_writes(canvas, tmp_path):
    boxes = np.array([[5, 6, 20, 30], [25, 10, 45, 35]], dtype=np.float32)
    out = tmp_path / "boxes.png"
    drawn = imshow_bboxes(canvas, boxes, colors="red", show=False, out_file=str(out))
    assert drawn is canvas  # a contiguous array is drawn on in place, as in mmcv
    assert_array_equal(drawn[6, 5:21], np.tile([0, 0, 255], (16, 1)))  # top edge of box 1
    assert_array_equal(drawn[30, 5], [0, 0, 255])  # bottom-left corner
    assert_array_equal(drawn[15, 15], [100, 100, 100])  # inside: untouched
    assert_array_equal(imread(str(out)), drawn)
    expected = np.full((40, 50, 3), 100, np.uint8)
    for x1, y1, x2, y2 in boxes.astype(np.int32).tolist():
        cv2.rectangle(expected, (x1, y1), (x2, y2), (0, 0, 255), thickness=1)
    assert_array_equal(drawn, expected)


def test_imshow_bboxes_groups_colours_top_k_and_paths(canvas, tmp_path):
    path = tmp_path / "in.png"
    cv2.imwrite(str(path), canvas)
    groups = [np.array([[1, 1, 10, 10], [30, 20, 40, 30]]), np.array([[15, 15, 25, 25]])]
    drawn = imshow_bboxes(str(path), groups, colors=["blue", (1, 2, 3)], top_k=1, show=False)
    assert_array_equal(drawn[1, 1], [255, 0, 0])
    assert_array_equal(drawn[15, 20], [1, 2, 3])
    assert_array_equal(drawn[20, 30], [100, 100, 100])  # the second box of group 1 is skipped
    thick = imshow_bboxes(canvas.copy(), groups[1], thickness=3, show=False)
    assert_array_equal(thick[16, 20], [0, 255, 0])  # default green, 3 pixels wide
    with pytest.raises(AssertionError):
        imshow_bboxes(canvas, groups, colors=["red"], show=False)


def test_imshow_det_bboxes(canvas, tmp_path):
    boxes = np.array([[5, 15, 20, 30, 0.9], [25, 20, 45, 35, 0.2]], dtype=np.float32)
    labels = np.array([0, 1])
    out = tmp_path / "det.jpg"
    drawn = imshow_det_bboxes(
        canvas.copy(),
        boxes,
        labels,
        class_names=["cat", "dog"],
        score_thr=0.5,
        bbox_color="red",
        text_color="white",
        show=False,
        out_file=str(out),
    )
    expected = canvas.copy()
    cv2.rectangle(expected, (5, 15), (20, 30), (0, 0, 255), thickness=1)
    cv2.putText(expected, "cat|0.90", (5, 13), cv2.FONT_HERSHEY_COMPLEX, 0.5, (255, 255, 255))
    assert_array_equal(drawn, expected)  # the 0.2 box is below the threshold
    assert out.exists() and imread(str(out)).shape == (40, 50, 3)

    unnamed = imshow_det_bboxes(canvas.copy(), boxes[:, :4], labels, show=False)
    expected = canvas.copy()
    for (x1, y1, x2, y2), label in zip(boxes[:, :4].astype(int).tolist(), labels):
        cv2.rectangle(expected, (x1, y1), (x2, y2), (0, 255, 0), thickness=1)
        cv2.putText(
            expected, f"cls {label}", (x1, y1 - 2), cv2.FONT_HERSHEY_COMPLEX, 0.5, (0, 255, 0)
        )
    assert_array_equal(unnamed, expected)


def test_imshow_det_bboxes_checks(canvas):
    boxes = np.zeros((2, 4), np.float32)
    with pytest.raises(AssertionError):
        imshow_det_bboxes(canvas, boxes, np.zeros(3), show=False)
    with pytest.raises(AssertionError):
        imshow_det_bboxes(canvas, boxes, np.zeros(2), score_thr=0.3, show=False)  # no scores
    with pytest.raises(AssertionError):
        imshow_det_bboxes(canvas, np.zeros((2, 6)), np.zeros(2), show=False)


def test_imshow_without_a_gui_says_so(canvas, monkeypatch):
    def headless(*args):
        raise cv2.error("The function is not implemented")

    monkeypatch.setattr(vis_image.cv2, "imshow", headless)
    with pytest.raises(vis_image.DisplayUnavailableError, match="out_file") as info:
        imshow(canvas)
    assert isinstance(info.value, cv2.error)  # mmcv code catching cv2.error still does


def test_imshow_waits_for_a_key_or_the_window(canvas, monkeypatch):
    calls = []
    monkeypatch.setattr(vis_image.cv2, "imshow", lambda name, img: calls.append(("show", name)))
    keys = iter([-1, -1, 32, -1])
    monkeypatch.setattr(
        vis_image.cv2, "waitKey", lambda ms: calls.append(("wait", ms)) or next(keys)
    )
    monkeypatch.setattr(vis_image.cv2, "getWindowProperty", lambda name, prop: 1.0)
    imshow(canvas, "win")
    assert calls == [("show", "win")] + [("wait", 1)] * 3  # polls until the key press
    calls.clear()
    imshow(canvas, "win", wait_time=50)
    assert calls == [("show", "win"), ("wait", 50)]
    shown = []
    monkeypatch.setattr(vis_image, "imshow", lambda img, name, wait: shown.append(name))
    imshow_bboxes(canvas, np.zeros((1, 4)), win_name="boxes")
    assert shown == ["boxes"]
