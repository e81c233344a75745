"""One run per work dir: an exclusive ``flock`` on a lock file inside it.

``runner.run`` takes the lock on the runner's work dir (rank 0) for the run's length, see
:mod:`mmpar.runner.work_dir_guard.guard`; ``tools/train.py`` takes it earlier, once its set-up
found no errors and before it reads a checkpoint to resume or writes anything into the work
dir, and the runner then finds it held by this process (:func:`held_here`). A
second run on the same work dir stops with :class:`WorkDirLockedError` (exit code 2), which
names the holder, and changes nothing in the folder: the lock file is opened without
truncating, and only the process that got the lock writes into it.

The lock belongs to the open file, so the operating system drops it when the holding process
ends in any way, SIGKILL included: there is never a stale lock to clean up. The file's content
(pid, host, start time, command line of the last holder) only serves the error message;
whether a run holds the lock is decided by ``flock`` alone. Deleting the lock file while a run
holds it defeats the lock (a new run creates a new file and locks that one).

On a filesystem without ``flock`` support (some NFS set-ups report ``ENOLCK``), the run warns
once and goes on without the lock.
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import json
import os
import os.path as osp
import socket
import sys
import warnings
from typing import Sequence

from mmpar.utils.usage_error import UsageError

LOCK_FILE_NAME = ".mmpar.lock"

# errno values meaning "this filesystem cannot flock" (not "someone else holds it").
_UNSUPPORTED = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS}
_warned_unsupported = False
# Work dirs (absolute paths) whose lock a WorkDirLock of this process holds now.
_held_here: set[str] = set()


def held_here(work_dir: str) -> bool:
    """Whether a :class:`WorkDirLock` of this process holds ``work_dir`` now."""
    return osp.abspath(work_dir) in _held_here


class WorkDirLockedError(UsageError):
    """Another run holds the work dir's lock; the message names the work dir and the holder."""


def _locked_error(work_dir: str, path: str) -> WorkDirLockedError:
    return WorkDirLockedError(
        f'work_dir "{work_dir}" is in use by another run ({_describe(read_holder(path))}); '
        f"wait until it ends or choose another --work-dir (lock file {path})"
    )


def check_not_locked(work_dir: str) -> None:
    """Raise :class:`WorkDirLockedError` if a run holds ``work_dir`` now; change nothing.

    A check before a launch (``tools/dist_train.sh``); the run still takes the lock itself.
    A missing work dir or lock file, or a filesystem without ``flock``, passes.
    """
    work_dir = osp.abspath(work_dir)
    path = osp.join(work_dir, LOCK_FILE_NAME)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:  # a shared lock conflicts with the holder's exclusive one, and is dropped at once
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _locked_error(work_dir, path) from None
    except OSError:
        return
    finally:
        os.close(fd)


def read_holder(path: str) -> dict | None:
    """The identity written into the lock file ``path`` by its last holder, if readable.

    Returns:
        A dict with ``pid``, ``host``, ``start`` (ISO time) and ``argv``, or None when the
        file is missing, empty (the holder has not written it yet) or not ours.
    """
    try:
        with open(path, encoding="utf-8") as f:
            holder = json.loads(f.read())
    except (OSError, ValueError):
        return None
    return holder if isinstance(holder, dict) else None


def _describe(holder: dict | None) -> str:
    if holder is None:
        return "a run that has not written its identity yet"
    return (
        f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}, "
        f"started {holder.get('start', '?')}"
    )


def _makedirs(path: str, created: list[str]) -> None:
    """Create ``path`` and missing parents, appending each one created to ``created``."""
    missing = []
    while not osp.isdir(path) and osp.dirname(path) != path:
        missing.append(path)
        path = osp.dirname(path)
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:
            continue
        created.append(folder)


