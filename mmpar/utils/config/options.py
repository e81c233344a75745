"""``--cfg-options``: parsing ``KEY=VALUE`` items (:class:`DictAction`) and applying them.

Values are parsed without eval (:class:`_OptionValueParser`); dotted keys are set into a copy
of the config by :func:`_apply_options`, which ``Config.merge_from_dict`` uses. A dotted path
through a missing key that looks like a typo is refused (:func:`_check_new_key`).
"""

from __future__ import annotations

import argparse
import copy
import difflib
import warnings
from typing import Any

from .config_dict import ConfigDict, _to_config_dicts
from .errors import ConfigOptionError, ConfigOptionKeyError, ConfigOptionTypeError
from .loading import DELETE_KEY, _import_custom, _strip_delete_keys, merge_dicts


def _merges_into(value: Any, target: Any, allow_list_keys: bool) -> bool:
    """Whether option ``value`` merges into ``target`` rather than replacing it.

    A dict merges into a dict, and (with ``allow_list_keys``, as in mmcv) a dict of indices
    into a list: ``pipeline={'0': dict(type='X')}``. ``_delete_=True`` replaces instead.
    """
    mergeable = (dict, list) if allow_list_keys else dict
    return isinstance(value, dict) and isinstance(target, mergeable) and not value.get(DELETE_KEY)


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


def _edit_distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap two neighbours) that turn ``a`` into ``b``."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


def _typo_of(part: str, siblings: list[str]) -> list[str]:
    """Siblings a new last key is most likely a typo of: one edit away.

    New keys that add a word to an existing one (``val_samples_per_gpu`` next to
    ``samples_per_gpu``) or change one (``save_last`` next to ``save_best``) are legitimate,
    so similarity ratios are not used here; typos that this misses are named by the
    unread-key warning of ``tools/train.py`` (:mod:`.key_reads`).
    """
    # Among short keys (``a``/``b``, ``lr``/``lt``, ``w``/``h``) one edit is a different word,
    # not a typo: mmcv 1.7.2's own tests add ``item2.b`` beside ``item2.a``.
    return [s for s in siblings if min(len(part), len(s)) >= 4 and _edit_distance(part, s) <= 1][:3]


def _check_new_key(node: dict, full_key: str, parts: list[str], depth: int) -> None:
    """Refuse to create the missing key ``parts[depth]`` when it is most likely a typo.

    Options may add new keys (``fp16.loss_scale=512`` creates ``fp16``), but a path that
    indexes into the missing key as if it were a list (``data.trian.pipeline.0.type``), or
    whose missing key is a near miss of an existing one (``data.trian`` vs ``train``,
    ``data.samples_per_gppu`` vs ``samples_per_gpu``), would silently create a key nobody
    reads. The last key of the path counts as a near miss only within one edit (insert,
    delete, replace, swap of neighbours): new leaves such as ``save_last`` beside
    ``save_best`` or ``val_samples_per_gpu`` beside ``samples_per_gpu`` are common. Setting
    the parent as a dict (``data={samples_per_gppu:16}``) adds a key without this check.

    Raises:
        ConfigOptionKeyError: Naming the missing key, its parent's keys and close matches.
    """
    part = parts[depth]
    siblings = [str(k) for k in node]
    last = depth == len(parts) - 1
    if last:
        close = _typo_of(part, siblings)
    else:
        close = difflib.get_close_matches(part, siblings, n=3, cutoff=0.8)
        # difflib rates a swap of two neighbouring letters low (``tset`` vs ``test``: 0.75).
        close += [s for s in siblings if s not in close and _swaps_two_neighbours(part, s)]
    indexes_a_list = any(p.isdigit() for p in parts[depth + 1 :])
    if not close and not indexes_a_list:
        return
    parent = ".".join(parts[:depth]) or "the config"
    if close:
        hint = f" Did you mean: {', '.join(close)}?"
        if last and depth:
            hint += f" (To add it anyway, set the parent as a dict: {parent}={{{part}:...}})"
    else:
        hint = " A list index cannot follow a key that does not exist."
    raise ConfigOptionKeyError(
        f'Option "{full_key}": "{".".join(parts[: depth + 1])}" does not exist ({parent} has '
        f"keys {', '.join(siblings) or 'none'}).{hint}"
    )


