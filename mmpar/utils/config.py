"""Config files (.py/.json/.yaml) with ``_base_`` inheritance, and ``--cfg-options`` parsing.

The public names and behaviour are mmcv 1.x's (``Config``, ``ConfigDict``, ``DictAction``);
mmcv's known bugs are fixed: errors name the file and key, ``_delete_`` never leaks into the
result, ``pretty_text`` is valid Python, and ``--cfg-options`` values are parsed without eval.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import keyword
import math
import os
import os.path as osp
import re
import types
import uuid
from collections.abc import Iterator
from typing import Any, Union

from addict import Dict

from .plugins import import_modules_from_strings

BASE_KEY = "_base_"
DELETE_KEY = "_delete_"
RESERVED_KEYS = ("filename", "text", "pretty_text")
SUPPORTED_FORMATS = (".py", ".json", ".yaml", ".yml")
_LINE_WIDTH = 100

PathLike = Union[str, "os.PathLike[str]"]


class ConfigError(ValueError):
    """A config file or option is invalid; the message names the file and/or key."""


class ConfigSyntaxError(SyntaxError, ConfigError):
    """A config file is not valid Python/JSON/YAML; ``filename`` and ``lineno`` are set."""


class ConfigOptionError(ConfigError):
    """A ``--cfg-options`` / ``merge_from_dict`` key is malformed or its path does not exist."""


class ConfigDict(Dict):
    """A dict whose keys are also attributes (an ``addict.Dict`` that does not auto-create keys).

    Reading a missing attribute raises ``AttributeError`` naming the key (``hasattr`` works);
    reading a missing item raises ``KeyError``. Plain dicts assigned into it become ConfigDicts.
    """

    def __missing__(self, name: Any) -> Any:
        raise KeyError(name)

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


# ----------------------------------------------------------------------------------------------
# Reading files


def _check_format(path: str, what: str = "Config file") -> str:
    ext = osp.splitext(path)[1].lower()
    if ext not in SUPPORTED_FORMATS:
        raise ConfigError(
            f'{what} "{path}" has the unsupported extension "{ext}"; '
            f"use one of {', '.join(SUPPORTED_FORMATS)}"
        )
    return ext


def _substitute_predefined_vars(text: str, path: str) -> str:
    """Replace ``{{ fileDirname }}`` and friends with facts about ``path`` (mmcv names)."""
    dirname = osp.dirname(path)
    basename = osp.basename(path)
    stem, ext = osp.splitext(basename)
    values = {
        "fileDirname": dirname,
        "fileBasename": basename,
        "fileBasenameNoExtension": stem,
        "fileExtname": ext,
    }
    for key, value in values.items():
        pattern = r"\{\{\s*" + key + r"\s*\}\}"
        text = re.sub(pattern, lambda _m, v=value: v.replace("\\", "/"), text)
    return text


_BASE_REF = re.compile(r'([\'"]?)\{\{\s*' + BASE_KEY + r"\.([\w.]+)\s*\}\}\1")


def _presubstitute_base_refs(text: str) -> tuple[str, dict[str, str]]:
    """Replace ``{{ _base_.a.b }}`` with a unique quoted placeholder string.

    The placeholder keeps the file parseable in every format; after the ``_base_`` files are
    loaded, :func:`_substitute_base_refs` swaps it for the referenced value (with its type).
    A reference wrapped in quotes is treated as the same whole-value reference.

    Returns:
        The new text and a map placeholder → dotted key.
    """
    placeholders: dict[str, str] = {}
    by_key: dict[str, str] = {}

    def _replace(match: re.Match) -> str:
        key = match.group(2)
        if key not in by_key:
            by_key[key] = f"_mmpar_base_{key.replace('.', '_')}_{uuid.uuid4().hex[:8]}"
            placeholders[by_key[key]] = key
        return f'"{by_key[key]}"'

    return _BASE_REF.sub(_replace, text), placeholders


def _lookup_dotted(cfg: Any, key: str) -> Any:
    node = cfg
    for part in key.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, (list, tuple)) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise KeyError(key)
    return node


def _substitute_base_refs(
    value: Any, placeholders: dict[str, str], base_cfg: dict, path: str, base_files: list[str]
) -> Any:
    """Swap the placeholders of :func:`_presubstitute_base_refs` for values of ``base_cfg``."""

    def _resolve(placeholder: str) -> Any:
        key = placeholders[placeholder]
        try:
            return copy.deepcopy(_lookup_dotted(base_cfg, key))
        except KeyError:
            where = (
                f"its _base_ files ({', '.join(base_files)})" if base_files else "it has no _base_"
            )
            raise ConfigError(
                f'{path}: "{{{{ _base_.{key} }}}}" refers to "{key}", which is not defined '
                f"({where}); check the key path"
            ) from None

    def _walk(node: Any) -> Any:
        if isinstance(node, dict):
            return type(node)({k: _walk(v) for k, v in node.items()})
        if isinstance(node, (list, tuple)):
            return type(node)(_walk(v) for v in node)
        if isinstance(node, str):
            for placeholder in placeholders:
                if node in (placeholder, f'"{placeholder}"'):
                    return _resolve(placeholder)
            for placeholder in placeholders:
                if placeholder in node:
                    # Part of a longer string: interpolate the value's text.
                    node = node.replace(f'"{placeholder}"', str(_resolve(placeholder)))
                    node = node.replace(placeholder, str(_resolve(placeholder)))
        return node

    return _walk(value)


def _exec_python(text: str, path: str) -> dict:
    """Run a .py config and collect its public data globals (no modules/functions/classes)."""
    try:
        code = compile(text, path, "exec")
    except SyntaxError as err:
        raise ConfigSyntaxError(
            f"{path}, line {err.lineno}: invalid Python in config file: {err.msg}",
            (path, err.lineno, err.offset, err.text),
        ) from err
    namespace: dict[str, Any] = {"__file__": path, "__name__": "__mmpar_config__"}
    exec(code, namespace)  # Config files are trusted code, like mmcv's.
    skip = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
    return {
        name: value
        for name, value in namespace.items()
        if (name == BASE_KEY or not name.startswith("_")) and not isinstance(value, skip)
    }


def _parse_text(text: str, ext: str, path: str) -> dict:
    """Parse config ``text`` of format ``ext``; ``path`` is used in messages."""
    if ext == ".py":
        return _exec_python(text, path)
    if ext == ".json":
        try:
            data = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as err:
            raise ConfigSyntaxError(
                f"{path}, line {err.lineno}: invalid JSON in config file: {err.msg}",
                (path, err.lineno, err.colno, None),
            ) from err
    else:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            raise ConfigSyntaxError(
                f"{path}, line {line}: invalid YAML in config file: {err}",
                (path, line, None, None),
            ) from err
        if data is None:
            data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: a config file must hold a mapping at top level, got {type(data).__name__}"
        )
    return data


def _strip_delete_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_delete_keys(v) for k, v in value.items() if k != DELETE_KEY}
    if isinstance(value, (list, tuple)):
        return type(value)(_strip_delete_keys(v) for v in value)
    return value


def merge_dicts(a: dict, b: dict, allow_list_keys: bool = False, _path: str = "") -> dict:
    """Return ``b`` updated recursively with ``a`` (neither is modified).

    A dict in ``a`` merges into the dict at the same key of ``b`` unless it sets
    ``_delete_=True``, in which case it replaces it. With ``allow_list_keys``, digit keys of
    ``a`` index into lists of ``b``.

    Raises:
        ConfigError: A dict in ``a`` meets a non-dict in ``b`` without ``_delete_``, or a list
            index is out of range.
    """
    result = list(b) if isinstance(b, list) else dict(b)
    for key, value in a.items():
        where = f"{_path}.{key}" if _path else str(key)
        if isinstance(result, list):
            if not (isinstance(key, str) and key.isdigit()):
                raise ConfigError(
                    f'"{where}": the base value is a list, so "{key}" must be an index'
                )
            index = int(key)
            if index >= len(result):
                raise ConfigError(
                    f'"{where}": index {index} is out of range for a list of {len(result)} items'
                )
            if isinstance(value, dict) and isinstance(result[index], (dict, list)):
                result[index] = merge_dicts(value, result[index], allow_list_keys, where)
            else:
                result[index] = _strip_delete_keys(value)
        elif isinstance(value, dict):
            delete = bool(value.get(DELETE_KEY, False))
            if key in result and not delete:
                allowed = (dict, list) if allow_list_keys else dict
                if not isinstance(result[key], allowed):
                    raise ConfigError(
                        f'"{where}" is a dict in the new config but a '
                        f"{type(result[key]).__name__} in the base config; set "
                        f"{DELETE_KEY}=True in the new dict to replace the base value"
                    )
                result[key] = merge_dicts(value, result[key], allow_list_keys, where)
            else:
                result[key] = _strip_delete_keys(value)
        else:
            result[key] = _strip_delete_keys(value)
    return result


def _load_file(path: str, use_predefined_variables: bool, chain: tuple[str, ...]) -> tuple:
    """Load ``path`` and its ``_base_`` files; return ``(plain dict, text)``."""
    ext = _check_format(path)
    if path in chain:
        loop = " -> ".join(list(chain[chain.index(path) :]) + [path])
        raise ConfigError(f"_base_ loop: {loop}; a config cannot include itself")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    body = _substitute_predefined_vars(text, path) if use_predefined_variables else text
    return _load_text(body, ext, path, osp.dirname(path), use_predefined_variables, chain, text)


def _load_text(
    body: str,
    ext: str,
    path: str,
    base_dir: str,
    use_predefined_variables: bool,
    chain: tuple[str, ...],
    raw_text: str,
) -> tuple[dict, str]:
    body, placeholders = _presubstitute_base_refs(body)
    cfg = _parse_text(body, ext, path)

    base_cfg: dict = {}
    base_texts: list[str] = []
    base_files: list[str] = []
    bases = cfg.pop(BASE_KEY, [])
    if isinstance(bases, str):
        bases = [bases]
    if not isinstance(bases, (list, tuple)) or not all(isinstance(b, str) for b in bases):
        raise ConfigError(f"{path}: {BASE_KEY} must be a path or a list of paths, got {bases!r}")
    key_owner: dict[str, str] = {}
    for base in bases:
        base_path = osp.abspath(osp.join(base_dir, osp.expanduser(base)))
        if not osp.isfile(base_path):
            raise FileNotFoundError(
                f'{BASE_KEY} file "{base}" (resolved to "{base_path}") referenced by config '
                f'"{path}" does not exist'
            )
        _check_format(base_path, what=f'{BASE_KEY} file of "{path}"')
        sub_cfg, sub_text = _load_file(base_path, use_predefined_variables, chain + (path,))
        for key in sub_cfg:
            if key in key_owner:
                raise ConfigError(
                    f'Duplicate key "{key}" in the {BASE_KEY} files "{key_owner[key]}" and '
                    f'"{base_path}" of "{path}"; define it in one of them only'
                )
            key_owner[key] = base_path
        base_cfg.update(sub_cfg)
        base_texts.append(sub_text)
        base_files.append(base_path)

    if placeholders:
        cfg = _substitute_base_refs(cfg, placeholders, base_cfg, path, base_files)
    merged = merge_dicts(cfg, base_cfg)
    text = "\n".join(base_texts + [f"{path}\n{raw_text}"])
    return merged, text


# ----------------------------------------------------------------------------------------------
# Writing Python source


def _is_identifier(key: Any) -> bool:
    return isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key)


def _scalar_source(value: Any) -> str | None:
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "-float('inf')"
        return repr(value)
    if value is None or isinstance(value, (bool, int, complex, str, bytes)):
        return repr(value)
    return None


class _PySourceWriter:
    """Render config values as readable Python source; remember values it cannot render."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def inline(self, value: Any, where: str) -> str:
        scalar = _scalar_source(value)
        if scalar is not None:
            return scalar
        if isinstance(value, dict):
            if all(_is_identifier(k) for k in value):
                inner = ", ".join(f"{k}={self.inline(v, f'{where}.{k}')}" for k, v in value.items())
                return f"dict({inner})"
            inner = ", ".join(
                f"{self.inline(k, where)}: {self.inline(v, f'{where}.{k}')}"
                for k, v in value.items()
            )
            return "{" + inner + "}"
        if isinstance(value, (list, tuple)):
            items = [self.inline(v, f"{where}.{i}") for i, v in enumerate(value)]
            if isinstance(value, list):
                return "[" + ", ".join(items) + "]"
            return "(" + ", ".join(items) + (",)" if len(items) == 1 else ")")
        if isinstance(value, (set, frozenset)) and all(_scalar_source(v) for v in value):
            return repr(value)
        self.problems.append(f"{where} ({type(value).__name__})")
        return repr(value)

    def block(self, value: Any, indent: int, where: str, prefix: int = 0) -> str:
        """Render ``value`` for a line indented by ``indent`` where ``prefix`` chars precede it."""
        text = self.inline(value, where)
        if indent + prefix + len(text) + 1 <= _LINE_WIDTH or not isinstance(
            value, (dict, list, tuple)
        ):
            return text
        inner = indent + 4
        if isinstance(value, dict):
            if all(_is_identifier(k) for k in value):
                lines = [
                    f"{k}={self.block(v, inner, f'{where}.{k}', len(k) + 1)}"
                    for k, v in value.items()
                ]
                opener, closer = "dict(", ")"
            else:
                lines = []
                for k, v in value.items():
                    key = self.inline(k, where)
                    lines.append(f"{key}: {self.block(v, inner, f'{where}.{k}', len(key) + 2)}")
                opener, closer = "{", "}"
        else:
            opener, closer = ("[", "]") if isinstance(value, list) else ("(", ")")
            if all(_scalar_source(v) is not None for v in value):
                lines = self._fill([_scalar_source(v) for v in value], inner)
            else:
                lines = [self.block(v, inner, f"{where}.{i}") for i, v in enumerate(value)]
        body = "".join(f"{' ' * inner}{line},\n" for line in lines)
        return f"{opener}\n{body}{' ' * indent}{closer}"

    @staticmethod
    def _fill(items: list[str], indent: int) -> list[str]:
        """Pack scalar items into as few lines as fit the width."""
        lines: list[str] = []
        for item in items:
            if lines and indent + len(lines[-1]) + len(item) + 3 <= _LINE_WIDTH:
                lines[-1] += f", {item}"
            else:
                lines.append(item)
        return lines


