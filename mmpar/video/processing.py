"""Video editing through the ``ffmpeg`` executable (convert, resize, cut, concatenate).

Each function fails with a RuntimeError naming ffmpeg when it is not on PATH. ffmpeg is run
without a shell: the command is split into arguments as a shell would split it (quotes
removed), but nothing in a file name or option is ever interpreted by a shell.
"""

from __future__ import annotations

import os
import os.path as osp
import shlex
import subprocess
import tempfile
from typing import Any

from ..utils import requires_executable

_LOG_LEVELS = ("quiet", "panic", "fatal", "error", "warning", "info", "verbose", "debug", "trace")


def _option_args(options: dict[str, Any]) -> list[str]:
    """``key=val`` -> ``-key val``; ``key=True`` -> ``-key``; ``key=False`` -> nothing."""
    args: list[str] = []
    for key, value in options.items():
        if isinstance(value, bool):
            if value:
                args.append(f"-{key}")
        elif key == "log_level":
            assert value in _LOG_LEVELS, f"log_level must be one of {_LOG_LEVELS}, not {value!r}"
            args += ["-loglevel", value]
        else:
            args += [f"-{key}", *shlex.split(str(value))]
    return args


@requires_executable("ffmpeg")
def convert_video(
    in_file: str, out_file: str, print_cmd: bool = False, pre_options: str = "", **kwargs: Any
) -> None:
    """Run ``ffmpeg -y <pre_options> -i <in_file> <options> <out_file>``.

    Options map to arguments: ``key=val`` gives ``-key val``, ``key=True`` gives ``-key``,
    ``key=False`` nothing, and ``log_level=...`` gives ``-loglevel ...``.

    Args:
        in_file: Input video.
        out_file: Output video (overwritten).
        print_cmd: Print the command before running it.
        pre_options: Arguments placed before ``-i``, as one string.
        **kwargs: The options.

    Raises:
        RuntimeError: ffmpeg is not installed.
    """
    cmd = ["ffmpeg", "-y", *shlex.split(pre_options), "-i", in_file]
    cmd += [*_option_args(kwargs), out_file]
    if print_cmd:
        print(shlex.join(cmd))
    # As in mmcv, ffmpeg's exit status is not checked: it reports its own errors.
    subprocess.call(cmd)


@requires_executable("ffmpeg")
def resize_video(
    in_file: str,
    out_file: str,
    size: tuple | None = None,
    ratio: tuple | float | None = None,
    keep_ar: bool = False,
    log_level: str = "info",
    print_cmd: bool = False,
) -> None:
    """Resize a video to ``size`` or by ``ratio``.

    Args:
        in_file: Input video.
        out_file: Output video.
        size: ``(w, h)``; -1 for one side keeps the aspect ratio, e.g. ``(320, -1)``.
        ratio: Factor for both sides, or ``(w_factor, h_factor)``.
        keep_ar: With ``size``, shrink to fit inside it keeping the aspect ratio.
        log_level: ffmpeg's log level.
        print_cmd: Print the command.

    Raises:
        ValueError: Both or neither of ``size`` and ``ratio`` are given.
        RuntimeError: ffmpeg is not installed.
    """
    if size is None and ratio is None:
        raise ValueError("give the target size or the ratio")
    if size is not None and ratio is not None:
        raise ValueError("give the target size or the ratio, not both")
    if size:
        if keep_ar:
            scale = f"scale=w={size[0]}:h={size[1]}:force_original_aspect_ratio=decrease"
        else:
            scale = f"scale={size[0]}:{size[1]}"
    else:
        w_ratio, h_ratio = ratio if isinstance(ratio, tuple) else (ratio, ratio)
        scale = f"scale=trunc(iw*{w_ratio}):trunc(ih*{h_ratio})"
    convert_video(in_file, out_file, print_cmd, log_level=log_level, vf=shlex.quote(scale))


def _codec_options(vcodec: str | None, acodec: str | None, log_level: str) -> dict[str, Any]:
    # Like mmcv: a codec left as None is copied; a given codec is not passed to ffmpeg (which
    # then picks the output format's default encoder).
    options: dict[str, Any] = {"log_level": log_level}
    if vcodec is None:
        options["vcodec"] = "copy"
    if acodec is None:
        options["acodec"] = "copy"
    return options


@requires_executable("ffmpeg")
def cut_video(
    in_file: str,
    out_file: str,
    start: float | None = None,
    end: float | None = None,
    vcodec: str | None = None,
    acodec: str | None = None,
    log_level: str = "info",
    print_cmd: bool = False,
) -> None:
    """Cut the clip from ``start`` to ``end`` (seconds) out of a video.

    Args:
        in_file: Input video.
        out_file: Output video.
        start: Start time; None or 0 for the beginning.
        end: End time; None for the end.
        vcodec: None to copy the video stream.
        acodec: None to copy the audio stream.
        log_level: ffmpeg's log level.
        print_cmd: Print the command.

    Raises:
        RuntimeError: ffmpeg is not installed.
    """
    options = _codec_options(vcodec, acodec, log_level)
    if start:
        options["ss"] = start
    else:
        start = 0
    if end:
        options["t"] = end - start
    convert_video(in_file, out_file, print_cmd, **options)


@requires_executable("ffmpeg")
def concat_video(
    video_list: list,
    out_file: str,
    vcodec: str | None = None,
    acodec: str | None = None,
    log_level: str = "info",
    print_cmd: bool = False,
) -> None:
    """Concatenate videos (ffmpeg's concat demuxer).

    Args:
        video_list: Input videos, in order.
        out_file: Output video.
        vcodec: None to copy the video streams.
        acodec: None to copy the audio streams.
        log_level: ffmpeg's log level.
        print_cmd: Print the command.

    Raises:
        RuntimeError: ffmpeg is not installed.
    """
    handle, list_file = tempfile.mkstemp(suffix=".txt", text=True)
    try:
        with os.fdopen(handle, "w") as f:
            for filename in video_list:
                # ffmpeg's concat syntax: single quotes, a quote itself written as '\''.
                quoted = osp.abspath(filename).replace("'", "'\\''")
                f.write(f"file '{quoted}'\n")
        options = _codec_options(vcodec, acodec, log_level)
        convert_video(list_file, out_file, print_cmd, pre_options="-f concat -safe 0", **options)
    finally:
        os.remove(list_file)