def _new_paths(value: dict, current: dict, prefix: str) -> list[str]:
    """Dotted paths of the keys merging dict ``value`` into dict ``current`` creates."""
    paths = []
    for key, item in value.items():
        if key == DELETE_KEY:
            continue
        if key not in current:
            paths.append(f"{prefix}.{key}")
        elif isinstance(item, dict) and isinstance(current[key], dict):
            paths.extend(_new_paths(item, current[key], f"{prefix}.{key}"))
    return paths


def _set_dotted(
    cfg: ConfigDict,
    full_key: Any,
    value: Any,
    allow_list_keys: bool,
    added: list[str] | None = None,
) -> None:
    """Set ``cfg[a][b][c] = value`` for ``full_key='a.b.c'`` (see ``merge_from_dict``).

    The dotted path of the first key the option creates is appended to ``added``.
    """
    if not isinstance(full_key, str):
        raise ConfigOptionTypeError(f"Option key {full_key!r} must be a str")
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
            key: Any = part
            if part not in node:
                _check_new_key(node, full_key, parts, depth)
                if added is not None:
                    added.append(here)
                    added = None  # the keys below a new key are new too: name it alone
                if not last:
                    node[part] = ConfigDict()
        elif isinstance(node, list) and allow_list_keys:
            if not part.isdigit():
                raise ConfigOptionTypeError(
                    f'Option "{full_key}": "{".".join(parts[:depth])}" is a list, so "{part}" '
                    f"must be an index"
                )
            key = int(part)
            if key == len(node):  # one past the end appends: log_config.hooks.1.type=X
                node.append(ConfigDict() if not last else None)
            elif key > len(node):
                parent = ".".join(parts[:depth])
                raise ConfigOptionKeyError(
                    f'Option "{full_key}": index {key} is out of range for "{parent}" (a list '
                    f"of {len(node)} items; index {len(node)} adds an item). Or set the whole "
                    f'list: "{parent}=[{{type:A}},{{type:B}}]"'
                )
        else:
            parent = ".".join(parts[:depth])
            raise ConfigOptionTypeError(
                f'Option "{full_key}": cannot set "{here}" because "{parent}" is a '
                f"{type(node).__name__} ({node!r}), not a dict"
                + (" or list" if allow_list_keys else "")
                + f'; set "{parent}" as a whole instead'
            )
        if last:
            current = node.get(key) if isinstance(node, dict) else node[key]
            if _merges_into(value, current, allow_list_keys):
                if added is not None and isinstance(current, dict):
                    added.extend(_new_paths(value, current, here))
                value = merge_dicts(value, current, allow_list_keys, here)
            node[key] = _to_config_dicts(_strip_delete_keys(value))
            return
        node = node[key]


def _apply_options(
    cfg: ConfigDict, options: dict, allow_list_keys: bool, added: list[str] | None = None
) -> ConfigDict:
    """Return a copy of ``cfg`` with the dotted-key ``options`` set (see ``merge_from_dict``).

    ``cfg`` is left unchanged, also when an option is refused. The dotted paths of the keys
    the options create are appended to ``added``.
    """
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict, but got {type(options).__name__}")
    cfg = copy.deepcopy(cfg)
    for full_key, value in _fold_dotted_deletes(options).items():
        _set_dotted(cfg, full_key, value, allow_list_keys, added)
    if any(key.split(".")[0] == "custom_imports" for key in options):
        # Options may add plugins (--cfg-options custom_imports.imports=[my_pkg.hooks]);
        # import them as loading a config file does. Modules already imported are no-ops.
        _import_custom(cfg, "--cfg-options")
    return cfg


