"""mmcv 1.x ``Timer``, ``TimerError`` and ``check_time``."""

import time

import pytest

from mmpar.utils import Timer, TimerError, check_time


def busy(seconds):
    """Burn CPU for ``seconds`` (no sleep), so the clocks move measurably."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_since_start_and_since_last_check():
    timer = Timer()
    assert timer.is_running
    busy(0.02)
    first = timer.since_last_check()
    assert first >= 0.02
    busy(0.01)
    second = timer.since_last_check()
    assert 0.01 <= second < first + 0.01 + 0.5
    total = timer.since_start()
    assert total >= first + second
    assert timer.since_last_check() < total  # since_start counted as a check


def test_not_started_raises_timer_error():
    timer = Timer(start=False)
    assert not timer.is_running
    with pytest.raises(TimerError, match="not running") as info:
        timer.since_start()
    assert info.value.message.startswith("timer is not running")
    with pytest.raises(TimerError):
        timer.since_last_check()
    timer.start()
    assert timer.since_start() >= 0


def test_start_on_running_timer_keeps_start():
    timer = Timer()
    busy(0.02)
    timer.start()
    assert timer.since_start() >= 0.02
    assert timer.since_last_check() < 0.02


def test_context_manager_prints_and_stops(capsys):
    with Timer(print_tmpl="took {:.1f}s") as timer:
        assert timer.is_running
    assert capsys.readouterr().out == "took 0.0s\n"
    assert not timer.is_running
    with Timer():
        pass
    out = capsys.readouterr().out.strip()
    assert float(out) >= 0 and len(out.split(".")[1]) == 3


def test_check_time():
    assert check_time("mmpar-test-timer") == 0
    busy(0.01)
    assert check_time("mmpar-test-timer") >= 0.01
    assert check_time("mmpar-test-timer") < 0.01
    assert check_time("mmpar-test-other") == 0
