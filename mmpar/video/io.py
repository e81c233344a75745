"""Video frames through OpenCV: ``VideoReader`` (list-like, with a cache), ``frames2video``."""

from __future__ import annotations

import os.path as osp
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

import cv2
import numpy as np

from ..utils import check_file_exist, mkdir_or_exist, scandir, track_progress


class Cache:
    """A first-in-first-out store of at most ``capacity`` items (re-putting a key is a no-op).

    Args:
        capacity: Maximum number of items.

    Raises:
        ValueError: ``capacity`` is not positive.
    """

    def __init__(self, capacity: int) -> None:
        self._capacity = int(capacity)
        if capacity <= 0:
            raise ValueError(f"capacity must be a positive integer, but got {capacity}")
        self._cache: OrderedDict = OrderedDict()

    @property
    def capacity(self) -> int:
        """Maximum number of items."""
        return self._capacity

    @property
    def size(self) -> int:
        """Number of items stored."""
        return len(self._cache)

    def put(self, key: Hashable, val: Any) -> None:
        """Store ``val`` under ``key`` unless the key is present; drop the oldest item if full.

        Args:
            key: The key.
            val: The value.
        """
        if key in self._cache:
            return
        if len(self._cache) >= self._capacity:
            self._cache.popitem(last=False)
        self._cache[key] = val

    def get(self, key: Hashable, default: Any = None) -> Any:
        """Return the value stored under ``key``, or ``default``.

        Args:
            key: The key.
            default: Returned when the key is absent.

        Returns:
            The value or ``default``.
        """
        return self._cache.get(key, default)


class VideoReader:
    """Frames of a video, read with ``cv2.VideoCapture``, used like a list.

    ``len(video)``, ``video[i]`` (negative indices and slices too) and iteration work. Seeking
    with OpenCV can land before the wanted frame, so after each seek the reader checks the
    position and reads forward to it. Decoded frames are kept in a small cache.

    Args:
        filename: Path or ``http(s)://`` URL of the video.
        cache_capacity: How many decoded frames to keep.

    Raises:
        FileNotFoundError: A local file does not exist.
    """

    def __init__(self, filename: str, cache_capacity: int = 10) -> None:
        if not filename.startswith(("https://", "http://")):
            check_file_exist(filename, "Video file not found: " + filename)
        assert cache_capacity > 0, f"cache_capacity must be positive, but got {cache_capacity}"
        self._vcap = cv2.VideoCapture(filename)
        self._cache = Cache(cache_capacity)
        self._position = 0
        self._width = int(self._vcap.get(cv2.CAP_PROP_FRAME_WIDTH))
        self._height = int(self._vcap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        self._fps = self._vcap.get(cv2.CAP_PROP_FPS)
        self._frame_cnt = int(self._vcap.get(cv2.CAP_PROP_FRAME_COUNT))
        self._fourcc = self._vcap.get(cv2.CAP_PROP_FOURCC)

    @property
    def vcap(self) -> cv2.VideoCapture:
        """The underlying ``cv2.VideoCapture``."""
        return self._vcap

    @property
    def opened(self) -> bool:
        """Whether OpenCV opened the video."""
        return self._vcap.isOpened()

    @property
    def width(self) -> int:
        """Frame width."""
        return self._width

    @property
    def height(self) -> int:
        """Frame height."""
        return self._height

    @property
    def resolution(self) -> tuple[int, int]:
        """``(width, height)``."""
        return (self._width, self._height)

    @property
    def fps(self) -> float:
        """Frames per second."""
        return self._fps

    @property
    def frame_cnt(self) -> int:
        """Number of frames (as the container reports it)."""
        return self._frame_cnt

    @property
    def fourcc(self) -> float:
        """The codec's four-character code, as OpenCV reports it (a float)."""
        return self._fourcc

    @property
    def position(self) -> int:
        """Index of the next frame :meth:`read` returns."""
        return self._position

    def _get_real_position(self) -> int:
        return int(round(self._vcap.get(cv2.CAP_PROP_POS_FRAMES)))

    def _set_real_position(self, frame_id: int) -> None:
        self._vcap.set(cv2.CAP_PROP_POS_FRAMES, frame_id)
        # The seek may stop short (at a key frame): read forward to the frame.
        for _ in range(frame_id - self._get_real_position()):
            self._vcap.read()
        self._position = frame_id

    def read(self) -> np.ndarray | None:
        """Return the next frame (from the cache if it was decoded before).

        Returns:
            The frame, or None at the end of the video or on a decoding failure.
        """
        img = self._cache.get(self._position)
        if img is None:
            if self._position != self._get_real_position():
                self._set_real_position(self._position)
            ok, img = self._vcap.read()
            if not ok:
                return img
            self._cache.put(self._position, img)
        self._position += 1
        return img

    def get_frame(self, frame_id: int) -> np.ndarray | None:
        """Return frame ``frame_id`` (0-based) and move the position after it.

        Args:
            frame_id: Index of the frame.

        Returns:
            The frame, or None if it cannot be decoded.

        Raises:
            IndexError: ``frame_id`` is outside ``[0, frame_cnt)``.
        """
        if not 0 <= frame_id < self._frame_cnt:
            raise IndexError(f"frame_id must be between 0 and {self._frame_cnt - 1}")
        if frame_id == self._position:
            return self.read()
        img = self._cache.get(frame_id)
        if img is not None:
            self._position = frame_id + 1
            return img
        self._set_real_position(frame_id)
        ok, img = self._vcap.read()
        if ok:
            self._cache.put(self._position, img)
            self._position += 1
        return img

    def current_frame(self) -> np.ndarray | None:
        """Return the frame read last, or None if none was read yet (or it left the cache).

        Returns:
            The frame or None.
        """
        if self._position == 0:
            return None
        return self._cache.get(self._position - 1)

    def cvt2frames(
        self,
        frame_dir: str,
        file_start: int = 0,
        filename_tmpl: str = "{:06d}.jpg",
        start: int = 0,
        max_num: int = 0,
        show_progress: bool = True,
    ) -> None:
        """Write frames as image files.

        Args:
            frame_dir: Output folder (created if missing).
            file_start: Number of the first file.
            filename_tmpl: File name template; formatted with the file number.
            start: Index of the first frame to write.
            max_num: Write at most this many frames (0: all from ``start``).
            show_progress: Show a progress bar.

        Raises:
            ValueError: ``start`` is not before the last frame.
        """
        mkdir_or_exist(frame_dir)
        remaining = self.frame_cnt - start
        task_num = remaining if max_num == 0 else min(remaining, max_num)
        if task_num <= 0:
            raise ValueError("start must be less than the number of frames")
        if start > 0:
            self._set_real_position(start)

        def write_frame(file_idx: int) -> None:
            img = self.read()
            if img is not None:
                cv2.imwrite(osp.join(frame_dir, filename_tmpl.format(file_idx)), img)

        file_numbers = range(file_start, file_start + task_num)
        if show_progress:
            track_progress(write_frame, file_numbers)
        else:
            for file_idx in file_numbers:
                write_frame(file_idx)

    def __len__(self) -> int:
        return self.frame_cnt

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self.get_frame(i) for i in range(*index.indices(self.frame_cnt))]
        if index < 0:
            index += self.frame_cnt
            if index < 0:
                raise IndexError("index out of range")
        return self.get_frame(index)

    def __iter__(self) -> VideoReader:
        self._set_real_position(0)
        return self

    def __next__(self) -> np.ndarray:
        img = self.read()
        if img is None:
            raise StopIteration
        return img

    next = __next__

    def __enter__(self) -> VideoReader:
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        self._vcap.release()


