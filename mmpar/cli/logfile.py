"""A tool's log file: a name no other run takes, written only once the set-up succeeded."""

from __future__ import annotations

import logging
import os.path as osp
import secrets
import time

from mmpar.utils import get_logger

from .errors import UsageError

# What a run's log files end with: ``<name>.log`` (text) and ``<name>.log.json`` (JSON lines).
LOG_SUFFIXES = (".log", ".log.json")


def _exists_error(path: str) -> UsageError:
    return UsageError(f"log file {path} exists already; it is not overwritten")


def new_log_name(work_dir: str) -> str:
    """A name for this run's log files in ``work_dir`` that no earlier run used.

    The start time to the second, as mmcv names its logs, plus 6 random hex digits, so that two
    runs started in the same second get different files: ``20241124_113559_3fa9c1``.

    Raises:
        UsageError: A log file of that name exists already (a log is never overwritten).
    """
    name = f"{time.strftime('%Y%m%d_%H%M%S', time.localtime())}_{secrets.token_hex(3)}"
    for suffix in LOG_SUFFIXES:
        path = osp.join(work_dir, name + suffix)
        if osp.lexists(path):
            raise _exists_error(path)
    return name


class DeferredLogFile(logging.Handler):
    """Hold a logger's records in memory until its log file may be written.

    A tool attaches it before the set-up, so a set-up that fails writes no log file; once the
    set-up succeeded, :meth:`open` creates the log file and writes the held records first.
    Used as a context manager, it stops holding records when the block ends::

        with DeferredLogFile("mmpar") as log, user_errors():
            cfg = setup(args)
            log.open(osp.join(cfg.work_dir, "run.log"))

    Args:
        logger_name: Name of the logger whose records are held.
    """

    def __init__(self, logger_name: str = "mmpar") -> None:
        super().__init__()
        self.logger = logging.getLogger(logger_name)
        self.records: list[logging.LogRecord] = []
        self.logger.addHandler(self)

    def __enter__(self) -> DeferredLogFile:
        return self

    def __exit__(self, *exc_info) -> None:
        self.detach()

    def emit(self, record: logging.LogRecord) -> None:
        """Hold ``record``."""
        self.records.append(record)

    def open(
        self, log_file: str, log_level: int | str = logging.INFO, file_mode: str = "w"
    ) -> None:
        """Create ``log_file`` (rank 0 only), write the held records into it, stop holding.

        Args:
            log_file: The file.
            log_level: Level of the logger.
            file_mode: ``'w'`` truncates an existing file; ``'x'`` refuses it.

        Raises:
            UsageError: ``file_mode='x'`` and ``log_file`` exists.
        """
        self.detach()
        try:
            get_logger(self.logger.name, log_file, log_level, file_mode)
        except FileExistsError:
            raise _exists_error(log_file) from None
        path = osp.abspath(log_file)
        for handler in self.logger.handlers:
            if isinstance(handler, logging.FileHandler) and handler.baseFilename == path:
                for record in self.records:
                    handler.handle(record)
        self.records.clear()

    def detach(self) -> None:
        """Stop holding records (the held ones are kept until :meth:`open` or deletion)."""
        self.logger.removeHandler(self)