def _python_source(cfg: dict) -> tuple[str, list[str]]:
    writer = _PySourceWriter()
    lines = []
    for key, value in cfg.items():
        if not _is_identifier(key):
            writer.problems.append(f"{key!r} (not a Python identifier)")
            continue
        lines.append(f"{key} = {writer.block(value, 0, key, len(key) + 3)}")
    return "\n".join(lines) + ("\n" if lines else ""), writer.problems


# ----------------------------------------------------------------------------------------------
# Config


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
            raise TypeError(f"cfg_dict must be a dict, but got {type(cfg_dict).__name__}")
        for key in cfg_dict:
            if key in RESERVED_KEYS:
                raise KeyError(
                    f'"{key}" is reserved for Config attributes ({", ".join(RESERVED_KEYS)}); '
                    f"rename this top-level key"
                )
        filename = os.fspath(filename) if filename is not None else None
        if cfg_text is None:
            if filename is not None and osp.isfile(filename):
                with open(filename, encoding="utf-8") as f:
                    cfg_text = f.read()
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
            ConfigError: Unsupported extension, ``_base_`` loop, duplicate key among
                ``_base_`` files, unknown ``{{ _base_.key }}`` reference, ...
            ImportError: A ``custom_imports`` module failed to import.
        """
        path = osp.abspath(osp.expanduser(os.fspath(filename)))
        if not osp.isfile(path):
            raise FileNotFoundError(f'Config file "{path}" does not exist')
        cfg_dict, cfg_text = _load_file(path, use_predefined_variables, ())
        if import_custom_modules:
            _import_custom(cfg_dict, path)
        return Config(cfg_dict, cfg_text=cfg_text, filename=path)

    @staticmethod
    def fromstring(cfg_str: str, file_format: str, import_custom_modules: bool = True) -> Config:
        """Load a config from text.

        Args:
            cfg_str: The config text.
            file_format: ``'.py'``, ``'.json'``, ``'.yaml'`` or ``'.yml'`` (dot optional).
            import_custom_modules: Import the modules listed in ``custom_imports``.

        ``_base_`` paths are resolved relative to the current directory; the predefined
        ``{{ fileDirname }}``-style variables are not available (there is no file).
        """
        ext = file_format if file_format.startswith(".") else f".{file_format}"
        if ext.lower() not in SUPPORTED_FORMATS:
            raise ConfigError(
                f'Unsupported config format "{file_format}"; use one of '
                f"{', '.join(SUPPORTED_FORMATS)}"
            )
        label = f"<config string ({ext})>"
        cfg_dict, _ = _load_text(cfg_str, ext.lower(), label, os.getcwd(), True, (), cfg_str)
        if import_custom_modules:
            _import_custom(cfg_dict, label)
        return Config(cfg_dict, cfg_text=cfg_str)

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
            ConfigError: Unsupported extension, or a value the format cannot represent.
        """
        if file is None:
            ext = osp.splitext(self._filename)[1].lower() if self._filename else ".py"
            return self._dumps(ext if ext in SUPPORTED_FORMATS else ".py", "<string>")
        file = os.fspath(file)
        text = self._dumps(_check_format(file, what="Dump file"), file)
        with open(file, "w", encoding="utf-8") as f:
            f.write(text)
        return None

    def _dumps(self, ext: str, target: str) -> str:
        cfg = self._cfg_dict.to_dict()
        if ext == ".py":
            text, problems = _python_source(cfg)
            if problems:
                raise ConfigError(
                    f"Cannot dump the config to Python ({target}): no literal form for "
                    f"{', '.join(problems)}"
                )
            return text
        try:
            if ext == ".json":
                return json.dumps(cfg, indent=4) + "\n"
            import yaml

            return yaml.safe_dump(cfg, sort_keys=False, default_flow_style=False)
        except Exception as err:  # json TypeError / yaml RepresenterError
            raise ConfigError(
                f"Cannot dump the config to {ext[1:].upper()} ({target}): {err}"
            ) from err

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
            ConfigOptionError: A key is malformed (empty part), goes through a value that is
                not a dict/list, indexes past the end of a list, or goes through a missing key
                that looks like a typo (see above). Nothing is changed then.
            ImportError: A ``custom_imports`` module given in the options failed to import.
        """
        if not isinstance(options, dict):
            raise TypeError(f"options must be a dict, but got {type(options).__name__}")
        cfg = copy.deepcopy(self._cfg_dict)
        for full_key, value in options.items():
            _set_dotted(cfg, full_key, value, allow_list_keys)
        if any(key.split(".")[0] == "custom_imports" for key in options):
            # Options may add plugins (--cfg-options custom_imports.imports=[my_pkg.hooks]);
            # import them as loading a config file does. Modules already imported are no-ops.
            _import_custom(cfg, "--cfg-options")
        object.__setattr__(self, "_cfg_dict", cfg)

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
            raise KeyError(f'"{name}" is a reserved Config attribute and cannot be set')
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


def _import_custom(cfg_dict: dict, source: str) -> None:
    spec = cfg_dict.get("custom_imports")
    if not spec:
        return
    if not isinstance(spec, dict) or "imports" not in spec:
        raise ConfigError(
            f"{source}: custom_imports must be dict(imports=[...], allow_failed_imports=False), "
            f"got {spec!r}"
        )
    unknown = set(spec) - {"imports", "allow_failed_imports"}
    if unknown:
        raise ConfigError(f"{source}: unknown custom_imports keys {sorted(unknown)}")
    import_modules_from_strings(
        spec["imports"], spec.get("allow_failed_imports", False), source=source
    )


def _merges_into(value: Any, target: Any) -> bool:
    """Whether option ``value`` merges into ``target`` rather than replacing it."""
    return isinstance(value, dict) and isinstance(target, dict) and not value.get(DELETE_KEY)


def _swaps_two_neighbours(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with two adjacent characters swapped (``tset`` → ``test``)."""
    if len(a) != len(b) or len(a) < 3:
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return (
        len(diff) == 2
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and (a[diff[1]] == b[diff[0]])
    )


