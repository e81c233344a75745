"""Config files (.py/.json/.yaml) with ``_base_`` inheritance, and ``--cfg-options`` parsing.

The public names and behaviour are mmcv 1.x's (``Config``, ``ConfigDict``, ``DictAction``);
mmcv's known bugs are fixed: errors name the file and key, ``_delete_`` never leaks into the
result, ``pretty_text`` is valid Python, and ``--cfg-options`` values are parsed without eval.

Modules: :mod:`.loading` (files, ``_base_`` inheritance, ``merge_dicts``), :mod:`.writer`
(``pretty_text`` / ``dump``), :mod:`.options` (``DictAction``, ``merge_from_dict``, ``add_args``),
:mod:`.core` (``Config``), :mod:`.config_dict` (``ConfigDict``), :mod:`.errors` (each error
is also the built-in mmcv raises for the same mistake: ``KeyError``, ``TypeError``, ...).
"""

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils.path import check_file_exist as check_file_exist
from mmpar.utils.version_utils import digit_version as digit_version

from ..plugins import import_modules_from_strings
from .config_dict import ConfigDict
from .core import RESERVED_KEYS, Config, PathLike
from .errors import (
    ConfigEncodingError,
    ConfigError,
    ConfigKeyError,
    ConfigMissingKeyError,
    ConfigOptionError,
    ConfigOptionKeyError,
    ConfigOptionTypeError,
    ConfigOSError,
    ConfigSyntaxError,
    ConfigTypeError,
)
from .loading import BASE_KEY, DELETE_KEY, DEPRECATION_KEY, SUPPORTED_FORMATS, merge_dicts
from .options import DictAction, add_args

# Pickles, reprs and tracebacks keep naming the public path, as before config was a package.
for _obj in (
    Config,
    ConfigDict,
    ConfigEncodingError,
    ConfigError,
    ConfigKeyError,
    ConfigMissingKeyError,
    ConfigOSError,
    ConfigOptionError,
    ConfigOptionKeyError,
    ConfigOptionTypeError,
    ConfigSyntaxError,
    ConfigTypeError,
    DictAction,
    add_args,
):
    _obj.__module__ = __name__
del _obj

__all__ = [
    "BASE_KEY",
    "DELETE_KEY",
    "DEPRECATION_KEY",
    "RESERVED_KEYS",
    "SUPPORTED_FORMATS",
    "Config",
    "ConfigDict",
    "ConfigEncodingError",
    "ConfigError",
    "ConfigKeyError",
    "ConfigMissingKeyError",
    "ConfigOSError",
    "ConfigOptionError",
    "ConfigOptionKeyError",
    "ConfigOptionTypeError",
    "ConfigSyntaxError",
    "ConfigTypeError",
    "DictAction",
    "PathLike",
    "add_args",
    "import_modules_from_strings",
    "merge_dicts",
]
