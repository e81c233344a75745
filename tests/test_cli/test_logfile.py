"""DeferredLogFile: records are held until the log file may be written, and only then written."""

import logging

from mmpar.cli import DeferredLogFile


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
