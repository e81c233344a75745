import io
import logging
import uuid

import pytest

from mmpar.utils import get_logger, print_log


@pytest.fixture
def name():
    """A fresh logger name; its handlers are closed afterwards."""
    logger_name = f"mmpar_test_{uuid.uuid4().hex[:8]}"
    yield logger_name
    logger = logging.getLogger(logger_name)
    for handler in list(logger.handlers):
        handler.close()
        logger.removeHandler(handler)


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_rank0_logs_to_console_and_file(name, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("RANK", raising=False)
    log_file = tmp_path / "sub" / "run.log"
    logger = get_logger(name, log_file=str(log_file), log_level=logging.DEBUG)
    logger.debug("debug line")
    logger.info("hello")
    err = capsys.readouterr().err
    assert "hello" in err and "debug line" in err
    assert f"{name} - INFO - hello" in err
    assert "\x1b[" not in err  # captured stream is not a TTY: no colour codes
    text = log_file.read_text()
    assert "INFO - hello" in text and "DEBUG - debug line" in text
    assert logger.level == logging.DEBUG


def test_same_name_returns_same_logger_without_duplicate_handlers(name, tmp_path, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    first = get_logger(name)
    n_handlers = len(first.handlers)
    assert get_logger(name) is first and len(first.handlers) == n_handlers
    # A log file given later (once the work dir is known) is added once.
    log_file = tmp_path / "later.log"
    get_logger(name, log_file=str(log_file))
    get_logger(name, log_file=str(log_file))
    assert len(first.handlers) == n_handlers + 1
    first.info("to file")
    assert "to file" in log_file.read_text()
    child = get_logger(f"{name}.child")
    assert child.handlers == []  # children use the parent's handlers


def test_file_mode_append(name, tmp_path, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    log_file = tmp_path / "run.log"
    log_file.write_text("previous\n")
    get_logger(name, log_file=str(log_file), file_mode="a").info("new")
    text = log_file.read_text()
    assert text.startswith("previous\n") and "new" in text


def test_other_ranks_log_errors_only_and_write_no_file(name, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RANK", "1")
    log_file = tmp_path / "run.log"
    logger = get_logger(name, log_file=str(log_file))
    logger.info("quiet")
    logger.error("loud")
    err = capsys.readouterr().err
    assert "quiet" not in err and "loud" in err
    assert not log_file.exists()
    assert logger.level == logging.ERROR


def test_initialized_torch_distributed_rank_wins_over_env(name, tmp_path, monkeypatch, capsys):
    import torch.distributed as dist

    monkeypatch.setenv("RANK", "3")
    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1
    )
    try:
        logger = get_logger(name, log_file=str(tmp_path / "r0.log"))
        logger.info("from rank zero")
    finally:
        dist.destroy_process_group()
    assert "from rank zero" in capsys.readouterr().err
    assert (tmp_path / "r0.log").exists()


def test_level_names_coloured_only_on_tty(name, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = FakeTTY()
    monkeypatch.setattr("sys.stderr", tty)
    logger = get_logger(name)
    logger.warning("careful")
    out = tty.getvalue()
    assert "\x1b[" in out and "WARNING" in out and "careful" in out
    # the record itself is unchanged for other handlers
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger.addHandler(handler)
    logger.warning("again")
    assert records[0].levelname == "WARNING"


def test_no_color_env_disables_colour(name, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    tty = FakeTTY()
    monkeypatch.setattr("sys.stderr", tty)
    get_logger(name).warning("plain")
    assert "\x1b[" not in tty.getvalue() and "WARNING - plain" in tty.getvalue()


def test_print_log_targets(name, monkeypatch, capsys):
    monkeypatch.delenv("RANK", raising=False)
    print_log("to stdout")
    assert capsys.readouterr().out == "to stdout\n"
    print_log("nothing", logger="silent")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    logger = get_logger(name)
    print_log("via logger", logger=logger, level=logging.WARNING)
    assert "WARNING - via logger" in capsys.readouterr().err
    print_log("via name", logger=name)
    assert "INFO - via name" in capsys.readouterr().err
    with pytest.raises(TypeError, match="logger must be a logging.Logger"):
        print_log("x", logger=3)
