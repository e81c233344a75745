"""Write a file so readers see the old one or the complete new one, never half of it.

Checkpoints and the ``latest.pth`` link are written under a temporary name next to their final
name (``.<name>.tmp.<pid>``), flushed, and renamed into place; the rename is made durable by
syncing the directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator

__all__ = ["atomic_path", "fsync_dir", "remove_checkpoint", "update_latest_link"]


@contextlib.contextmanager
def atomic_path(filename: str) -> Iterator[str]:
    """Yield a temp path next to ``filename``; on success move it into place durably.

    Temporaries of the same file left by processes killed while writing it
    (``.<name>.tmp.<pid>``) are deleted once the new file is in place.

    Args:
        filename: The final path; its directory is created.

    Yields:
        The temporary path to write. If the block raises, it is removed and ``filename`` is
        left as it was.
    """
    dirname = os.path.dirname(os.path.abspath(filename))
    os.makedirs(dirname, exist_ok=True)
    prefix = f".{os.path.basename(filename)}.tmp."
    tmp = os.path.join(dirname, f"{prefix}{os.getpid()}")
    # Ours only if a killed process had our pid: a stale symlink there would make a write to
    # ``tmp`` change the file it points at.
    with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)
    try:
        yield tmp
        os.replace(tmp, filename)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    fsync_dir(dirname)
    # Any other pid's temporary is stale: only rank 0 writes checkpoints and latest.pth, so
    # no other process is writing into this directory now.
    for name in os.listdir(dirname):
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            with contextlib.suppress(OSError):
                os.remove(os.path.join(dirname, name))


def fsync_dir(dirname: str) -> None:
    """Make a rename into ``dirname`` durable (a no-op where directories cannot be synced).

    Args:
        dirname: The directory whose entries to flush to disk.
    """
    # Directories cannot be opened this way on Windows.
    if os.name != "posix":
        return
    fd = os.open(dirname, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def update_latest_link(out_dir: str, filename: str, link_name: str = "latest.pth") -> str:
    """Point ``out_dir/link_name`` at ``out_dir/filename`` atomically; copy where links fail.

    Like a checkpoint, the link is made under a temporary name and renamed over
    ``link_name``; temporaries of the link left by killed processes are deleted.

    Args:
        out_dir: The directory of the checkpoint and the link.
        filename: The checkpoint's name in ``out_dir`` (the link's relative target).
        link_name: The link's name in ``out_dir``.

    Returns:
        The path of the link (or copy).
    """
    dst = os.path.join(out_dir, link_name)
    with atomic_path(dst) as tmp:
        try:
            os.symlink(filename, tmp)  # relative target: the directory can be moved
        except (OSError, NotImplementedError):
            target = os.path.join(out_dir, filename)
            if os.path.isdir(target):  # a sharded checkpoint
                shutil.copytree(target, tmp)
            else:
                shutil.copyfile(target, tmp)
    return dst


def remove_checkpoint(path: str) -> bool:
    """Delete a checkpoint: a file, or a sharded checkpoint's directory; False if none is there.

    A directory is first renamed to a hidden temporary name, so a crash half-way through the
    deletion never leaves a partial checkpoint under the real name.
    """
    if os.path.isdir(path) and not os.path.islink(path):
        parent, name = os.path.split(os.path.abspath(path))
        doomed = os.path.join(parent, f".{name}.tmp.{os.getpid()}")
        shutil.rmtree(doomed, ignore_errors=True)
        os.replace(path, doomed)
        shutil.rmtree(doomed, ignore_errors=True)
        return True
    if os.path.isfile(path):
        os.remove(path)
        return True
    return False
