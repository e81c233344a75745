"""DeferredLogFile: records held until the log file may be written; log names never collide."""

import logging
import re
import secrets
import time

import pytest

from mmpar.cli import DeferredLogFile, UsageError, new_log_name


def test_records_are_held_then_written_first(tmp_path):
    # Not below "mmpar": once another test set "mmpar" up, get_logger leaves its children alone.
    logger = logging.getLogger("test_cli.held")
    logger.setLevel(logging.INFO)
    with DeferredLogFile(logger.name) as log:
        logger.info("before the set-up succeeded")
        assert [r.getMessage() for r in log.records] == ["before the set-up succeeded"]
        assert not list(tmp_path.iterdir())
        log.open(str(tmp_path / "run.log"))
    logger.info("after")
    text = (tmp_path / "run.log").read_text()
    assert text.index("before the set-up succeeded") < text.index("after")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()


def test_a_failed_set_up_writes_no_file_and_stops_holding(tmp_path):
    logger = logging.getLogger("test_cli.failed")
    logger.setLevel(logging.INFO)
    try:
        with DeferredLogFile(logger.name) as log:
            logger.info("set-up starts")
            raise ValueError("bad config")
    except ValueError:
        pass
    assert log not in logger.handlers
    assert not list(tmp_path.iterdir())


def test_two_runs_in_the_same_second_get_different_log_names(tmp_path, monkeypatch):
    same_second = time.struct_time((2024, 1, 2, 3, 4, 5, 1, 2, 0))
    monkeypatch.setattr(time, "localtime", lambda *args: same_second)
    names = {new_log_name(str(tmp_path)) for _ in range(20)}
    assert len(names) == 20
    assert all(re.fullmatch(r"20240102_030405_[0-9a-f]{6}", n) for n in names), names


def test_an_existing_log_is_never_overwritten(tmp_path, monkeypatch):
    monkeypatch.setattr(secrets, "token_hex", lambda n: "abcdef")
    name = new_log_name(str(tmp_path))
    (tmp_path / f"{name}.log.json").write_text("{}\n")
    with pytest.raises(UsageError, match=rf"{name}\.log\.json exists already"):
        new_log_name(str(tmp_path))

    (tmp_path / "run.log").write_text("an earlier run\n")
    logger = logging.getLogger("test_cli.exclusive")
    with DeferredLogFile(logger.name) as log:
        with pytest.raises(UsageError, match=r"run\.log exists already; it is not overwritten"):
            log.open(str(tmp_path / "run.log"), file_mode="x")
    assert (tmp_path / "run.log").read_text() == "an earlier run\n"
