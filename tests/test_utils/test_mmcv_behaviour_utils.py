"""mmcv 1.7.2's utilities as mmcv code observes them: logger levels and handlers, print_log,
the prerequisite messages, collect_env's keys, the progress bars' exact text, version tuples
and the model-zoo cache directory. Expected values are derived from mmcv's documented rules."""

import io
import logging
import os
import re
import shutil
import uuid

import pytest
import torch
import torch.distributed as dist

import mmpar
from mmpar.runner.checkpoint import _get_mmcv_home
from mmpar.utils import (
    ProgressBar,
    collect_env,
    get_logger,
    print_log,
    requires_executable,
    requires_package,
    track_iter_progress,
    track_parallel_progress,
    track_progress,
)
from mmpar.utils import progressbar as progressbar_module
from mmpar.version import mmcv_version, parse_version_info, version_info

# --- get_logger / print_log ---------------------------------------------------------------


@pytest.fixture
def name(monkeypatch):
    """A fresh logger name; its handlers are closed afterwards."""
    monkeypatch.delenv("RANK", raising=False)
    logger_name = f"mmcv_style_{uuid.uuid4().hex[:8]}"
    yield logger_name
    logger = logging.getLogger(logger_name)
    for handler in list(logger.handlers):
        handler.close()
        logger.removeHandler(handler)


def test_get_logger_rank0_handlers_and_levels(name, tmp_path):
    logger = get_logger(f"{name}.a")
    assert [type(h) for h in logger.handlers] == [logging.StreamHandler]
    assert logger.handlers[0].level == logging.INFO and logger.level == logging.INFO

    log_file = tmp_path / "run.log"
    logger = get_logger(name, log_file=str(log_file), log_level=logging.DEBUG)
    assert [type(h) for h in logger.handlers] == [logging.StreamHandler, logging.FileHandler]
    assert all(h.level == logging.DEBUG for h in logger.handlers)
    logger.debug("to the file")
    assert "DEBUG - to the file" in log_file.read_text()
    assert get_logger(name) is logger and len(logger.handlers) == 2  # initialized once


def test_get_logger_on_a_non_zero_rank(name, tmp_path, monkeypatch):
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_rank", lambda *args, **kwargs: 1)
    log_file = tmp_path / "rank1.log"
    logger = get_logger(name, log_file=str(log_file))
    # mmcv: a console handler only (no file on other ranks), the logger at ERROR
    assert [type(h) for h in logger.handlers] == [logging.StreamHandler]
    assert logger.handlers[0].level == logging.INFO
    assert logger.level == logging.ERROR
    logger.warning("not written anywhere")
    assert not log_file.exists()


def test_records_propagate_and_root_console_handlers_keep_errors_only(name, caplog):
    root_console = logging.StreamHandler(io.StringIO())
    logging.root.addHandler(root_console)
    try:
        print_log("welcome", logger=name)
        assert caplog.record_tuples[-1] == (name, logging.INFO, "welcome")
        assert root_console.level == logging.ERROR  # mmcv's rule: no second console copy
        assert root_console.stream.getvalue() == ""
    finally:
        logging.root.removeHandler(root_console)


def test_print_log_targets(name, capsys, caplog):
    print_log("to stdout")  # None: print
    assert capsys.readouterr().out == "to stdout\n"
    print_log("nothing", logger="silent")
    assert capsys.readouterr() == ("", "") and "nothing" not in caplog.text
    logger = get_logger(name)
    print_log("as a warning", logger=logger, level=logging.WARNING)
    assert caplog.record_tuples[-1] == (name, logging.WARNING, "as a warning")
    with pytest.raises(TypeError):
        print_log("bad", logger=1)


# --- requires_package / requires_executable -----------------------------------------------


