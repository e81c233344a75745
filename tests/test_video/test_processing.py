"""The ffmpeg helpers: one clear error without ffmpeg, and the command they run with it."""

import os
import shutil

import pytest

from mmpar.utils import decorators
from mmpar.video import concat_video, convert_video, cut_video, processing, resize_video


@pytest.fixture
def no_ffmpeg(monkeypatch):
    monkeypatch.setattr(decorators.shutil, "which", lambda cmd, *a, **k: None)


@pytest.fixture
def commands(monkeypatch):
    """Pretend ffmpeg is installed and record the commands instead of running them."""
    real_which = shutil.which
    monkeypatch.setattr(
        decorators.shutil,
        "which",
        lambda cmd, *a, **k: "/usr/bin/ffmpeg" if cmd == "ffmpeg" else real_which(cmd, *a, **k),
    )
    calls = []

    def call(cmd, **kwargs):
        assert "shell" not in kwargs  # never through a shell
        calls.append(cmd)
        if "concat" in cmd:
            calls.append(open(cmd[cmd.index("-i") + 1]).read())
        return 0

    monkeypatch.setattr(processing.subprocess, "call", call)
    return calls


@pytest.mark.parametrize(
    ("function", "args"),
    [
        (convert_video, ("a.mp4", "b.mp4")),
        (resize_video, ("a.mp4", "b.mp4", (32, 24))),
        (cut_video, ("a.mp4", "b.mp4", 1, 2)),
        (concat_video, (["a.mp4", "b.mp4"], "c.mp4")),
    ],
)
def test_missing_ffmpeg_is_one_clear_runtime_error(no_ffmpeg, function, args):
    with pytest.raises(RuntimeError, match="ffmpeg") as info:
        function(*args)
    assert function.__name__ in str(info.value)


def test_convert_video_options(commands, capsys):
    convert_video(
        "in file.mp4",
        "out.mp4",
        print_cmd=True,
        pre_options="-ss 3",
        log_level="error",
        an=True,
        sn=False,
        vcodec="libx264",
        vf="scale=1:2",
    )
    assert commands == [
        [
            "ffmpeg",
            "-y",
            "-ss",
            "3",
            "-i",
            "in file.mp4",
            "-loglevel",
            "error",
            "-an",
            "-vcodec",
            "libx264",
            "-vf",
            "scale=1:2",
            "out.mp4",
        ]
    ]
    assert "'in file.mp4'" in capsys.readouterr().out  # printed as a shell would need it
    with pytest.raises(AssertionError):
        convert_video("a", "b", log_level="loud")


def test_resize_video(commands):
    resize_video("a.mp4", "b.mp4", size=(320, -1))
    resize_video("a.mp4", "b.mp4", size=(320, 240), keep_ar=True, log_level="quiet")
    resize_video("a.mp4", "b.mp4", ratio=(2, 0.5))
    resize_video("a.mp4", "b.mp4", ratio=1.5)
    filters = [cmd[cmd.index("-vf") + 1] for cmd in commands]
    assert filters == [
        "scale=320:-1",
        "scale=w=320:h=240:force_original_aspect_ratio=decrease",
        "scale=trunc(iw*2):trunc(ih*0.5)",
        "scale=trunc(iw*1.5):trunc(ih*1.5)",
    ]
    assert commands[1][commands[1].index("-loglevel") + 1] == "quiet"
    with pytest.raises(ValueError):
        resize_video("a.mp4", "b.mp4")
    with pytest.raises(ValueError):
        resize_video("a.mp4", "b.mp4", size=(1, 1), ratio=2)


def test_cut_video(commands):
    cut_video("a.mp4", "b.mp4", start=2, end=5)
    cut_video("a.mp4", "b.mp4", end=4, vcodec="h264")
    first, second = commands
    assert first[first.index("-ss") + 1] == "2" and first[first.index("-t") + 1] == "3"
    assert first[first.index("-vcodec") + 1] == "copy" and "-acodec" in first
    assert "-ss" not in second and second[second.index("-t") + 1] == "4"
    assert "-vcodec" not in second  # a given codec is left to ffmpeg, as in mmcv


def test_concat_video_writes_and_removes_the_list(commands, tmp_path):
    concat_video([str(tmp_path / "a.mp4"), str(tmp_path / "it's.mp4")], "out.mp4")
    cmd, listing = commands
    assert cmd[2:6] == ["-f", "concat", "-safe", "0"]
    assert listing.splitlines() == [
        f"file '{tmp_path / 'a.mp4'}'",
        f"file '{tmp_path}/it'\\''s.mp4'",
    ]
    list_file = cmd[cmd.index("-i") + 1]
    assert not os.path.exists(list_file)
