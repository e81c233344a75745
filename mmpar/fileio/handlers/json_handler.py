"""JSON through the standard library, with NumPy values and sets written as plain JSON."""

from __future__ import annotations

import json
import sys
from typing import Any

from .base import BaseFileHandler


def set_default(obj: Any) -> Any:
    """Turn a value ``json`` cannot write into one it can (the ``default=`` hook).

    Sets and ranges become lists, NumPy arrays become nested lists and NumPy scalars become the
    Python number they hold. NumPy is not imported here: a NumPy value can only exist if NumPy
    already is.

    Args:
        obj: A value ``json`` met and cannot serialize.

    Returns:
        A JSON-serializable replacement.

    Raises:
        TypeError: ``obj`` is none of the types above.
    """
    if isinstance(obj, (set, frozenset, range)):
        return list(obj)
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(obj, np.ndarray):
            return obj.tolist()
        if isinstance(obj, np.generic):
            return obj.item()
    raise TypeError(
        f"{type(obj).__module__}.{type(obj).__qualname__} is unsupported for json dump: "
        "only JSON types, sets, ranges and NumPy arrays/scalars can be written; convert the "
        "value first or pass default=<your function>"
    )


class JsonHandler(BaseFileHandler):
    """The ``json`` / ``.json`` format; ``dump`` kwargs go to :func:`json.dump`."""

    def load_from_fileobj(self, file, **kwargs) -> Any:
        """Parse JSON from ``file`` (kwargs go to :func:`json.load`)."""
        return json.load(file, **kwargs)

    def dump_to_fileobj(self, obj: Any, file, **kwargs) -> None:
        """Write ``obj`` as JSON to ``file`` (``default`` is :func:`set_default` unless given)."""
        kwargs.setdefault("default", set_default)
        json.dump(obj, file, **kwargs)

    def dump_to_str(self, obj: Any, **kwargs) -> str:
        """Return ``obj`` as a JSON string (``default`` is :func:`set_default` unless given)."""
        kwargs.setdefault("default", set_default)
        return json.dumps(obj, **kwargs)