def test_prerequisite_messages_are_printed_as_mmcv_prints_them(capsys):
    @requires_package("no_such_pkg_x")
    def func_a():
        pass

    @requires_package(["os", "no_such_pkg_y", "no_such_pkg_z"])
    def func_b():
        pass

    @requires_package("os")
    def func_c():
        return 1

    @requires_executable(["no_such_exe_x", shutil.which("sh") and "sh"])
    def func_d():
        pass

    with pytest.raises(RuntimeError):
        func_a()
    assert capsys.readouterr().out == (
        'Prerequisites "no_such_pkg_x" are required in method "func_a" but not found, '
        "please install them first.\n"
    )
    with pytest.raises(RuntimeError, match="no_such_pkg_y, no_such_pkg_z"):
        func_b()
    assert capsys.readouterr().out == (
        'Prerequisites "no_such_pkg_y, no_such_pkg_z" are required in method "func_b" but not '
        "found, please install them first.\n"
    )
    assert func_c() == 1
    with pytest.raises(RuntimeError):
        func_d()
    assert capsys.readouterr().out.startswith(
        'Prerequisites "no_such_exe_x" are required in method "func_d"'
    )


# --- collect_env --------------------------------------------------------------------------

MMCV_KEYS = [
    "sys.platform",
    "Python",
    "CUDA available",
    "GCC",
    "PyTorch",
    "PyTorch compiling details",
    "TorchVision",
    "OpenCV",
    "MMCV",
    "MMCV Compiler",
    "MMCV CUDA Compiler",
]


def test_collect_env_has_mmcv_keys_in_mmcv_order():
    import cv2

    env = collect_env()
    keys = list(env)
    assert [k for k in keys if k in MMCV_KEYS] == MMCV_KEYS  # also mmcv's order
    assert keys[: len(MMCV_KEYS)] == MMCV_KEYS or torch.cuda.is_available()
    assert env["MMCV"] == mmcv_version  # what mmcv.__version__ reports in the zero-edit mode
    assert env["mmpar"] == mmpar.__version__
    assert env["MMCV Compiler"] == env["MMCV CUDA Compiler"] == "n/a"
    assert env["OpenCV"] == cv2.__version__
    assert env["PyTorch compiling details"] == torch.__config__.show()
    assert isinstance(env["GCC"], str) and env["GCC"]
    if torch.cuda.is_available():
        assert "CUDA_HOME" in env and any(k.startswith("GPU ") for k in keys)
    else:
        assert "CUDA_HOME" not in env and not any(k.startswith("GPU ") for k in keys)


# --- progress bars ------------------------------------------------------------------------


class FakeTimer:
    """Stands in for the bar's Timer: since_start() returns the given elapsed seconds in turn."""

    elapsed: list = []

    def since_start(self):
        return FakeTimer.elapsed.pop(0)


@pytest.fixture
def fake_time(monkeypatch):
    monkeypatch.setattr(progressbar_module, "Timer", FakeTimer)
    monkeypatch.setenv("COLUMNS", "80")
    FakeTimer.elapsed = []
    yield FakeTimer.elapsed
    assert FakeTimer.elapsed == []  # every update read the clock once


def _reset(out):
    out.seek(0)
    out.truncate()


def test_progress_bar_text_with_a_task_count(fake_time):
    out = io.StringIO()
    bar = ProgressBar(10, bar_width=20, file=out)
    assert out.getvalue() == f"[{' ' * 20}] 0/10, elapsed: 0s, ETA:"
    _reset(out)
    fake_time.extend([1.0, 2.0])
    bar.update()
    assert out.getvalue() == f"\r[{'>' * 2}{' ' * 18}] 1/10, 1.0 task/s, elapsed: 1s, ETA:     9s"
    assert len(out.getvalue()) == 66  # mmcv's length for 80 columns
    _reset(out)
    bar.update(4)  # 5 of 10 after 2 s
    assert out.getvalue() == f"\r[{'>' * 10}{' ' * 10}] 5/10, 2.5 task/s, elapsed: 2s, ETA:     2s"
    assert not out.getvalue().endswith("\n")  # mmcv leaves the line open


def test_progress_bar_text_without_a_task_count(fake_time):
    out = io.StringIO()
    bar = ProgressBar(bar_width=20, file=out)
    assert out.getvalue() == "completed: 0, elapsed: 0s"
    _reset(out)
    fake_time.extend([1.0, 0.0])
    bar.update()
    assert out.getvalue() == "completed: 1, elapsed: 1s, 1.0 tasks/s"
    _reset(out)
    bar.update()
    assert out.getvalue() == "completed: 2, elapsed: 0s, inf tasks/s"