def _check_new_key(node: dict, full_key: str, parts: list[str], depth: int) -> None:
    """Refuse to create the missing dict ``parts[depth]`` when it is most likely a typo.

    Options may add new keys (``fp16.loss_scale=512`` creates ``fp16``), but a path that
    indexes into the missing key as if it were a list (``data.trian.pipeline.0.type``), or
    whose missing key is one edit away from an existing one (``data.trian`` vs ``train``),
    would silently create a dict nobody reads.

    Raises:
        ConfigOptionError: Naming the missing key, its parent's keys and close matches.
    """
    part = parts[depth]
    siblings = [str(k) for k in node]
    close = difflib.get_close_matches(part, siblings, n=3, cutoff=0.8)
    # difflib rates a swap of two neighbouring letters low (``tset`` vs ``test``: 0.75).
    close += [s for s in siblings if s not in close and _swaps_two_neighbours(part, s)]
    indexes_a_list = any(p.isdigit() for p in parts[depth + 1 :])
    if not close and not indexes_a_list:
        return
    parent = ".".join(parts[:depth]) or "the config"
    if close:
        hint = f" Did you mean: {', '.join(close)}?"
    else:
        hint = " A list index cannot follow a key that does not exist."
    raise ConfigOptionError(
        f'Option "{full_key}": "{".".join(parts[: depth + 1])}" does not exist ({parent} has '
        f"keys {', '.join(siblings) or 'none'}).{hint}"
    )