class WorkDirLock:
    """An exclusive lock on ``work_dir`` held through ``<work_dir>/.mmpar.lock``.

    Use it as a context manager, or call :meth:`acquire` and :meth:`release`::

        with WorkDirLock("work_dirs/run1"):
            ...  # no other WorkDirLock on this folder can be acquired meanwhile

    Args:
        work_dir: The folder to lock; created (with its parents) if missing.
        argv: The command line recorded for the error message of other runs
            (default ``sys.argv``).

    Attributes:
        path: The lock file.
        held: Whether this object holds the lock (False before :meth:`acquire`, after
            :meth:`release`, and when the filesystem cannot lock).
    """

    def __init__(self, work_dir: str, argv: Sequence[str] | None = None) -> None:
        self.work_dir = osp.abspath(work_dir)
        self.path = osp.join(self.work_dir, LOCK_FILE_NAME)
        self.argv = list(sys.argv if argv is None else argv)
        self.held = False
        self._fd: int | None = None
        self._created_file = False
        self._created_dirs: list[str] = []
        # A lock file found in place: its content and times, put back by release(discard=True).
        self._previous: tuple[bytes, int, int] | None = None

    def __enter__(self) -> WorkDirLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock without waiting and write this process's identity into the file.

        Raises:
            WorkDirLockedError: Another process holds the lock; nothing was changed.
            UsageError: The work dir or the lock file cannot be created or opened.
        """
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already held by this WorkDirLock")
        try:
            _makedirs(self.work_dir, self._created_dirs)
            while not self._try_lock():  # the file was replaced meanwhile: lock the new one
                pass
        except OSError as err:
            self._remove_created()
            raise UsageError(f'cannot lock work_dir "{self.work_dir}": {err}') from err
        if self._fd is not None:
            self._write_identity()

    def _open(self) -> int:
        flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
        try:  # O_EXCL tells whether this process made the file (to remove it in discard)
            fd = os.open(self.path, flags | os.O_CREAT | os.O_EXCL, 0o644)
            self._created_file = True
        except FileExistsError:
            fd = os.open(self.path, flags)  # no O_TRUNC: a refused run changes nothing
            self._created_file = False
        return fd

    def _try_lock(self) -> bool:
        """Lock the file at :attr:`path`; False when it was replaced before the lock took."""
        global _warned_unsupported
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise _locked_error(self.work_dir, self.path) from None
        except OSError as err:
            os.close(fd)
            if err.errno not in _UNSUPPORTED:
                raise
            self._remove_created()
            if not _warned_unsupported:
                _warned_unsupported = True
                warnings.warn(
                    f'the filesystem of work_dir "{self.work_dir}" does not support flock '
                    f"({err.strerror}); running WITHOUT the one-run-per-work-dir lock",
                    RuntimeWarning,
                    stacklevel=4,
                )
            return True
        # A holder that removed the file (discard) may have done so between our open and
        # our flock: the lock we got is then on a deleted file, so lock the current one.
        try:
            same = osp.samestat(os.fstat(fd), os.stat(self.path))
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            return False
        self._fd = fd
        self.held = True
        _held_here.add(self.work_dir)
        return True

    def _open_fd(self) -> int:
        """The held lock file's descriptor (only called while the lock is held)."""
        if self._fd is None:
            raise RuntimeError(f"the lock file of {self.work_dir} is not open")
        return self._fd

    def _write_identity(self) -> None:
        fd = self._open_fd()
        if not self._created_file:
            st = os.fstat(fd)
            self._previous = (os.pread(fd, st.st_size, 0), st.st_atime_ns, st.st_mtime_ns)
        identity = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "start": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "argv": self.argv,
        }
        data = (json.dumps(identity) + "\n").encode("utf-8")
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        os.fsync(fd)

    def _restore_previous(self) -> None:
        """Put back the content and times the lock file had before :meth:`acquire`."""
        if self._previous is None:
            return
        data, atime_ns, mtime_ns = self._previous
        fd = self._open_fd()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        os.fsync(fd)
        os.utime(fd, ns=(atime_ns, mtime_ns))
        self._previous = None

    def _remove_created(self) -> None:
        """Remove the lock file and the folders :meth:`acquire` created (if still empty)."""
        if self._created_file:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            self._created_file = False
        for folder in reversed(self._created_dirs):
            try:
                os.rmdir(folder)
            except OSError:
                break
        self._created_dirs = []

    def release(self, discard: bool = False) -> None:
        """Drop the lock (no-op when not held).

        Args:
            discard: Also remove the lock file and the folders if :meth:`acquire` created them
                (empty folders only), or put back the content and times of a lock file it found
                in place: for a run whose set-up failed after taking the lock, so that it
                leaves the work dir as it found it.
        """
        if self._fd is None:
            return
        if discard:  # while still locked, so no run locks the removed or restored file
            self._restore_previous()
            self._remove_created()
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
        self._previous = None
        self.held = False
        _held_here.discard(self.work_dir)