def _fold_dotted_deletes(options: dict) -> dict:
    """Fold the options below a dotted ``P._delete_`` key into one dict option for ``P``.

    mmcv nests all dotted options into one dict before merging, so
    ``{'model.backbone._delete_': True, 'model.backbone.type': 'MiT'}`` replaces the backbone
    with ``{'type': 'MiT'}``, as the nested form ``model=dict(backbone=dict(_delete_=True, ...))``
    does. Options are otherwise set one by one (each key's typo check stays exact); only the
    ones under a ``_delete_`` are grouped, in the position of the first of them.
    """
    suffix = "." + DELETE_KEY
    prefixes = [k[: -len(suffix)] for k in options if isinstance(k, str) and k.endswith(suffix)]
    if not prefixes:
        return options
    outermost = [p for p in prefixes if not any(p.startswith(q + ".") for q in prefixes)]
    folded: dict = {}
    for key, value in options.items():
        owner = next((p for p in outermost if str(key).startswith(p + ".")), None)
        if owner is None:
            folded[key] = value
            continue
        node = folded.setdefault(owner, {})
        *path, leaf = key[len(owner) + 1 :].split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = value
    return folded


def add_args(
    parser: argparse.ArgumentParser, cfg: dict, prefix: str = ""
) -> argparse.ArgumentParser:
    """Add one ``--<prefix><key>`` option per value of ``cfg`` to ``parser`` (mmcv's helper).

    Nested dicts add dotted options (``--model.depth``). A str value adds a str option, an
    int/float one of that type, a bool a ``store_true`` flag, a non-empty list/tuple a
    ``nargs='+'`` option typed like its first item. Other values (None, empty lists, objects)
    get no option and a warning naming the key. Options have no default (None when absent).

    Args:
        parser: The parser to extend.
        cfg: The config (or one of its dicts).
        prefix: Prefix of the option names, e.g. ``'model.'``.

    Returns:
        ``parser``.
    """
    for key, value in cfg.items():
        option = f"--{prefix}{key}"
        if isinstance(value, bool):  # before int: a bool is an int
            parser.add_argument(option, action="store_true", default=None)
        elif isinstance(value, (str, int, float)):
            parser.add_argument(option, type=type(value))
        elif isinstance(value, dict):
            add_args(parser, value, f"{prefix}{key}.")
        elif isinstance(value, (list, tuple)) and value:
            item_type = type(value[0]) if isinstance(value[0], (str, int, float)) else str
            parser.add_argument(option, type=item_type, nargs="+")
        else:
            warnings.warn(
                f"add_args: no option for {prefix}{key} (a {type(value).__name__})", stacklevel=2
            )
    return parser


