"""WorkDirLock: one holder per work dir, a refused run changes nothing, SIGKILL leaves no lock."""

import errno
import fcntl
import json
import os
import pickle
import signal
import socket
import warnings
from pathlib import Path

import pytest
from helpers import work_dir_lock_holder

from mmpar.runner.work_dir_guard import lock as workdir_lock_module
from mmpar.runner.work_dir_guard.lock import LOCK_FILE_NAME, WorkDirLock, WorkDirLockedError
from mmpar.utils.usage_error import UsageError


def _listing(root):
    """Every entry under ``root`` (and ``root`` itself) with its size and mtime."""
    out = {".": os.stat(root).st_mtime_ns}
    for path in sorted(Path(root).rglob("*")):
        st = path.lstat()
        out[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture
def holder(tmp_path):
    """A real process holding the lock of ``tmp_path / 'work'``; yields its Popen."""
    with work_dir_lock_holder(tmp_path / "work") as child:
        yield child


def test_acquire_creates_the_folder_and_writes_the_identity(tmp_path):
    work = tmp_path / "a" / "b"
    with WorkDirLock(str(work), argv=["train.py", "cfg.py"]) as lock:
        assert lock.held and lock.path == str(work / LOCK_FILE_NAME)
        identity = json.loads((work / LOCK_FILE_NAME).read_text())
    assert not lock.held
    assert identity["pid"] == os.getpid() and identity["host"] == socket.gethostname()
    assert identity["argv"] == ["train.py", "cfg.py"] and identity["start"][:2] == "20"


def test_second_lock_is_refused_in_the_same_process_too(tmp_path):
    with WorkDirLock(str(tmp_path)):
        with pytest.raises(WorkDirLockedError, match=f"pid {os.getpid()} on host") as info:
            WorkDirLock(str(tmp_path)).acquire()
    # Under torchrun rank 0 sends the error to the other ranks: it survives pickling.
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is WorkDirLockedError and str(copy) == str(info.value)
    with WorkDirLock(str(tmp_path)) as again:  # released: the next one gets it
        assert again.held


def test_discard_removes_only_what_acquire_created(tmp_path):
    work = tmp_path / "new" / "work"
    lock = WorkDirLock(str(work))
    lock.acquire()
    lock.release(discard=True)
    assert not (tmp_path / "new").exists()

    (tmp_path / "old").mkdir()
    old_lock = tmp_path / "old" / LOCK_FILE_NAME
    old_lock.write_text('{"pid": 1, "host": "earlier"}\n')
    os.utime(old_lock, ns=(1_000_000_000, 2_000_000_000))
    lock = WorkDirLock(str(tmp_path / "old"))
    lock.acquire()
    assert json.loads(old_lock.read_text())["pid"] == os.getpid()  # held: our identity
    lock.release(discard=True)
    # The lock file found in place gets its content and modification time back.
    assert old_lock.read_text() == '{"pid": 1, "host": "earlier"}\n'
    assert old_lock.stat().st_mtime_ns == 2_000_000_000


def test_a_lock_on_a_removed_file_is_not_kept(tmp_path, monkeypatch):
    """A file unlinked between open and flock (a discarding holder) is not the lock."""
    lock = WorkDirLock(str(tmp_path))
    real_flock = fcntl.flock
    calls = []

    def flock_after_unlink(fd, op):
        if not calls:  # the first file disappears before the lock takes
            os.unlink(lock.path)
        calls.append(op)
        return real_flock(fd, op)

    monkeypatch.setattr(fcntl, "flock", flock_after_unlink)
    lock.acquire()
    assert os.path.samestat(os.fstat(lock._fd), os.stat(lock.path))
    assert len(calls) == 2
    lock.release()


def test_filesystem_without_flock_warns_once_and_runs_unlocked(tmp_path, monkeypatch):
    def no_flock(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    monkeypatch.setattr(workdir_lock_module, "_warned_unsupported", False)
    with pytest.warns(RuntimeWarning, match="WITHOUT the one-run-per-work-dir lock"):
        first = WorkDirLock(str(tmp_path / "w"))
        first.acquire()
    assert not first.held and not (tmp_path / "w").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        WorkDirLock(str(tmp_path / "w")).acquire()  # the second time: no warning


def test_a_folder_or_file_that_cannot_be_created_is_a_usage_error(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="cannot lock work_dir"):
        WorkDirLock(str(tmp_path / "file" / "work")).acquire()
    real_open = os.open

    def refuse_lock_file(path, *args, **kwargs):
        if str(path).endswith(LOCK_FILE_NAME):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse_lock_file)
    with pytest.raises(UsageError, match="Permission denied"):
        WorkDirLock(str(tmp_path / "new" / "work")).acquire()
    assert not (tmp_path / "new").exists()  # the folders made on the way are removed again


@pytest.mark.slow
def test_holder_in_another_process_refuses_and_the_refused_run_changes_nothing(tmp_path, holder):
    work = tmp_path / "work"
    (work / "epoch_1.pth").write_bytes(b"weights")
    before = _listing(work)
    with pytest.raises(WorkDirLockedError) as info:
        WorkDirLock(str(work)).acquire()
    message = str(info.value)
    assert "\n" not in message
    assert f'work_dir "{work}" is in use by another run' in message
    assert f"pid {holder.pid} on host {socket.gethostname()}, started 20" in message
    assert "wait until it ends or choose another --work-dir" in message
    assert _listing(work) == before
    holder.stdin.close()  # the holder releases and exits
    assert holder.wait(timeout=30) == 0
    with WorkDirLock(str(work)):
        assert json.loads((work / LOCK_FILE_NAME).read_text())["pid"] == os.getpid()


@pytest.mark.slow
def test_a_sigkilled_holder_leaves_no_stale_lock(tmp_path, holder):
    work = tmp_path / "work"
    holder.send_signal(signal.SIGKILL)
    assert holder.wait(timeout=30) == -signal.SIGKILL
    assert json.loads((work / LOCK_FILE_NAME).read_text())["pid"] == holder.pid
    with WorkDirLock(str(work), argv=["next"]):
        identity = json.loads((work / LOCK_FILE_NAME).read_text())
    assert identity["pid"] == os.getpid() and identity["argv"] == ["next"]
