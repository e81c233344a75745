"""File I/O (mmcv 1.x's ``mmcv.fileio``): ``load``/``dump`` by format, ``FileClient`` backends."""

from .file_client import BaseStorageBackend, FileClient
from .handlers import BaseFileHandler, JsonHandler, PickleHandler, YamlHandler
from .io import dump, load, register_handler
from .parse import dict_from_file, list_from_file

__all__ = [
    "BaseFileHandler",
    "BaseStorageBackend",
    "FileClient",
    "JsonHandler",
    "PickleHandler",
    "YamlHandler",
    "dict_from_file",
    "dump",
    "list_from_file",
    "load",
    "register_handler",
]