def _set_dotted(cfg: ConfigDict, full_key: Any, value: Any, allow_list_keys: bool) -> None:
    """Set ``cfg[a][b][c] = value`` for ``full_key='a.b.c'`` (see ``merge_from_dict``)."""
    if not isinstance(full_key, str):
        raise ConfigOptionError(f"Option key {full_key!r} must be a str")
    parts = full_key.split(".")
    if any(part == "" for part in parts):
        raise ConfigOptionError(
            f'Malformed option key "{full_key}": empty part; use dotted names like "a.b.c"'
        )
    node: Any = cfg
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        here = ".".join(parts[: depth + 1])
        if isinstance(node, dict):
            if last:
                if _merges_into(value, node.get(part)):
                    value = merge_dicts(value, node[part], allow_list_keys, here)
                node[part] = _to_config_dicts(_to_plain(_strip_delete_keys(value)))
                return
            if part not in node:
                _check_new_key(node, full_key, parts, depth)
                node[part] = ConfigDict()
            node = node[part]
        elif isinstance(node, list) and allow_list_keys:
            if not part.isdigit():
                raise ConfigOptionError(
                    f'Option "{full_key}": "{".".join(parts[:depth])}" is a list, so "{part}" '
                    f"must be an index"
                )
            index = int(part)
            if index >= len(node):
                raise ConfigOptionError(
                    f'Option "{full_key}": index {index} is out of range for '
                    f'"{".".join(parts[:depth])}" (a list of {len(node)} items)'
                )
            if last:
                if _merges_into(value, node[index]):
                    value = merge_dicts(value, node[index], allow_list_keys, here)
                node[index] = _to_config_dicts(_to_plain(_strip_delete_keys(value)))
                return
            node = node[index]
        else:
            parent = ".".join(parts[:depth])
            raise ConfigOptionError(
                f'Option "{full_key}": cannot set "{here}" because "{parent}" is a '
                f"{type(node).__name__} ({node!r}), not a dict"
                + (" or list" if allow_list_keys else "")
                + f'; set "{parent}" as a whole instead'
            )


