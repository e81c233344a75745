"""A log file that is only written once a tool's set-up succeeded."""

from __future__ import annotations

import logging
import os.path as osp

from mmpar.utils import get_logger


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

    def open(self, log_file: str, log_level: int | str = logging.INFO) -> None:
        """Create ``log_file`` (rank 0 only), write the held records into it, stop holding."""
        self.detach()
        get_logger(self.logger.name, log_file=log_file, log_level=log_level)
        path = osp.abspath(log_file)
        for handler in self.logger.handlers:
            if isinstance(handler, logging.FileHandler) and handler.baseFilename == path:
                for record in self.records:
                    handler.handle(record)
        self.records.clear()

    def detach(self) -> None:
        """Stop holding records (the held ones are kept until :meth:`open` or deletion)."""
        self.logger.removeHandler(self)