def test_progress_bar_narrows_to_the_terminal(fake_time, monkeypatch):
    out = io.StringIO()
    bar = ProgressBar(10, bar_width=100, file=out)
    fake_time.extend([1.0, 1.0, 1.0, 1.0])
    tail = "] {}/10, {}.0 task/s, elapsed: 1s, ETA:     {}s"
    _reset(out)
    bar.update()  # 80 columns: the text leaves 80 - 46 = 34 for the bar
    assert out.getvalue() == f"\r[{'>' * 3}{' ' * 31}" + tail.format(1, 1, 9)
    monkeypatch.setenv("COLUMNS", "150")
    _reset(out)
    bar.update()  # 150 columns: 60% of the terminal (90) is the narrowest limit
    assert out.getvalue() == f"\r[{'>' * 18}{' ' * 72}" + tail.format(2, 2, 4)
    monkeypatch.setenv("COLUMNS", "30")
    _reset(out)
    bar.update()  # no room left: the bar keeps 2 characters
    assert out.getvalue() == "\r[  " + tail.format(3, 3, 2)
    # without a terminal and without COLUMNS, shutil's fallback of 80 columns applies
    monkeypatch.delenv("COLUMNS")

    def no_terminal(*args):
        raise OSError("not a terminal")

    monkeypatch.setattr(os, "get_terminal_size", no_terminal)
    assert bar.terminal_width == 80
    _reset(out)
    bar.update()
    assert out.getvalue() == f"\r[{'>' * 13}{' ' * 21}" + tail.format(
        4, 4, 1
    )  # 1.5 in floats is 1.4999...


# One line: the empty bar, then one '\r' redraw per task, then the newline the track_* add.
def _tracked(n, width=10):
    redraw = rf"\r\[[> ]{{{width}}}\] \d+/{n}, (\d+\.\d|inf) task/s, elapsed: \d+s, ETA: +\d+s"
    return re.compile(rf"\[ {{{width}}}\] 0/{n}, elapsed: 0s, ETA:({redraw}){{{n}}}\n")


def _square(x):
    return x * x


def test_track_functions_write_mmcv_lines():
    out = io.StringIO()
    assert track_progress(_square, [1, 2, 3], bar_width=10, file=out) == [1, 4, 9]
    assert _tracked(3).fullmatch(out.getvalue())

    out = io.StringIO()
    assert list(track_iter_progress(([5, 6], 2), bar_width=10, file=out)) == [5, 6]
    assert _tracked(2).fullmatch(out.getvalue())

    out = io.StringIO()
    results = track_parallel_progress(_square, [1, 2, 3, 4], nproc=2, bar_width=10, file=out)
    assert results == [1, 4, 9, 16]
    assert _tracked(4).fullmatch(out.getvalue())


# --- versions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "length", "expected"),
    [
        ("1.3.0", 4, (1, 3, 0, 0, 0, 0)),
        ("2.0.0rc1", 4, (2, 0, 0, 0, "rc", 1)),
        ("1.7.2", 3, (1, 7, 2, 0, 0)),
        ("1.7", 4, (1, 7, 0, 0, 0, 0)),
        ("1.2.3.4.5", 4, (1, 2, 3, 4, 0, 0)),
        ("1.0.0b2", 4, (1, 0, 0, 0, "b", 2)),
    ],
)
def test_parse_version_info_matches_mmcv(text, length, expected):
    assert parse_version_info(text, length=length) == expected


def test_version_info_is_a_tuple_of_three_ints():
    assert version_info == tuple(int(x) for x in mmpar.__version__.split(".")[:3])
    assert mmpar.version_info == version_info and mmpar.parse_version_info is parse_version_info


# --- the model-zoo cache directory ----------------------------------------------------------


def test_get_mmcv_home_rules(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MMCV_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    expected = tmp_path / "home" / ".cache" / "mmcv"
    assert _get_mmcv_home() == str(expected) and expected.is_dir()

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _get_mmcv_home() == str(tmp_path / "xdg" / "mmcv")
    assert (tmp_path / "xdg" / "mmcv").is_dir()

    monkeypatch.setenv("MMCV_HOME", "~/zoo")  # MMCV_HOME wins; '~' is expanded
    assert _get_mmcv_home() == str(tmp_path / "home" / "zoo")
    assert (tmp_path / "home" / "zoo").is_dir()
