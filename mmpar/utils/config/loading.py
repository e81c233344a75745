"""Reading config files: parsing .py/.json/.yaml, predefined variables and ``_base_`` inheritance.

A file's ``_base_`` files are loaded first and merged under it (:func:`merge_dicts`; a dict
with ``_delete_=True`` replaces instead of merging); ``{{ _base_.a.b }}`` in the text refers
to a value of the base files, and ``{{ fileDirname }}``-style variables to facts about the file.
The ``custom_imports`` of a loaded config are imported by :func:`_import_custom`.
"""

from __future__ import annotations

import copy
import json
import os.path as osp
import re
import types
import uuid
import warnings
from typing import Any

from ..plugins import import_modules_from_strings
from .errors import (
    ConfigEncodingError,
    ConfigError,
    ConfigKeyError,
    ConfigOSError,
    ConfigSyntaxError,
    ConfigTypeError,
    config_code_error,
)

BASE_KEY = "_base_"
DELETE_KEY = "_delete_"
DEPRECATION_KEY = "_deprecation_"
SUPPORTED_FORMATS = (".py", ".json", ".yaml", ".yml")


def _check_format(path: str, what: str = "Config file", error: type = ConfigOSError) -> str:
    """Return the extension of ``path``; raise ``error`` (mmcv: OSError) if it is unsupported."""
    ext = osp.splitext(path)[1].lower()
    if ext not in SUPPORTED_FORMATS:
        raise error(
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
            raise ConfigKeyError(
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


# mmcv 1.x's message starts so; scripts that match on it keep working.
SYNTAX_ERROR_PREFIX = "There are syntax errors in config file"


def _exec_python(text: str, path: str) -> dict:
    """Run a .py config and collect its public data globals (no modules/functions/classes)."""
    try:
        code = compile(text, path, "exec")
    except SyntaxError as err:
        raise ConfigSyntaxError(
            f"{SYNTAX_ERROR_PREFIX} {path}, line {err.lineno}: invalid Python: {err.msg}",
            (path, err.lineno, err.offset, err.text),
        ) from err
    namespace: dict[str, Any] = {"__file__": path, "__name__": "__mmpar_config__"}
    try:
        exec(code, namespace)  # Config files are trusted code, like mmcv's.
    except Exception as err:
        raise config_code_error(err, path, _raising_line(err, path)) from err
    skip = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
    return {
        name: value
        for name, value in namespace.items()
        if (name in (BASE_KEY, DEPRECATION_KEY) or not name.startswith("_"))
        and not isinstance(value, skip)
    }


def _raising_line(err: BaseException, path: str) -> int | None:
    """The line of config ``path`` that ``err`` came through last (None if none did)."""
    lineno = None
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    return lineno


def _parse_text(text: str, ext: str, path: str) -> dict:
    """Parse config ``text`` of format ``ext``; ``path`` is used in messages."""
    if ext == ".py":
        return _exec_python(text, path)
    if ext == ".json":
        try:
            data = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as err:
            raise ConfigSyntaxError(
                f"{SYNTAX_ERROR_PREFIX} {path}, line {err.lineno}: invalid JSON: {err.msg}",
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
                f"{SYNTAX_ERROR_PREFIX} {path}, line {line}: invalid YAML: {err}",
                (path, line, None, None),
            ) from err
        if data is None:
            data = {}
    if not isinstance(data, dict):
        raise ConfigTypeError(
            f"{path}: a config file must hold a mapping at top level, got {type(data).__name__}"
        )
    return data


def _warn_deprecated(info: Any, path: str) -> None:
    """Warn (``DeprecationWarning``) that the config ``path`` is deprecated, as mmcv does.

    Args:
        info: The file's ``_deprecation_`` dict: optional ``expected`` (the config to use
            instead) and ``reference`` (where to read more).
        path: The config file.
    """
    if not isinstance(info, dict):
        raise ConfigTypeError(
            f"{path}: {DEPRECATION_KEY} must be dict(expected=..., reference=...), got {info!r}"
        )
    unknown = sorted(set(info) - {"expected", "reference"})
    if unknown:
        raise ConfigKeyError(
            f"{path}: unknown {DEPRECATION_KEY} keys {unknown}; use expected and/or reference"
        )
    message = f"The config file {path} is deprecated and will be removed in the future."
    if "expected" in info:
        message += f" Please use {info['expected']} instead."
    if "reference" in info:
        message += f" More information can be found at {info['reference']}"
    warnings.warn(message, DeprecationWarning, stacklevel=2)


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
        ConfigTypeError: A dict in ``a`` meets a non-dict in ``b`` without ``_delete_``, or a
            non-index key meets a list.
        ConfigKeyError: A list index is out of range.
    """
    result = list(b) if isinstance(b, list) else dict(b)
    for key, value in a.items():
        where = f"{_path}.{key}" if _path else str(key)
        if isinstance(result, list):
            if not (isinstance(key, str) and key.isdigit()):
                raise ConfigTypeError(
                    f'"{where}": the base value is a list, so "{key}" must be an index'
                )
            index = int(key)
            if index >= len(result):
                raise ConfigKeyError(
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
                    raise ConfigTypeError(
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


def read_config_text(path: str) -> str:
    """The text of config file ``path``, decoded as UTF-8.

    Raises:
        ConfigEncodingError: The file is not valid UTF-8 (names the file and the byte).
    """
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigEncodingError(path, err) from None


def _load_file(path: str, use_predefined_variables: bool, chain: tuple[str, ...]) -> tuple:
    """Load ``path`` and its ``_base_`` files; return ``(plain dict, text)``."""
    ext = _check_format(path)
    if path in chain:
        loop = " -> ".join(list(chain[chain.index(path) :]) + [path])
        raise ConfigError(f"_base_ loop: {loop}; a config cannot include itself")
    text = read_config_text(path)
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
    if DEPRECATION_KEY in cfg:
        _warn_deprecated(cfg.pop(DEPRECATION_KEY), path)

    base_cfg: dict = {}
    base_texts: list[str] = []
    base_files: list[str] = []
    bases = cfg.pop(BASE_KEY, [])
    if isinstance(bases, str):
        bases = [bases]
    if not isinstance(bases, (list, tuple)) or not all(isinstance(b, str) for b in bases):
        raise ConfigTypeError(
            f"{path}: {BASE_KEY} must be a path or a list of paths, got {bases!r}"
        )
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
                raise ConfigKeyError(
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


def _import_custom(cfg_dict: dict, source: str) -> None:
    """Import the modules listed in ``cfg_dict['custom_imports']``; ``source`` names the config."""
    spec = cfg_dict.get("custom_imports")
    if not spec:
        return
    if not isinstance(spec, dict) or "imports" not in spec:
        raise ConfigTypeError(
            f"{source}: custom_imports must be dict(imports=[...], allow_failed_imports=False), "
            f"got {spec!r}"
        )
    unknown = set(spec) - {"imports", "allow_failed_imports"}
    if unknown:
        raise ConfigTypeError(f"{source}: unknown custom_imports keys {sorted(unknown)}")
    import_modules_from_strings(
        spec["imports"], spec.get("allow_failed_imports", False), source=source
    )