# ----------------------------------------------------------------------------------------------
# --cfg-options


class _OptionValueParser:
    """Parse a ``--cfg-options`` value: scalars, ``a,b`` lists, ``[..]`` lists, ``(..)`` tuples.

    No eval: scalars become int, float, bool (``true``/``false`` in any case), None
    (``None``/``none``) or str. Text in matching quotes is a str as written.
    """

    _CLOSERS = {"[": "]", "(": ")"}

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> Any:
        if self.text.strip() == "":
            return ""
        items, had_comma = self._sequence(closer=None)
        return items[0] if len(items) == 1 and not had_comma else items

    def _fail(self, message: str) -> ValueError:
        return ValueError(f"{message} at position {self.pos} of {self.text!r}")

    def _skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _peek(self) -> str | None:
        return self.text[self.pos] if self.pos < len(self.text) else None

    def _sequence(self, closer: str | None) -> tuple[list, bool]:
        items: list = []
        had_comma = False
        while True:
            self._skip_spaces()
            char = self._peek()
            if char is None:
                if closer:
                    raise self._fail(f'missing closing "{closer}"')
                if had_comma and not items:
                    raise self._fail("empty element")
                return items, had_comma
            if closer and char == closer:
                return items, had_comma
            items.append(self._item())
            self._skip_spaces()
            char = self._peek()
            if char == ",":
                self.pos += 1
                had_comma = True
            elif char is None or char == closer:
                continue
            else:
                raise self._fail(f'unexpected "{char}"')

    def _item(self) -> Any:
        char = self._peek()
        if char in self._CLOSERS:
            self.pos += 1
            closer = self._CLOSERS[char]
            items, _ = self._sequence(closer)
            self.pos += 1  # the closer
            return items if char == "[" else tuple(items)
        if char in ("]", ")"):
            raise self._fail(f'unmatched "{char}"')
        if char in ('"', "'"):
            end = self.text.find(char, self.pos + 1)
            if end < 0:
                raise self._fail(f"missing closing quote {char}")
            value = self.text[self.pos + 1 : end]
            self.pos = end + 1
            return value
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in ",[]()":
            self.pos += 1
        atom = self.text[start : self.pos].strip()
        if atom == "":
            raise self._fail("empty element")
        if self._peek() in ("[", "("):
            raise self._fail(f'unexpected "{self._peek()}" after "{atom}"')
        return _parse_scalar(atom)


