"""Write a set of files all or nothing: the port tool's writer.

Every target's folder is checked first; then every new content goes to a temporary file beside
its target; only when all of them are written are they renamed over the targets. A read-only
folder, a full disk or any other error before the renames leaves every target as it was and no
temporary file behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["StagedWriteError", "Write", "write_all"]


@dataclass(frozen=True)
class Write:
    """One file to replace.

    Attributes:
        path: The existing file.
        rel: Its name in messages (relative to the tree).
        data: The new bytes.
        old: The bytes it holds now (to put back if a later rename fails).
    """

    path: Path
    rel: str
    data: bytes
    old: bytes


class StagedWriteError(OSError):
    """A file of the set could not be written; none was changed."""


def _check_writable(writes: Sequence[Write]) -> None:
    for write in writes:
        folder = write.path.parent
        if not os.access(folder, os.W_OK | os.X_OK):
            raise StagedWriteError(
                f"{write.rel}: cannot write in {folder} (permission denied); nothing was "
                "written: make the folder writable (or port a writable copy) and run again"
            )


def _stage(write: Write) -> str:
    """Write ``write.data`` to a temporary file beside the target, with its mode; the name."""
    mode = write.path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=write.path.parent, prefix=f".{write.path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(write.data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def write_all(writes: Sequence[Write]) -> None:
    """Replace every file of ``writes``, or none.

    Args:
        writes: The files and their new contents.

    Raises:
        StagedWriteError: A folder is not writable, or staging a file failed (e.g. the disk is
            full: the message names the file and the cause); no target was changed and no
            temporary file is left.
    """
    _check_writable(writes)
    staged: list[tuple[str, Write]] = []
    try:
        for write in writes:
            staged.append((_stage(write), write))
    except OSError as err:
        for tmp, _ in staged:
            os.unlink(tmp)
        raise StagedWriteError(
            f"{write.rel}: {err.strerror or err}; nothing was written: free the space (or fix "
            "the cause) and run again"
        ) from err
    done: list[Write] = []
    try:
        for tmp, write in staged:
            os.replace(tmp, write.path)
            done.append(write)
    except OSError as err:
        # A rename failing after every file was staged: put the replaced ones back.
        for replaced in done:
            replaced.path.write_bytes(replaced.old)
        for left, _ in staged[len(done) :]:
            if os.path.exists(left):
                os.unlink(left)
        raise StagedWriteError(f"{write.rel}: {err}; the tree was restored") from err
