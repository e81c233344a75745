"""``FileClient``: one interface to read and write files on disk, over HTTP or in object stores."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils.misc import has_method as has_method
from mmpar.utils.path import is_filepath as is_filepath

from .backends import BaseStorageBackend, HardDiskBackend, HTTPBackend
from .optional_backends import CephBackend, LmdbBackend, MemcachedBackend, PetrelBackend


class FileClient:
    """A file-access client that forwards every call to one storage backend.

    Choose the backend by name (``backend='disk'``, ``'http'``, ``'petrel'``, ``'memcached'``,
    ``'lmdb'``, ``'ceph'`` or one added with :meth:`register_backend`) or by URI prefix
    (``prefix='http'``, ``'https'``, ``'s3'``); with neither, the local disk. Clients are cached:
    the same arguments return the same instance.

    Args:
        backend: The backend's registered name.
        prefix: A URI prefix; used when ``backend`` is None.
        **kwargs: Arguments of the backend's constructor.

    Raises:
        ValueError: ``backend`` or ``prefix`` is not registered.

    Example:
        >>> client = FileClient()  # local disk
        >>> client.put_text('hello', '/tmp/mmpar_demo/a.txt')
        >>> client.get_text('/tmp/mmpar_demo/a.txt')
        'hello'
    """

    _backends: dict[str, type] = {
        "disk": HardDiskBackend,
        "ceph": CephBackend,
        "memcached": MemcachedBackend,
        "lmdb": LmdbBackend,
        "petrel": PetrelBackend,
        "http": HTTPBackend,
    }
    _prefix_to_backends: dict[str, type] = {
        "s3": PetrelBackend,
        "http": HTTPBackend,
        "https": HTTPBackend,
    }
    _instances: dict[str, FileClient] = {}

    client: Any

    def __new__(cls, backend: str | None = None, prefix: str | None = None, **kwargs):
        """Return the cached client for these arguments, building its backend the first time."""
        if backend is None and prefix is None:
            backend = "disk"
        if backend is not None and backend not in cls._backends:
            raise ValueError(
                f"FileClient: backend {backend!r} is not supported; registered backends are "
                f"{sorted(cls._backends)} (add one with FileClient.register_backend)"
            )
        if prefix is not None and prefix not in cls._prefix_to_backends:
            raise ValueError(
                f"FileClient: prefix {prefix!r} is not supported; registered prefixes are "
                f"{sorted(cls._prefix_to_backends)} (add one with "
                "FileClient.register_backend(..., prefixes=...))"
            )
        key = ":".join([str(backend), str(prefix), *(f"{k}:{v}" for k, v in kwargs.items())])
        instance = cls._instances.get(key)
        if instance is None:
            backend_cls = (
                cls._backends[backend] if backend is not None else cls._prefix_to_backends[prefix]
            )
            instance = super().__new__(cls)
            instance.client = backend_cls(**kwargs)
            cls._instances[key] = instance
        return instance

    @property
    def name(self) -> str:
        """The backend's class name."""
        return self.client.name

    @property
    def allow_symlink(self) -> bool:
        """Whether the backend's storage can hold symlinks."""
        return self.client.allow_symlink

    @staticmethod
    def parse_uri_prefix(uri: str | Path) -> str | None:
        """Return the scheme of ``uri`` (``'s3'`` for ``'cluster:s3://b/k'``), None for a path.

        Raises:
            AssertionError: ``uri`` is neither a str nor a Path (as mmcv).
        """
        if not isinstance(uri, (str, Path)):
            raise AssertionError(
                f"FileClient.parse_uri_prefix: uri must be a str or a Path, but got "
                f"{type(uri).__name__}: {uri!r}"
            )
        scheme, sep, _ = str(uri).partition("://")
        if not sep:
            return None
        return scheme.rpartition(":")[2]  # 'cluster:s3' -> 's3'

    @classmethod
    def infer_client(
        cls, file_client_args: dict | None = None, uri: str | Path | None = None
    ) -> FileClient:
        """Return ``FileClient(**file_client_args)``, or the client for ``uri``'s prefix.

        Raises:
            AssertionError: Both arguments are None (as mmcv).
        """
        if file_client_args is None and uri is None:
            raise AssertionError(
                "FileClient.infer_client needs file_client_args or uri, but both are None"
            )
        if file_client_args is None:
            return cls(prefix=cls.parse_uri_prefix(uri))
        return cls(**file_client_args)

    @classmethod
    def _drop_cached(cls, backend_types: tuple[type, ...]) -> None:
        for key, instance in list(cls._instances.items()):
            if isinstance(instance.client, backend_types):
                del cls._instances[key]

    @classmethod
    def _register_backend(cls, name, backend, force=False, prefixes=None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"the backend name must be a str, but got {type(name).__name__}")
        if not inspect.isclass(backend) or not issubclass(backend, BaseStorageBackend):
            raise TypeError(
                f"backend {name!r} must be a subclass of BaseStorageBackend, but got {backend!r}"
            )
        if prefixes is None:
            prefixes = []
        elif isinstance(prefixes, str):
            prefixes = [prefixes]
        elif not isinstance(prefixes, (list, tuple)):
            raise AssertionError(f"prefixes must be a str, list or tuple, but got {prefixes!r}")
        taken = [p for p in prefixes if p in cls._prefix_to_backends]
        if not force and (name in cls._backends or taken):
            what = f"backend name {name!r}" if name in cls._backends else f"prefix {taken[0]!r}"
            raise KeyError(
                f"{what} is already registered as a storage backend; pass force=True to override it"
            )
        if name in cls._backends:
            cls._drop_cached((cls._backends[name],))
        cls._backends[name] = backend
        for prefix in prefixes:
            if prefix in cls._prefix_to_backends:
                cls._drop_cached((cls._prefix_to_backends[prefix],))
            cls._prefix_to_backends[prefix] = backend

    @classmethod
    def register_backend(cls, name: str, backend=None, force: bool = False, prefixes=None):
        """Add a storage backend under ``name`` (and URI ``prefixes``); usable as a decorator.

        Args:
            name: The name for ``FileClient(backend=name)``.
            backend: A :class:`BaseStorageBackend` subclass; None to return a decorator.
            force: Replace an existing backend or prefix (cached clients of it are dropped).
            prefixes: A URI prefix or a list of them, e.g. ``'oss'`` for ``oss://`` URIs.

        Raises:
            TypeError: ``name`` is not a str, or ``backend`` is not a BaseStorageBackend class.
            KeyError: ``name`` or a prefix is taken and ``force`` is False.
        """
        if backend is not None:
            cls._register_backend(name, backend, force=force, prefixes=prefixes)
            return None

        def decorator(backend_cls):
            cls._register_backend(name, backend_cls, force=force, prefixes=prefixes)
            return backend_cls

        return decorator

    def get(self, filepath: str | Path) -> bytes | memoryview:
        """Return the bytes at ``filepath``."""
        return self.client.get(filepath)

    def get_text(self, filepath: str | Path, encoding: str = "utf-8") -> str:
        """Return the text at ``filepath``."""
        return self.client.get_text(filepath, encoding)

    def put(self, obj: bytes, filepath: str | Path) -> None:
        """Write bytes ``obj`` to ``filepath`` (on disk, parent folders are created)."""
        self.client.put(obj, filepath)

    def put_text(self, obj: str, filepath: str | Path) -> None:
        """Write text ``obj`` to ``filepath`` (on disk, parent folders are created)."""
        self.client.put_text(obj, filepath)

    def remove(self, filepath: str | Path) -> None:
        """Delete ``filepath``."""
        self.client.remove(filepath)

    def exists(self, filepath: str | Path) -> bool:
        """Whether ``filepath`` exists."""
        return self.client.exists(filepath)

    def isdir(self, filepath: str | Path) -> bool:
        """Whether ``filepath`` is a directory."""
        return self.client.isdir(filepath)

    def isfile(self, filepath: str | Path) -> bool:
        """Whether ``filepath`` is a file."""
        return self.client.isfile(filepath)

    def join_path(self, filepath: str | Path, *filepaths: str | Path) -> str:
        """Join path components as the backend spells paths."""
        return self.client.join_path(filepath, *filepaths)

    @contextmanager
    def get_local_path(self, filepath: str | Path) -> Iterator[str | Path]:
        """Yield a local path holding the file: itself on disk, else a temporary download."""
        with self.client.get_local_path(str(filepath)) as local_path:
            yield local_path

    def list_dir_or_file(
        self,
        dir_path: str | Path,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        """Yield directories and/or files under ``dir_path``, relative to it."""
        yield from self.client.list_dir_or_file(dir_path, list_dir, list_file, suffix, recursive)


__all__ = [
    "BaseStorageBackend",
    "CephBackend",
    "FileClient",
    "HTTPBackend",
    "HardDiskBackend",
    "LmdbBackend",
    "MemcachedBackend",
    "PetrelBackend",
]