def _parse_scalar(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text in ("None", "none"):
        return None
    return text


class DictAction(argparse.Action):
    """argparse action that collects ``KEY=VALUE`` items into a dict (``--cfg-options``).

    Values are parsed without eval: ``1`` → int, ``0.1``/``1e-3`` → float, ``true``/``False``
    → bool, ``None``/``none`` → None, ``a,b,c`` → list, ``[(1,2),[a,b],c]`` → nested lists and
    tuples, anything else → str. Repeating the option adds to the same dict.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> _ = parser.add_argument('--cfg-options', nargs='+', action=DictAction)
        >>> parser.parse_args(['--cfg-options', 'model.depth=50', 'lr=[0.1,0.01]']).cfg_options
        {'model.depth': 50, 'lr': [0.1, 0.01]}
    """

    @staticmethod
    def _parse_iterable(val: str) -> Any:
        """Parse one option value (mmcv's name); raises ValueError on malformed brackets."""
        return _OptionValueParser(val).parse()

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        """Parse ``values`` (``KEY=VALUE`` strings) into the namespace's dict."""
        current = getattr(namespace, self.dest, None)
        options = dict(current) if isinstance(current, dict) else {}
        for item in [values] if isinstance(values, str) else values:
            key, sep, raw = item.partition("=")
            key = key.strip()
            if not sep:
                raise argparse.ArgumentError(self, f'"{item}" is not of the form KEY=VALUE')
            if not key or any(part == "" for part in key.split(".")):
                raise argparse.ArgumentError(
                    self, f'"{item}" has a malformed key "{key}"; use dotted names like a.b.c'
                )
            try:
                options[key] = self._parse_iterable(raw)
            except ValueError as err:
                raise argparse.ArgumentError(self, f'"{item}": {err}') from err
        setattr(namespace, self.dest, options)
