"""Storage backends of :class:`~mmpar.fileio.FileClient` that need no extra package: disk, HTTP."""

from __future__ import annotations

import os
import os.path as osp
import tempfile
import urllib.parse
from abc import ABCMeta, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class BaseStorageBackend(metaclass=ABCMeta):
    """What :class:`~mmpar.fileio.FileClient` calls on a storage backend.

    A backend must implement :meth:`get` and :meth:`get_text`. The other operations raise
    ``NotImplementedError`` naming the backend unless a subclass implements them, except
    :meth:`get_local_path`, which by default downloads the file with :meth:`get` into a
    temporary file that is removed afterwards.
    """

    _allow_symlink = False

    @property
    def name(self) -> str:
        """The backend's class name."""
        return type(self).__name__

    @property
    def allow_symlink(self) -> bool:
        """Whether the storage can hold symlinks (only the local disk can)."""
        return self._allow_symlink

    @abstractmethod
    def get(self, filepath: str | Path) -> bytes | memoryview:
        """Return the file's bytes."""

    @abstractmethod
    def get_text(self, filepath: str | Path, encoding: str = "utf-8") -> str:
        """Return the file's text."""

    def _unsupported(self, operation: str) -> NotImplementedError:
        return NotImplementedError(f"{self.name} does not support {operation}()")

    def put(self, obj: bytes, filepath: str | Path) -> None:
        """Write bytes ``obj`` to ``filepath``."""
        raise self._unsupported("put")

    def put_text(self, obj: str, filepath: str | Path, encoding: str = "utf-8") -> None:
        """Write text ``obj`` to ``filepath``."""
        raise self._unsupported("put_text")

    def remove(self, filepath: str | Path) -> None:
        """Remove the file ``filepath``."""
        raise self._unsupported("remove")

    def exists(self, filepath: str | Path) -> bool:
        """Whether ``filepath`` exists (a file or a directory)."""
        raise self._unsupported("exists")

    def isdir(self, filepath: str | Path) -> bool:
        """Whether ``filepath`` is a directory."""
        raise self._unsupported("isdir")

    def isfile(self, filepath: str | Path) -> bool:
        """Whether ``filepath`` is a file."""
        raise self._unsupported("isfile")

    def join_path(self, filepath: str | Path, *filepaths: str | Path) -> str:
        """Join path components the way this storage spells paths."""
        raise self._unsupported("join_path")

    def list_dir_or_file(
        self,
        dir_path: str | Path,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        """Yield the entries of ``dir_path`` relative to it."""
        raise self._unsupported("list_dir_or_file")

    @contextmanager
    def get_local_path(self, filepath: str | Path) -> Iterator[str]:
        """Download ``filepath`` to a temporary local file, yield its path, then delete it."""
        suffix = Path(urllib.parse.urlsplit(str(filepath)).path).suffix
        fd, local = tempfile.mkstemp(suffix=suffix, prefix="mmpar_")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self.get(filepath))
            yield local
        finally:
            os.remove(local)


def check_list_args(list_dir: bool, suffix) -> None:
    """Check ``list_dir_or_file``'s ``suffix`` against ``list_dir`` (TypeError as mmcv)."""
    if list_dir and suffix is not None:
        raise TypeError(
            "list_dir_or_file: `suffix` should be None when `list_dir` is True (suffix filters "
            f"files only; got suffix={suffix!r} with list_dir=True)"
        )
    if suffix is not None and not isinstance(suffix, (str, tuple)):
        raise TypeError(
            "list_dir_or_file: `suffix` must be a string or tuple of strings, but got "
            f"{type(suffix).__name__}: {suffix!r}"
        )


