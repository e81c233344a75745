"""Path helpers (mmcv 1.x ``mmcv.utils.path``): checks, directories, symlinks, scanning."""

from __future__ import annotations

import os
import os.path as osp
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Union

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils.misc import is_str as is_str

PathLike = Union[str, Path]


def is_filepath(x: Any) -> bool:
    """Return whether ``x`` is a ``str`` or a :class:`pathlib.Path`."""
    return isinstance(x, (str, Path))


def fopen(filepath: PathLike, *args: Any, **kwargs: Any) -> IO:
    """Open ``filepath`` (a str or a Path) like :func:`open`.

    Args:
        filepath: The file.
        *args: Passed to :func:`open` (mode, buffering, ...).
        **kwargs: Passed to :func:`open` (encoding, ...).

    Returns:
        The open file object.

    Raises:
        ValueError: ``filepath`` is neither a str nor a Path.
    """
    if not is_filepath(filepath):
        raise ValueError(f"fopen: filepath must be a str or a Path, but got {filepath!r}")
    return open(filepath, *args, **kwargs)


def check_file_exist(filename: PathLike, msg_tmpl: str = 'file "{}" does not exist') -> None:
    """Raise FileNotFoundError unless ``filename`` is an existing file.

    Args:
        filename: The path to check.
        msg_tmpl: The error message, ``{}`` standing for ``filename``.

    Raises:
        FileNotFoundError: ``filename`` does not exist or is not a regular file.
    """
    if not osp.isfile(filename):
        raise FileNotFoundError(msg_tmpl.format(filename))


def mkdir_or_exist(dir_name: PathLike, mode: int = 0o777) -> None:
    """Create ``dir_name`` and its parents unless it exists (``~`` is expanded; ``''`` is a no-op).

    Args:
        dir_name: The directory.
        mode: Permission bits for the new directories (masked by the umask).
    """
    if dir_name == "":
        return
    os.makedirs(osp.expanduser(dir_name), mode=mode, exist_ok=True)


def symlink(src: PathLike, dst: PathLike, overwrite: bool = True, **kwargs: Any) -> None:
    """Create a symbolic link ``dst`` pointing to ``src``.

    Args:
        src: What the link points to (stored as given, so it may be relative to ``dst``).
        dst: The link to create.
        overwrite: Remove an existing file or link at ``dst`` first. Without it an existing
            ``dst`` raises :class:`FileExistsError`.
        **kwargs: Passed to :func:`os.symlink` (``target_is_directory``).
    """
    if overwrite and osp.lexists(dst):
        os.remove(dst)
    os.symlink(src, dst, **kwargs)


def scandir(
    dir_path: PathLike,
    suffix: Union[str, tuple[str, ...], None] = None,
    recursive: bool = False,
    case_sensitive: bool = True,
) -> Iterator[str]:
    """Yield the files under ``dir_path``, as paths relative to it.

    Hidden files (names starting with ``.``) are skipped; hidden directories are still
    entered when ``recursive``.

    Args:
        dir_path: The directory.
        suffix: Only files ending with it (a str or a tuple of str); all files when None.
        recursive: Also scan sub-directories.
        case_sensitive: Compare ``suffix`` case-sensitively.

    Returns:
        A generator of relative paths.

    Raises:
        TypeError: ``dir_path`` is not a str or Path, or ``suffix`` not a str or tuple.
    """
    if not is_filepath(dir_path):
        raise TypeError(f"scandir: dir_path must be a str or a Path, but got {dir_path!r}")
    if suffix is not None and not isinstance(suffix, (str, tuple)):
        raise TypeError(f"scandir: suffix must be a str or a tuple of str, but got {suffix!r}")
    if suffix is not None and not case_sensitive:
        suffix = suffix.lower() if isinstance(suffix, str) else tuple(s.lower() for s in suffix)
    root = str(dir_path)

    def walk(directory: str) -> Iterator[str]:
        for entry in os.scandir(directory):
            if entry.is_file() and not entry.name.startswith("."):
                rel_path = osp.relpath(entry.path, root)
                compared = rel_path if case_sensitive else rel_path.lower()
                if suffix is None or compared.endswith(suffix):
                    yield rel_path
            elif recursive and entry.is_dir():
                yield from walk(entry.path)

    return walk(root)


def find_vcs_root(path: PathLike, markers: Sequence[str] = (".git",)) -> str | None:
    """Return the nearest directory, from ``path`` upwards, that holds one of ``markers``.

    Args:
        path: A file or a directory to start from.
        markers: File or directory names that mark a root.

    Returns:
        The absolute path of that directory, or None if no ancestor holds a marker.
    """
    current = osp.abspath(osp.expanduser(path))
    if osp.isfile(current):
        current = osp.dirname(current)
    while True:
        if any(osp.exists(osp.join(current, marker)) for marker in markers):
            return current
        parent = osp.dirname(current)
        if parent == current:
            return None
        current = parent


__all__ = [
    "check_file_exist",
    "find_vcs_root",
    "fopen",
    "is_filepath",
    "mkdir_or_exist",
    "scandir",
    "symlink",
]
