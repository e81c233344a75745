"""``ConfigDict``: the attribute-access dict that holds a config's content."""

from __future__ import annotations

import difflib
from typing import Any

from addict import Dict

from .key_reads import note_read


class ConfigDict(Dict):
    """A dict whose keys are also attributes (an ``addict.Dict`` that does not auto-create keys).

    Reading a missing attribute raises ``AttributeError`` naming the key (``hasattr`` works);
    reading a missing item raises ``KeyError``. Plain dicts assigned into it become ConfigDicts.
    """

    def __missing__(self, name: Any) -> Any:
        raise KeyError(name)

    # Lookups by name tell key_reads which keys added by --cfg-options were read.
    def __getitem__(self, name: Any) -> Any:
        note_read(name)
        return super().__getitem__(name)

    def __contains__(self, name: object) -> bool:
        note_read(name)
        return super().__contains__(name)

    def get(self, name: Any, default: Any = None) -> Any:
        """``dict.get`` (a read of ``name``)."""
        note_read(name)
        return super().get(name, default)

    def pop(self, name: Any, *default: Any) -> Any:
        """``dict.pop`` (a read of ``name``)."""
        note_read(name)
        return super().pop(name, *default)

    def setdefault(self, name: Any, default: Any = None) -> Any:
        """``dict.setdefault`` (a read of ``name``)."""
        note_read(name)
        return super().setdefault(name, default)

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            pass
        close = difflib.get_close_matches(name, [str(k) for k in self.keys()], n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'.{hint}")

    def __setitem__(self, name: Any, value: Any) -> None:
        super().__setitem__(name, _to_config_dicts(value))

    def to_dict(self) -> dict:
        """Return a deep copy made of plain dicts, lists and tuples."""
        return _to_plain(self)


def _to_config_dicts(value: Any) -> Any:
    """Turn plain dicts (also inside lists/tuples) into ConfigDicts; keep existing ConfigDicts."""
    if isinstance(value, ConfigDict):
        return value
    if isinstance(value, dict):
        return ConfigDict(value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in value):
        return type(value)(_to_config_dicts(v) for v in value)
    return value


def _to_plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_plain(v) for v in value)
    return value
