"""Storage backends that need a package mmpar does not install: Petrel, memcached, LMDB, Ceph.

Each checks for its package when constructed and raises an ImportError that says what to install.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

from mmpar.utils.misc import import_optional

from .backends import BaseStorageBackend, check_list_args


def _check_mapping(path_mapping, backend: str) -> None:
    if path_mapping is not None and not isinstance(path_mapping, dict):
        raise AssertionError(
            f"{backend}: path_mapping must be a dict {{old prefix: new prefix}} or None, but got "
            f"{type(path_mapping).__name__}"
        )


def _map_path(filepath: str | Path, path_mapping: dict | None) -> str:
    """Apply each ``path_mapping`` replacement once; backslashes become ``/``."""
    filepath = str(filepath)
    for old, new in (path_mapping or {}).items():
        filepath = filepath.replace(old, new, 1)
    return re.sub(r"\\+", "/", filepath)


class PetrelBackend(BaseStorageBackend):
    """Objects in Petrel OSS / S3 (``s3://`` URIs) through the ``petrel_client`` SDK.

    Args:
        path_mapping: Prefix replacements applied to every path, e.g. ``{'data/': 's3://b/'}``.
        enable_mc: Let the SDK cache reads in memcached.
        conf_path: The SDK's configuration file (its default if None).

    Raises:
        ImportError: ``petrel_client`` is not installed.
    """

    def __init__(self, path_mapping: dict | None = None, enable_mc: bool = True, conf_path=None):
        client = import_optional(
            "petrel_client.client",
            "PetrelBackend",
            "it comes with the Petrel OSS SDK, which is not on PyPI: install the SDK your "
            "cluster's maintainers provide",
        )
        _check_mapping(path_mapping, "PetrelBackend")
        self._client = client.Client(conf_path=conf_path, enable_mc=enable_mc)
        self.path_mapping = path_mapping

    def _path(self, filepath: str | Path) -> str:
        return _map_path(filepath, self.path_mapping)

    def _sdk(self, method: str):
        if not callable(getattr(self._client, method, None)):
            raise NotImplementedError(
                f"this petrel_client version has no Client.{method}(); upgrade petrel_client"
            )
        return getattr(self._client, method)

    def get(self, filepath: str | Path) -> memoryview:
        """Return the object's bytes."""
        return memoryview(self._client.Get(self._path(filepath)))

    def get_text(self, filepath: str | Path, encoding: str = "utf-8") -> str:
        """Return the object's text."""
        return str(self.get(filepath), encoding=encoding)

    def put(self, obj: bytes, filepath: str | Path) -> None:
        """Store bytes ``obj`` at ``filepath``."""
        self._client.put(self._path(filepath), obj)

    def put_text(self, obj: str, filepath: str | Path, encoding: str = "utf-8") -> None:
        """Store text ``obj`` at ``filepath``."""
        self.put(obj.encode(encoding), filepath)

    def remove(self, filepath: str | Path) -> None:
        """Delete the object."""
        self._sdk("delete")(self._path(filepath))

    def exists(self, filepath: str | Path) -> bool:
        """Whether an object or a directory is at ``filepath``."""
        return self.isfile(filepath) or self.isdir(filepath)

    def isdir(self, filepath: str | Path) -> bool:
        """Whether ``filepath`` is a directory (a prefix of objects)."""
        return bool(self._sdk("isdir")(self._path(filepath)))

    def isfile(self, filepath: str | Path) -> bool:
        """Whether an object is at ``filepath``."""
        return bool(self._sdk("contains")(self._path(filepath)))

    def join_path(self, filepath: str | Path, *filepaths: str | Path) -> str:
        """Join with ``/`` after mapping each component."""
        head = self._path(filepath)
        return "/".join([head[:-1] if head.endswith("/") else head, *map(self._path, filepaths)])

    def list_dir_or_file(
        self,
        dir_path: str | Path,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        """Yield directories and/or objects under ``dir_path``, relative to it.

        Raises:
            TypeError: ``suffix`` is given with ``list_dir=True``, or is not a str/tuple.
        """
        list_sdk = self._sdk("list")
        check_list_args(list_dir, suffix)
        root = self._path(dir_path).rstrip("/") + "/"

        def walk(folder):
            for name in list_sdk(folder):
                path = self.join_path(folder, name)
                if name.endswith("/"):
                    if list_dir:
                        yield path[len(root) : -1]
                    if recursive:
                        yield from walk(path)
                elif list_file and (suffix is None or path.endswith(suffix)):
                    yield path[len(root) :]

        return walk(root)


class MemcachedBackend(BaseStorageBackend):
    """Reads from a memcached cluster through its ``mc`` client module.

    Args:
        server_list_cfg: The server list file of the cluster.
        client_cfg: The client configuration file.
        sys_path: A folder to append to ``sys.path`` before importing ``mc``.

    Raises:
        ImportError: ``mc`` cannot be imported.
    """

    def __init__(self, server_list_cfg, client_cfg, sys_path=None):
        if sys_path is not None:
            sys.path.append(sys_path)
        self._mc = import_optional(
            "mc",
            "MemcachedBackend",
            "it is the Python client built with your cluster's memcached (not on PyPI); pass "
            "sys_path= the folder that holds it",
        )
        self.server_list_cfg = server_list_cfg
        self.client_cfg = client_cfg
        self._client = self._mc.MemcachedClient.GetInstance(server_list_cfg, client_cfg)
        self._mc_buffer = self._mc.pyvector()

    def get(self, filepath: str | Path):
        """Return the cached value's bytes."""
        self._client.Get(str(filepath), self._mc_buffer)
        return self._mc.ConvertBuffer(self._mc_buffer)

    def get_text(self, filepath: str | Path, encoding: str = "utf-8") -> str:
        """Not supported (memcached holds bytes), as in mmcv."""
        raise self._unsupported("get_text")


class LmdbBackend(BaseStorageBackend):
    """Reads values of an LMDB database, keyed by the path string (UTF-8).

    Args:
        db_path: The database folder.
        readonly: Open read-only.
        lock: Use LMDB's locking.
        readahead: Let the OS read ahead.
        **kwargs: More ``lmdb.open`` arguments.

    Raises:
        ImportError: ``lmdb`` is not installed.
    """

    def __init__(self, db_path, readonly=True, lock=False, readahead=False, **kwargs):
        self._lmdb = import_optional("lmdb", "LmdbBackend", "pip install lmdb (or mmpar[lmdb])")
        self.db_path = str(db_path)
        self.readonly = readonly
        self.lock = lock
        self.readahead = readahead
        self.kwargs = kwargs
        self._client = None  # opened on first read (e.g. in each DataLoader worker)

    def get(self, filepath: str | Path) -> bytes | None:
        """Return the value stored under the key ``str(filepath)`` (None if absent)."""
        if self._client is None:
            self._client = self._lmdb.open(
                self.db_path,
                readonly=self.readonly,
                lock=self.lock,
                readahead=self.readahead,
                **self.kwargs,
            )
        with self._client.begin(write=False) as txn:
            return txn.get(str(filepath).encode("utf-8"))

    def get_text(self, filepath: str | Path, encoding: str = "utf-8") -> str:
        """Return the value decoded.

        Raises:
            KeyError: No value is stored under ``filepath``.
        """
        value = self.get(filepath)
        if value is None:
            raise KeyError(f"LmdbBackend: no key {str(filepath)!r} in {self.db_path}")
        return bytes(value).decode(encoding)

    def __del__(self):
        if getattr(self, "_client", None) is not None:
            self._client.close()


class CephBackend(BaseStorageBackend):
    """Reads objects through the ``ceph`` S3 client (deprecated in mmcv: use PetrelBackend).

    Args:
        path_mapping: Prefix replacements applied to every path.

    Raises:
        ImportError: ``ceph`` is not installed.
    """

    def __init__(self, path_mapping: dict | None = None):
        ceph = import_optional(
            "ceph",
            "CephBackend",
            "install your cluster's ceph S3 client package, or use PetrelBackend instead",
        )
        warnings.warn(
            "CephBackend is deprecated (as in mmcv); use PetrelBackend",
            DeprecationWarning,
            stacklevel=2,
        )
        _check_mapping(path_mapping, "CephBackend")
        self._client = ceph.S3Client()
        self.path_mapping = path_mapping

    def get(self, filepath: str | Path) -> memoryview:
        """Return the object's bytes."""
        filepath = str(filepath)
        for old, new in (self.path_mapping or {}).items():
            filepath = filepath.replace(old, new, 1)
        return memoryview(self._client.Get(filepath))

    def get_text(self, filepath: str | Path, encoding: str = "utf-8") -> str:
        """Not supported, as in mmcv."""
        raise self._unsupported("get_text")
