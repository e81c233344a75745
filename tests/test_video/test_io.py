"""VideoReader, Cache and frames2video on a small MJPG AVI written with OpenCV."""

import cv2
import numpy as np
import pytest

from mmpar import video
from mmpar.video import Cache, VideoReader

NUM_FRAMES = 7


def _frame(i):
    img = np.zeros((24, 32, 3), np.uint8)
    img[..., 1] = 30 * i  # the frame index, readable after lossy coding
    cv2.rectangle(img, (2 + 3 * i, 4), (8 + 3 * i, 12), (255, 255, 255), -1)
    return img


@pytest.fixture
def movie(tmp_path):
    path = tmp_path / "movie.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5, (32, 24))
    for i in range(NUM_FRAMES):
        writer.write(_frame(i))
    writer.release()
    return str(path)


def _green(frame):
    """The frame index, from the green level below the moving rectangle."""
    return frame[14:, :, 1].mean() / 30


def test_cache_is_first_in_first_out():
    cache = Cache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)  # present: ignored
    cache.put("c", 3)  # full: "a" goes
    assert cache.size == 2 and cache.capacity == 2
    assert cache.get("a") is None and cache.get("a", 0) == 0 and cache.get("c") == 3
    with pytest.raises(ValueError):
        Cache(0)


def test_properties_and_indexing(movie):
    with VideoReader(movie) as reader:
        assert reader.opened
        assert len(reader) == reader.frame_cnt == NUM_FRAMES
        assert reader.resolution == (32, 24) and reader.width == 32 and reader.height == 24
        assert reader.fps == pytest.approx(5)
        assert reader.fourcc == cv2.VideoWriter_fourcc(*"MJPG")
        assert reader.current_frame() is None
        third = reader[3]
        assert round(_green(third)) == 3
        assert reader.position == 4
        assert reader.current_frame() is third
        assert round(_green(reader[-1])) == NUM_FRAMES - 1
        assert [round(_green(f)) for f in reader[1:6:2]] == [1, 3, 5]
        assert reader.read() is not None  # continues after the last frame read
        with pytest.raises(IndexError):
            reader.get_frame(NUM_FRAMES)
        with pytest.raises(IndexError):
            reader[-NUM_FRAMES - 1]


def test_iteration_and_cache_hits(movie):
    reader = VideoReader(movie, cache_capacity=3)
    frames = list(reader)
    assert [round(_green(f)) for f in frames] == list(range(NUM_FRAMES))
    assert reader.read() is None  # at the end
    # The last three frames are cached: the same objects come back.
    assert reader.get_frame(5) is frames[5]
    assert reader.position == 6


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        VideoReader(str(tmp_path / "nope.avi"))


def test_cvt2frames_and_frames2video_round_trip(movie, tmp_path):
    frame_dir = tmp_path / "frames"
    reader = VideoReader(movie)
    reader.cvt2frames(str(frame_dir), file_start=1, filename_tmpl="{:03d}.png", show_progress=False)
    names = sorted(p.name for p in frame_dir.iterdir())
    assert names == [f"{i:03d}.png" for i in range(1, NUM_FRAMES + 1)]
    assert round(_green(cv2.imread(str(frame_dir / "004.png")))) == 3

    partial = tmp_path / "partial"
    reader.cvt2frames(str(partial), start=2, max_num=3, show_progress=False)
    assert sorted(p.name for p in partial.iterdir()) == ["000000.jpg", "000001.jpg", "000002.jpg"]
    assert round(_green(cv2.imread(str(partial / "000000.jpg")))) == 2
    with pytest.raises(ValueError):
        reader.cvt2frames(str(partial), start=NUM_FRAMES)

    out = tmp_path / "joined.avi"
    video.frames2video(
        str(frame_dir),
        str(out),
        fps=10,
        fourcc="MJPG",
        filename_tmpl="{:03d}.png",
        start=1,
        end=NUM_FRAMES + 1,
        show_progress=False,
    )
    joined = VideoReader(str(out))
    assert len(joined) == NUM_FRAMES and joined.fps == pytest.approx(10)
    assert [round(_green(f)) for f in joined] == list(range(NUM_FRAMES))


def test_frames2video_counts_the_frames_and_needs_the_first(tmp_path):
    for i in range(3):
        cv2.imwrite(str(tmp_path / f"{i:06d}.jpg"), _frame(i))
    out = tmp_path / "out.avi"
    video.frames2video(str(tmp_path), str(out), fourcc="MJPG", show_progress=False)
    assert len(VideoReader(str(out))) == 3
    with pytest.raises(FileNotFoundError, match="start frame"):
        video.frames2video(str(tmp_path), str(out), start=5, end=6, show_progress=False)
