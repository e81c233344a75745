"""The interface every load/dump format handler implements."""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import Any


class BaseFileHandler(metaclass=ABCMeta):
    """Reads and writes one serialization format for :func:`mmpar.fileio.load` / ``dump``.

    Subclasses implement the three file-object/string methods; the path methods open the file
    in text or binary mode according to :attr:`str_like`.

    Attributes:
        str_like: True if the format is text (``load``/``dump`` hand the handler a ``StringIO``),
            False if it is bytes (a ``BytesIO``).
    """

    str_like = True

    @abstractmethod
    def load_from_fileobj(self, file, **kwargs) -> Any:
        """Return the object read from the open file ``file``."""

    @abstractmethod
    def dump_to_fileobj(self, obj: Any, file, **kwargs) -> None:
        """Write ``obj`` to the open file ``file``."""

    @abstractmethod
    def dump_to_str(self, obj: Any, **kwargs) -> str | bytes:
        """Return ``obj`` serialized (``str`` for text formats, ``bytes`` for binary ones)."""

    def load_from_path(self, filepath: str, mode: str | None = None, **kwargs) -> Any:
        """Open ``filepath`` (``'r'`` or ``'rb'`` by :attr:`str_like`) and load from it."""
        mode = mode or ("r" if self.str_like else "rb")
        with open(filepath, mode) as f:
            return self.load_from_fileobj(f, **kwargs)

    def dump_to_path(self, obj: Any, filepath: str, mode: str | None = None, **kwargs) -> None:
        """Open ``filepath`` (``'w'`` or ``'wb'`` by :attr:`str_like`) and dump ``obj`` to it."""
        mode = mode or ("w" if self.str_like else "wb")
        with open(filepath, mode) as f:
            self.dump_to_fileobj(obj, f, **kwargs)