def frames2video(
    frame_dir: str,
    video_file: str,
    fps: float = 30,
    fourcc: str = "XVID",
    filename_tmpl: str = "{:06d}.jpg",
    start: int = 0,
    end: int = 0,
    show_progress: bool = True,
) -> None:
    """Join numbered image files into a video with ``cv2.VideoWriter``.

    Args:
        frame_dir: Folder of the frames.
        video_file: Output video path.
        fps: Frames per second.
        fourcc: Codec code, e.g. ``'XVID'`` or ``'MJPG'`` (must suit the container).
        filename_tmpl: File name template, formatted with the frame number.
        start: Number of the first frame.
        end: Number after the last frame; 0 counts the files with the template's extension.
        show_progress: Show a progress bar.

    Raises:
        FileNotFoundError: The first frame does not exist.
    """
    if end == 0:
        extension = filename_tmpl.split(".")[-1]
        end = len(list(scandir(frame_dir, extension)))
    first_file = osp.join(frame_dir, filename_tmpl.format(start))
    check_file_exist(first_file, "The start frame not found: " + first_file)
    height, width = cv2.imread(first_file).shape[:2]
    writer = cv2.VideoWriter(video_file, cv2.VideoWriter_fourcc(*fourcc), fps, (width, height))

    def write_frame(file_idx: int) -> None:
        writer.write(cv2.imread(osp.join(frame_dir, filename_tmpl.format(file_idx))))

    try:
        if show_progress:
            track_progress(write_frame, range(start, end))
        else:
            for file_idx in range(start, end):
                write_frame(file_idx)
    finally:
        writer.release()
