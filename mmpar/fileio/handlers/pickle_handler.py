"""Pickle, written as usual and read back with an allow-list of globals (pickles can run code)."""

from __future__ import annotations

import pickle
from collections.abc import Iterable
from typing import Any

from .base import BaseFileHandler

# Globals a data pickle needs and that cannot run code when called while loading: containers,
# numbers, dates, paths and NumPy arrays/scalars (what mmcv's ``test.py --out`` results hold).
SAFE_GLOBALS = frozenset(
    {
        *(
            ("builtins", name)
            for name in ("set", "frozenset", "complex", "slice", "range", "bytearray", "bytes")
        ),
        *(("builtins", name) for name in ("list", "dict", "tuple", "int", "float", "str", "bool")),
        ("_codecs", "encode"),  # protocol-2 pickles of bytes
        ("collections", "OrderedDict"),
        ("collections", "defaultdict"),
        ("collections", "deque"),
        ("collections", "Counter"),
        ("datetime", "datetime"),
        ("datetime", "date"),
        ("datetime", "time"),
        ("datetime", "timedelta"),
        ("datetime", "timezone"),
        ("decimal", "Decimal"),
        ("fractions", "Fraction"),
        ("pathlib", "Path"),
        ("pathlib", "PosixPath"),
        ("pathlib", "WindowsPath"),
        ("pathlib", "PurePosixPath"),
        ("pathlib", "PureWindowsPath"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        *(
            (module, name)
            for module in ("numpy.core.multiarray", "numpy._core.multiarray")
            for name in ("_reconstruct", "scalar")
        ),
    }
)


# mmpar's config classes (``mmpar.dump(cfg, 'cfg.pkl')`` as mmcv's tools do), also under the
# names mmcv 1.x pickled them with. Their state is plain data that goes through this same
# unpickler, and restoring it only sets attributes; no other class of ours is allowed.
CONFIG_GLOBALS = {
    (module, name): name
    for module in ("mmpar.utils.config", "mmcv.utils.config", "mmcv.utils")
    for name in ("Config", "ConfigDict")
}


def _config_class(name: str) -> Any:
    from mmpar.utils import config  # imported on first use: most pickles hold no config

    return getattr(config, name)


def _as_pairs(allowed_globals: Iterable[str | tuple[str, str]]) -> set[tuple[str, str]]:
    pairs = set()
    for item in allowed_globals:
        if isinstance(item, str) and "." in item:
            pairs.add(tuple(item.rsplit(".", 1)))
        elif isinstance(item, tuple) and len(item) == 2 and all(isinstance(s, str) for s in item):
            pairs.add(item)
        else:
            raise TypeError(
                f"allowed_globals entries must be 'module.name' strings or (module, name) "
                f"tuples, but got {item!r}"
            )
    return pairs


class _AllowListUnpickler(pickle.Unpickler):
    """Rebuild only the globals in :data:`SAFE_GLOBALS` plus the caller's ``allowed``."""

    def __init__(self, file, allowed: set[tuple[str, str]], **kwargs):
        super().__init__(file, **kwargs)
        self.allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        """Return the global ``module.name`` if it is allowed; refuse anything else."""
        # Protocol <= 2 pickles name Python 2's "__builtin__"; find_class maps it to "builtins".
        key = ("builtins" if module == "__builtin__" else module, name)
        if key == ("builtins", "xrange"):  # protocol <= 2 writes range as Python 2's xrange
            key = ("builtins", "range")
        if key in SAFE_GLOBALS or key in self.allowed:
            return super().find_class(module, name)
        if key in CONFIG_GLOBALS:
            return _config_class(CONFIG_GLOBALS[key])
        if module.startswith("numpy") and name.endswith("DType"):  # numpy>=1.25 dtype classes
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"refusing to unpickle {module}.{name}: only plain containers, numbers, dates, "
            "paths and NumPy arrays load by default, since calling other globals while "
            "unpickling can run code from the file. If you trust the file, allow the classes "
            f"it needs: load(file, allowed_globals=['{module}.{name}'])"
        )


class PickleHandler(BaseFileHandler):
    """The ``pickle`` / ``pkl`` format (binary).

    ``dump`` writes protocol 2 unless told otherwise (as mmcv, readable by old Pythons).
    ``load`` refuses globals outside an allow-list (:data:`SAFE_GLOBALS`, plus mmpar's
    ``Config``/``ConfigDict``, see :data:`CONFIG_GLOBALS`); pass
    ``allowed_globals=['my_pkg.MyClass', ...]`` for the classes a trusted file needs.
    """

    str_like = False

    def load_from_fileobj(self, file, allowed_globals: Iterable = (), **kwargs) -> Any:
        """Unpickle from the binary file ``file``.

        Args:
            file: An open binary file.
            allowed_globals: Extra globals the pickle may use, as ``'module.name'`` or
                ``(module, name)``.
            **kwargs: ``encoding``, ``errors``, ``fix_imports`` (as :func:`pickle.load`).

        Raises:
            pickle.UnpicklingError: The pickle uses a global that is not allowed.
        """
        return _AllowListUnpickler(file, _as_pairs(allowed_globals), **kwargs).load()

    def dump_to_str(self, obj: Any, **kwargs) -> bytes:
        """Return ``obj`` pickled (protocol 2 unless ``protocol`` is given)."""
        kwargs.setdefault("protocol", 2)
        return pickle.dumps(obj, **kwargs)

    def dump_to_fileobj(self, obj: Any, file, **kwargs) -> None:
        """Pickle ``obj`` to the binary file ``file`` (protocol 2 unless given)."""
        kwargs.setdefault("protocol", 2)
        pickle.dump(obj, file, **kwargs)
