"""``Config``: a config loaded from a file, a string or a dict, readable as attributes and items.

Reading files and ``_base_`` inheritance live in :mod:`.loading`, the Python/JSON/YAML output
in :mod:`.writer`, and dotted-key options (``merge_from_dict``, ``--cfg-options``) in
:mod:`.options`; this module ties them together behind mmcv's ``Config`` interface.
"""

from __future__ import annotations

import argparse
import copy
import os
import os.path as osp
import warnings
from collections.abc import Iterator
from typing import Any, Union

from .config_dict import ConfigDict
from .errors import ConfigKeyError, ConfigOSError, ConfigTypeError
from .loading import (
    SUPPORTED_FORMATS,
    _check_format,
    _import_custom,
    _load_file,
    _load_text,
    merge_dicts,
    read_config_text,
)
from .options import _apply_options, add_args
from .program import remember_if_program_config
from .writer import _dump_text, _python_source

RESERVED_KEYS = ["filename", "text", "pretty_text"]

PathLike = Union[str, "os.PathLike[str]"]


class Config:
    """A config loaded from a file or dict; keys are readable as attributes and items.

    Args:
        cfg_dict: The config content.
        cfg_text: The source text (defaults to the file's text when ``filename`` is given).
        filename: The file it came from.

    Example:
        >>> cfg = Config(dict(a=1, b=dict(c=[1, 2])))
        >>> cfg.b.c
        [1, 2]
        >>> cfg.merge_from_dict({'b.c.1': 3})
        >>> cfg.b.c
        [1, 3]
    """

    def __init__(
        self,
        cfg_dict: dict | None = None,
        cfg_text: str | None = None,
        filename: PathLike | None = None,
    ) -> None:
        if cfg_dict is None:
            cfg_dict = {}
        elif not isinstance(cfg_dict, dict):
            raise ConfigTypeError(f"cfg_dict must be a dict, but got {type(cfg_dict).__name__}")
        for key in cfg_dict:
            if key in RESERVED_KEYS:
                raise ConfigKeyError(
                    f'"{key}" is reserved for Config attributes ({", ".join(RESERVED_KEYS)}); '
                    f"rename this top-level key"
                )
        filename = os.fspath(filename) if filename is not None else None
        if cfg_text is None:
            if filename is not None and osp.isfile(filename):
                cfg_text = read_config_text(filename)
            else:
                cfg_text = ""
        object.__setattr__(self, "_cfg_dict", ConfigDict(cfg_dict))
        object.__setattr__(self, "_filename", filename)
        object.__setattr__(self, "_text", cfg_text)

    # -- construction ---------------------------------------------------------------------

    @staticmethod
    def fromfile(
        filename: PathLike,
        use_predefined_variables: bool = True,
        import_custom_modules: bool = True,
    ) -> Config:
        """Load a ``.py``, ``.json``, ``.yaml`` or ``.yml`` config and its ``_base_`` files.

        Args:
            filename: Path of the config file.
            use_predefined_variables: Replace ``{{ fileDirname }}``, ``{{ fileBasename }}``,
                ``{{ fileBasenameNoExtension }}`` and ``{{ fileExtname }}`` in the text.
            import_custom_modules: Import the modules listed in ``custom_imports``.

        Raises:
            FileNotFoundError: The file or one of its ``_base_`` files does not exist.
            ConfigSyntaxError: The file is not valid Python/JSON/YAML (file and line named).
            ConfigOSError: Unsupported extension (an ``OSError``, as in mmcv).
            ConfigKeyError: Duplicate key among ``_base_`` files, unknown
                ``{{ _base_.key }}`` reference (a ``KeyError``).
            ConfigTypeError: A dict overrides a non-dict base value without ``_delete_``
                (a ``TypeError``).
            ConfigError: ``_base_`` loop.
            ImportError: A ``custom_imports`` module failed to import.

        A file (or ``_base_`` file) that sets ``_deprecation_=dict(expected=..., reference=...)``
        is loaded with a ``DeprecationWarning`` naming both.
        """
        path, (cfg_dict, cfg_text) = Config._load_path(filename, use_predefined_variables)
        if import_custom_modules:
            _import_custom(cfg_dict, path)
        cfg = Config(cfg_dict, cfg_text=cfg_text, filename=path)
        remember_if_program_config(path, cfg)  # the runner reads its `preemption` key
        return cfg

    @staticmethod
    def _load_path(filename: PathLike, use_predefined_variables: bool) -> tuple[str, tuple]:
        path = osp.abspath(osp.expanduser(os.fspath(filename)))
        if not osp.isfile(path):
            raise FileNotFoundError(f'Config file "{path}" does not exist')
        return path, _load_file(path, use_predefined_variables, ())

    @staticmethod
    def _file2dict(filename: PathLike, use_predefined_variables: bool = True) -> tuple[dict, str]:
        """Load a file as mmcv's private loader did: ``(plain dict, text)``, no custom imports."""
        return Config._load_path(filename, use_predefined_variables)[1]

    @staticmethod
    def fromstring(cfg_str: str, file_format: str, import_custom_modules: bool = True) -> Config:
        """Load a config from text.

        Args:
            cfg_str: The config text.
            file_format: ``'.py'``, ``'.json'``, ``'.yaml'`` or ``'.yml'`` (dot optional).
            import_custom_modules: Import the modules listed in ``custom_imports``.

        ``_base_`` paths are resolved relative to the current directory; the predefined
        ``{{ fileDirname }}``-style variables are not available (there is no file).

        Raises:
            ConfigOSError: Unsupported format (an ``OSError``, as in mmcv).
        """
        ext = file_format if file_format.startswith(".") else f".{file_format}"
        if ext.lower() not in SUPPORTED_FORMATS:
            raise ConfigOSError(
                f'Unsupported config format "{file_format}"; use one of '
                f"{', '.join(SUPPORTED_FORMATS)}"
            )
        if ext.lower() != ".py" and "dict(" in cfg_str:
            warnings.warn(
                f'Config.fromstring: file_format is "{file_format}" but the text contains '
                '"dict(": is it a .py config?',
                stacklevel=2,
            )
        label = f"<config string ({ext})>"
        cfg_dict, _ = _load_text(cfg_str, ext.lower(), label, os.getcwd(), True, (), cfg_str)
        if import_custom_modules:
            _import_custom(cfg_dict, label)
        return Config(cfg_dict, cfg_text=cfg_str)

    @staticmethod
    def auto_argparser(description: str | None = None) -> tuple[argparse.ArgumentParser, Config]:
        """Build a parser with one ``--key`` option per config value (mmcv's experimental helper).

        The config path is the first positional command-line argument (``sys.argv``); the
        config is loaded and :func:`add_args` adds its keys to a new parser.

        Args:
            description: The parsers' description.

        Returns:
            ``(parser, cfg)``: the parser (positional ``config`` plus the config's keys) and
            the loaded config.
        """
        partial_parser = argparse.ArgumentParser(description=description, add_help=False)
        partial_parser.add_argument("config", help="config file path")
        cfg = Config.fromfile(partial_parser.parse_known_args()[0].config)
        parser = argparse.ArgumentParser(description=description)
        parser.add_argument("config", help="config file path")
        add_args(parser, cfg)
        return parser, cfg

    @staticmethod
    def _merge_a_into_b(a: dict, b: dict, allow_list_keys: bool = False) -> dict:
        """mmcv-compatible name of :func:`merge_dicts`."""
        return merge_dicts(a, b, allow_list_keys)

    # -- properties -----------------------------------------------------------------------

    @property
    def filename(self) -> str | None:
        """Absolute path of the file the config was loaded from (None if not from a file)."""
        return self._filename

    @property
    def text(self) -> str:
        """The source text (with the texts of the ``_base_`` files before it)."""
        return self._text

    @property
    def pretty_text(self) -> str:
        """The config as readable Python source that evaluates back to the same content.

        Values that have no Python literal form (e.g. a class used as ``type``) are written
        with ``repr``; :meth:`dump` refuses to write such a config to a ``.py`` file.
        """
        return _python_source(self._cfg_dict.to_dict())[0]

    def dump(self, file: PathLike | None = None) -> str | None:
        """Write the config to ``file`` (format from its extension) or return it as text.

        Without ``file`` the text is in the format of :attr:`filename` (Python by default).
        JSON and YAML have no tuples: tuples come back as lists when such a dump is loaded.

        Raises:
            ConfigTypeError: Unsupported extension, or a value the format cannot represent
                (a ``TypeError``, as mmcv's ``dump`` raises).
        """
        if file is None:
            ext = osp.splitext(self._filename)[1].lower() if self._filename else ".py"
            ext = ext if ext in SUPPORTED_FORMATS else ".py"
            return _dump_text(self._cfg_dict.to_dict(), ext, "<string>")
        file = os.fspath(file)
        ext = _check_format(file, what="Dump file", error=ConfigTypeError)
        text = _dump_text(self._cfg_dict.to_dict(), ext, file)
        with open(file, "w", encoding="utf-8") as f:
            f.write(text)
        return None

    # -- updates --------------------------------------------------------------------------

    def merge_from_dict(self, options: dict, allow_list_keys: bool = True) -> None:
        """Merge ``{'dotted.key': value}`` options into the config.

        Args:
            options: Keys are dotted paths (``'model.backbone.depth'``); with
                ``allow_list_keys`` a digit part indexes a list
                (``'data.train.pipeline.1.type'``). Dict values merge into existing dicts
                (``_delete_=True`` replaces). Missing keys are created (``fp16.loss_scale``
                adds ``fp16``), except where the path is most likely a typo: a missing key
                that is followed by a list index, or that nearly equals an existing key at
                the same level (``data.trian.samples_per_gpu``) is an error. Options that set
                ``custom_imports`` import its modules, as loading a config file does.
            allow_list_keys: Allow digit parts to index lists.

        Raises:
            ConfigOptionTypeError: A key goes through a value that is not a dict (or list),
                or indexes a list with a non-digit part (a ``TypeError``, as in mmcv).
            ConfigOptionKeyError: A list index is past the end, or a key goes through a
                missing key that looks like a typo (see above) (a ``KeyError``).
            ConfigOptionError: A key is malformed (empty part). Nothing is changed on error.
            ImportError: A ``custom_imports`` module given in the options failed to import.
        """
        added: list[str] = []
        cfg = _apply_options(self._cfg_dict, options, allow_list_keys, added)
        object.__setattr__(self, "_cfg_dict", cfg)
        # The keys the options created, for tools that report the ones nothing read.
        object.__setattr__(self, "_added_option_keys", self.added_option_keys + added)

    @property
    def added_option_keys(self) -> list[str]:
        """Dotted paths of the keys :meth:`merge_from_dict` created (not in the config before)."""
        return list(getattr(self, "_added_option_keys", None) or [])

    # -- mapping protocol -----------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_cfg_dict", "_filename", "_text"):
            raise AttributeError(name)  # not set up yet (e.g. during unpickling)
        return getattr(self._cfg_dict, name)

    def __getitem__(self, name: str) -> Any:
        return self._cfg_dict[name]

    def __setattr__(self, name: str, value: Any) -> None:
        self.__setitem__(name, value)

    def __setitem__(self, name: str, value: Any) -> None:
        if name in RESERVED_KEYS:
            raise ConfigKeyError(f'"{name}" is a reserved Config attribute and cannot be set')
        self._cfg_dict[name] = value

    def __delitem__(self, name: str) -> None:
        del self._cfg_dict[name]

    def __iter__(self) -> Iterator:
        return iter(self._cfg_dict)

    def __len__(self) -> int:
        return len(self._cfg_dict)

    def __contains__(self, name: object) -> bool:
        return name in self._cfg_dict

    def __repr__(self) -> str:
        return f"Config (path: {self._filename}): {self._cfg_dict.to_dict()!r}"

    def __getstate__(self) -> tuple:
        return self._cfg_dict, self._filename, self._text

    def __setstate__(self, state: tuple) -> None:
        cfg_dict, filename, text = state
        object.__setattr__(self, "_cfg_dict", cfg_dict)
        object.__setattr__(self, "_filename", filename)
        object.__setattr__(self, "_text", text)

    def __copy__(self) -> Config:
        other = type(self).__new__(type(self))
        other.__setstate__(self.__getstate__())
        return other

    def __deepcopy__(self, memo: dict) -> Config:
        other = type(self).__new__(type(self))
        memo[id(self)] = other
        other.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        return other
