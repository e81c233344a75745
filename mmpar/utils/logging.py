"""Rank-aware loggers (mmcv 1.x ``get_logger`` / ``print_log``).

Rank 0 logs to the console and to the log file; other ranks log errors only and write no
file, so N processes do not print every line N times. torch is not imported here: the rank
comes from ``torch.distributed`` only if the program already imported and initialized it.
"""

from __future__ import annotations

import logging
import os
import os.path as osp
import sys
from typing import Any, Union

_FORMAT = "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
_LEVEL_COLORS = {
    "DEBUG": "blue",
    "INFO": "green",
    "WARNING": "yellow",
    "ERROR": "red",
    "CRITICAL": "red",
}
#: Names of the loggers :func:`get_logger` has set up (mmcv 1.x's ``logger_initialized``: projects
#: read it to find the root logger already made, or mark one of theirs as set up).
logger_initialized: dict[str, bool] = {}


def _get_rank() -> int:
    """Rank from an initialized ``torch.distributed``, else env ``RANK``, else 0."""
    dist = sys.modules.get("torch.distributed")  # imported by the program, never by us
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    try:
        return int(os.environ.get("RANK", 0))
    except ValueError:
        return 0


class _ColorFormatter(logging.Formatter):
    """Formatter that colours the level name (used only for TTY streams)."""

    def format(self, record: logging.LogRecord) -> str:
        from termcolor import colored

        record = logging.makeLogRecord(record.__dict__)
        color = _LEVEL_COLORS.get(record.levelname)
        if color is not None:
            attrs = ["bold"] if record.levelno >= logging.ERROR else None
            record.levelname = colored(record.levelname, color, attrs=attrs, force_color=True)
        return super().format(record)


def _console_handler(level: int) -> logging.Handler:
    handler = logging.StreamHandler()  # sys.stderr, like mmcv
    handler.setLevel(level)
    stream = handler.stream
    use_color = hasattr(stream, "isatty") and stream.isatty() and not os.environ.get("NO_COLOR")
    handler.setFormatter(_ColorFormatter(_FORMAT) if use_color else logging.Formatter(_FORMAT))
    return handler


def _add_file_handler(logger: logging.Logger, log_file: str, file_mode: str, level: int) -> None:
    path = osp.abspath(log_file)
    for handler in logger.handlers:
        if isinstance(handler, logging.FileHandler) and handler.baseFilename == path:
            return
    os.makedirs(osp.dirname(path), exist_ok=True)
    handler = logging.FileHandler(path, file_mode, encoding="utf-8")
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter(_FORMAT))
    logger.addHandler(handler)


def get_logger(
    name: str,
    log_file: str | None = None,
    log_level: int = logging.INFO,
    file_mode: str = "w",
) -> logging.Logger:
    """Return a logger that logs on rank 0 only (errors on every rank).

    The first call for ``name`` sets up a console handler (level names coloured when the
    console is a TTY; set ``NO_COLOR`` to disable) and, on rank 0, a file handler for
    ``log_file``, both at ``log_level``; the logger is at ``log_level`` on rank 0 and at
    ``ERROR`` on other ranks (mmcv's rules). Records also propagate to the root logger, whose
    plain ``StreamHandler`` handlers are set to ``ERROR`` so nothing prints twice.
    Later calls return the same logger without adding console handlers; a later call with a
    new ``log_file`` adds that file (e.g. once the work dir is known).
    Children of an initialized logger (``'name.sub'``) are returned as they are.

    Args:
        name: Logger name.
        log_file: File to write on rank 0 (parent directories are created).
        log_level: Level on rank 0; other ranks use ``logging.ERROR``.
        file_mode: ``'w'`` to truncate the file, ``'a'`` to append.

    Returns:
        The logger.
    """
    logger = logging.getLogger(name)
    rank = _get_rank()
    if name in logger_initialized:
        if log_file is not None and rank == 0:
            level = next((h.level for h in logger.handlers), logging.NOTSET)
            _add_file_handler(logger, log_file, file_mode, level)
        return logger
    if any(name.startswith(f"{parent}.") for parent in logger_initialized):
        return logger

    # As in mmcv, records still propagate (so pytest's caplog and root-level handlers see
    # them), but plain console handlers on the root logger (torch's elastic launcher and
    # basicConfig() install one) are limited to errors, so a record is not printed twice.
    for handler in logger.root.handlers:
        if type(handler) is logging.StreamHandler:
            handler.setLevel(logging.ERROR)
    logger.addHandler(_console_handler(log_level))
    if log_file is not None and rank == 0:
        _add_file_handler(logger, log_file, file_mode, log_level)
    logger.setLevel(log_level if rank == 0 else logging.ERROR)
    logger_initialized[name] = True
    return logger


def print_log(
    msg: Any,
    logger: Union[logging.Logger, str, None] = None,
    level: int = logging.INFO,
) -> None:
    """Print ``msg`` with a logger, ``print``, or not at all.

    Args:
        msg: The message.
        logger: None → ``print``; ``'silent'`` → nothing; a ``logging.Logger``; or the name
            of a logger (set up with :func:`get_logger`).
        level: Logging level used with a logger.

    Raises:
        TypeError: ``logger`` is none of the above.
    """
    if logger is None:
        print(msg)
    elif isinstance(logger, logging.Logger):
        logger.log(level, msg)
    elif logger == "silent":
        pass
    elif isinstance(logger, str):
        get_logger(logger).log(level, msg)
    else:
        raise TypeError(
            'logger must be a logging.Logger, a logger name, "silent" or None, '
            f"but got {type(logger).__name__}"
        )