class _OptionValueParser:
    """Parse a ``--cfg-options`` value: scalars, ``a,b`` lists, ``[..]``, ``(..)``, dicts.

    No eval: scalars become int, float, bool (``true``/``false`` in any case), None
    (``None``) or str. Text in matching quotes is a str as written. Dicts are written
    ``{key:value, ...}`` or ``dict(key=value, ...)``, their values as any other value
    (``[{type:TextLoggerHook},{type:TensorboardLoggerHook}]``). Everything mmcv 1.x's
    ``DictAction`` reads parses to the same value (an empty element is ``''``, brackets
    inside a word belong to it: ``a[1]``), except quoted text, which stays a str, and
    a value starting with ``{``, which is a dict here.
    """

    _CLOSERS = {"[": "]", "(": ")", "{": "}"}

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

    def _expect(self, char: str) -> None:
        self._skip_spaces()
        if self._peek() != char:
            found = "the end" if self._peek() is None else f'"{self._peek()}"'
            raise self._fail(f'expected "{char}", found {found}')
        self.pos += 1

    def _sequence(self, closer: str | None) -> tuple[list, bool]:
        items: list = []
        had_comma = False
        while True:
            self._skip_spaces()
            char = self._peek()
            if char is None:
                if closer:
                    raise self._fail(f'missing closing "{closer}"')
                return items, had_comma
            if closer and char == closer:
                return items, had_comma
            # mmcv reads an empty element before a comma as '' (``a,,b`` -> ['a', '', 'b']).
            items.append("" if char == "," else self._item(stops=""))
            self._skip_spaces()
            char = self._peek()
            if char == ",":
                self.pos += 1
                had_comma = True
            elif char is None or char == closer:
                continue
            else:
                raise self._fail(f'unexpected "{char}"')

    def _item(self, stops: str) -> Any:
        """One value; ``stops``: characters that also end a word (``}`` inside a dict)."""
        char = self._peek()
        if char in ("[", "("):
            self.pos += 1
            closer = self._CLOSERS[char]
            items, _ = self._sequence(closer)
            self.pos += 1  # the closer
            return items if char == "[" else tuple(items)
        if char == "{":
            self.pos += 1
            return self._entries("}", ":")
        if char in ("]", ")", "}"):
            raise self._fail(f'unmatched "{char}"')
        if char in ('"', "'"):
            return self._quoted()
        atom = self._word(",])}" + stops)
        if atom == "":
            raise self._fail("empty element")
        if atom == "dict" and self._peek() == "(":
            self.pos += 1
            return self._entries(")", "=")
        return _parse_scalar(atom)

    def _quoted(self) -> str:
        quote = self.text[self.pos]
        end = self.text.find(quote, self.pos + 1)
        if end < 0:
            raise self._fail(f"missing closing quote {quote}")
        value = self.text[self.pos + 1 : end]
        self.pos = end + 1
        return value

    def _word(self, stops: str) -> str:
        """Text up to one of ``stops``; a bracket group inside a word is part of it (``a[1]``)."""
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in stops:
            char = self.text[self.pos]
            if char in "[(" and self.pos > start:
                if self.text[start : self.pos].strip() == "dict" and char == "(":
                    break  # dict(...): a dict, not a word
                self._skip_group()
                continue
            if char in "[(":
                break  # a bracket at the start of an item opens a list or tuple
            self.pos += 1
        return self.text[start : self.pos].strip()

    def _skip_group(self) -> None:
        """Move past a balanced ``[..]``/``(..)`` group that belongs to a word."""
        depth = 0
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char in "[(":
                depth += 1
            elif char in "])":
                depth -= 1
                if depth == 0:
                    return
        raise self._fail("missing closing bracket")

    def _entries(self, closer: str, separator: str) -> dict:
        """The ``key<separator>value`` pairs of a dict up to ``closer`` (already opened)."""
        result: dict = {}
        while True:
            self._skip_spaces()
            char = self._peek()
            if char is None:
                raise self._fail(f'missing closing "{closer}"')
            if char == closer:
                self.pos += 1
                return result
            key = self._quoted() if char in ('"', "'") else self._word(separator + ",)}]")
            if key == "":
                raise self._fail("empty dict key")
            self._expect(separator)
            self._skip_spaces()
            result[key] = self._item(stops=closer)
            self._skip_spaces()
            char = self._peek()
            if char == ",":
                self.pos += 1
            elif char != closer:
                found = "the end" if char is None else f'"{char}"'
                raise self._fail(f'expected "," or "{closer}", found {found}')


def _parse_scalar(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text == "None":  # only this spelling, as mmcv: `reduction=none` is the string 'none'
        return None
    return text


class DictAction(argparse.Action):
    """argparse action that collects ``KEY=VALUE`` items into a dict (``--cfg-options``).

    Values are parsed without eval: ``1`` → int, ``0.1``/``1e-3`` → float, ``true``/``False``
    → bool, ``None`` → None (``none`` stays a str, as in mmcv), ``a,b,c`` → list,
    ``[(1,2),[a,b],c]`` → nested lists and tuples, ``{type:A,n:1}`` or ``dict(type=A,n=1)``
    → dict (also inside lists), anything else → str.
    Repeating the option adds to the same dict.

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
