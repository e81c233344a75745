"""YAML through PyYAML, read safely (no Python object tags); PyYAML is imported on first use."""

from __future__ import annotations

import functools
from typing import Any

from .base import BaseFileHandler
from .json_handler import set_default


@functools.cache
def _dumper() -> type:
    """A ``yaml.SafeDumper`` that also writes NumPy values, sets kept as YAML's ``!!set``."""
    import yaml

    class _PlainDumper(yaml.SafeDumper):
        pass

    def represent_other(dumper, data):
        try:
            plain = set_default(data)
        except TypeError:
            return dumper.represent_undefined(data)  # yaml's RepresenterError, naming the value
        return dumper.represent_data(plain)

    _PlainDumper.add_multi_representer(object, represent_other)
    return _PlainDumper


class YamlHandler(BaseFileHandler):
    """The ``yaml`` / ``yml`` format.

    Reading uses ``yaml.safe_load``: plain YAML (mappings, sequences, scalars, ``!!set``) loads,
    while Python object tags (``!!python/object``, ``!!python/tuple``...) are refused, because
    constructing them can run code from the file. Writing produces only plain YAML (tuples
    become sequences, NumPy values become numbers/lists), so what ``dump`` writes ``load`` reads.
    """

    def load_from_fileobj(self, file, **kwargs) -> Any:
        """Parse YAML from ``file`` with ``yaml.safe_load``.

        Raises:
            TypeError: Keyword arguments were given (mmcv passed them to ``yaml.load``, e.g. a
                ``Loader``); mmpar only reads YAML safely.
        """
        if kwargs:
            raise TypeError(
                f"YamlHandler.load_from_fileobj() got {sorted(kwargs)}: mmpar reads YAML only "
                "with yaml.safe_load and takes no loader options; for a file you trust that "
                "needs another Loader, call PyYAML yourself"
            )
        import yaml

        return yaml.safe_load(file)

    def dump_to_fileobj(self, obj: Any, file, **kwargs) -> None:
        """Write ``obj`` as YAML to ``file`` (kwargs go to ``yaml.dump``)."""
        import yaml

        kwargs.setdefault("Dumper", _dumper())
        yaml.dump(obj, file, **kwargs)

    def dump_to_str(self, obj: Any, **kwargs) -> str:
        """Return ``obj`` as a YAML string (kwargs go to ``yaml.dump``)."""
        import yaml

        kwargs.setdefault("Dumper", _dumper())
        return yaml.dump(obj, **kwargs)