class HardDiskBackend(BaseStorageBackend):
    """Files on the local file system (``FileClient('disk')``, the default)."""

    _allow_symlink = True

    def get(self, filepath: str | Path) -> bytes:
        """Return the bytes of ``filepath``."""
        with open(filepath, "rb") as f:
            return f.read()

    def get_text(self, filepath: str | Path, encoding: str = "utf-8") -> str:
        """Return the text of ``filepath``."""
        with open(filepath, encoding=encoding) as f:
            return f.read()

    def put(self, obj: bytes, filepath: str | Path) -> None:
        """Write ``obj`` to ``filepath``, creating its parent directories."""
        self._make_parent(filepath)
        with open(filepath, "wb") as f:
            f.write(obj)

    def put_text(self, obj: str, filepath: str | Path, encoding: str = "utf-8") -> None:
        """Write text ``obj`` to ``filepath``, creating its parent directories."""
        self._make_parent(filepath)
        with open(filepath, "w", encoding=encoding) as f:
            f.write(obj)

    @staticmethod
    def _make_parent(filepath: str | Path) -> None:
        parent = osp.dirname(filepath)
        if parent:
            os.makedirs(parent, exist_ok=True)

    def remove(self, filepath: str | Path) -> None:
        """Delete the file ``filepath``."""
        os.remove(filepath)

    def exists(self, filepath: str | Path) -> bool:
        """Whether ``filepath`` exists."""
        return osp.exists(filepath)

    def isdir(self, filepath: str | Path) -> bool:
        """Whether ``filepath`` is a directory."""
        return osp.isdir(filepath)

    def isfile(self, filepath: str | Path) -> bool:
        """Whether ``filepath`` is a file."""
        return osp.isfile(filepath)

    def join_path(self, filepath: str | Path, *filepaths: str | Path) -> str:
        """``os.path.join`` of the components, as a str."""
        return osp.join(filepath, *filepaths)

    @contextmanager
    def get_local_path(self, filepath: str | Path) -> Iterator[str | Path]:
        """Yield ``filepath`` itself (it is already local)."""
        yield filepath

    def list_dir_or_file(
        self,
        dir_path: str | Path,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        """Yield directories and/or files under ``dir_path``, as paths relative to it.

        Entries come in name order; files whose name starts with ``.`` are skipped (as mmcv).

        Args:
            dir_path: The directory to list.
            list_dir: Yield directories.
            list_file: Yield files.
            suffix: Only files ending with it (a str or a tuple of str); needs
                ``list_dir=False``.
            recursive: Descend into sub-directories.

        Raises:
            TypeError: ``suffix`` is given with ``list_dir=True``, or is not a str/tuple.
        """
        check_list_args(list_dir, suffix)
        root = dir_path

        def walk(folder):
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                if entry.is_file():
                    if list_file and not entry.name.startswith("."):
                        rel = osp.relpath(entry.path, root)
                        if suffix is None or rel.endswith(suffix):
                            yield rel
                elif entry.is_dir():
                    if list_dir:
                        yield osp.relpath(entry.path, root)
                    if recursive:
                        yield from walk(entry.path)

        return walk(dir_path)


class HTTPBackend(BaseStorageBackend):
    """Read-only access to ``http://`` and ``https://`` URLs through :mod:`urllib`.

    Args:
        timeout: Seconds to wait for the server (``None``: no limit, as ``urlopen``).
    """

    def __init__(self, timeout: float | None = None):
        self.timeout = timeout

    def get(self, filepath: str) -> bytes:
        """Download ``filepath`` and return its bytes.

        Raises:
            urllib.error.HTTPError: The server answered with an error status (message has the
                URL).
            urllib.error.URLError: The server could not be reached.
        """
        url = str(filepath)
        # urllib.request pulls in http.client, ssl and email: loaded on first use only.
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as response:
                return response.read()
        except urllib.error.HTTPError as err:
            raise urllib.error.HTTPError(
                url, err.code, f"{err.reason} (GET {url})", err.headers, None
            ) from err
        except urllib.error.URLError as err:
            raise urllib.error.URLError(f"cannot reach {url}: {err.reason}") from err

    def get_text(self, filepath: str, encoding: str = "utf-8") -> str:
        """Download ``filepath`` and return it decoded."""
        return self.get(filepath).decode(encoding)

    def join_path(self, filepath: str | Path, *filepaths: str | Path) -> str:
        """Join URL components with ``/``."""
        return "/".join([str(filepath).rstrip("/"), *(str(p).strip("/") for p in filepaths)])
