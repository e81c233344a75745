"""mmpar.utils: config, registry, plugins, logging, seeding, environment (no torch at import)."""

from .config import (
    Config,
    ConfigDict,
    ConfigError,
    ConfigOptionError,
    ConfigSyntaxError,
    DictAction,
)
from .env import collect_env
from .logging import get_logger, print_log
from .misc import set_random_seed
from .plugins import import_modules_from_strings, load_entry_point_plugins
from .registry import ConfigArgumentError, Registry, build_from_cfg

__all__ = [
    "Config",
    "ConfigArgumentError",
    "ConfigDict",
    "ConfigError",
    "ConfigOptionError",
    "ConfigSyntaxError",
    "DictAction",
    "Registry",
    "build_from_cfg",
    "collect_env",
    "get_logger",
    "import_modules_from_strings",
    "load_entry_point_plugins",
    "print_log",
    "set_random_seed",
]
