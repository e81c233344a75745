"""Writing a config as text: readable Python source (``pretty_text``), JSON or YAML (``dump``).

The Python form is mmcv's style (``dict(type='Net', depth=18)``), wrapped at 100 columns, and
evaluates back to the same content; values with no literal form are reported, not guessed.
"""

from __future__ import annotations

import json
import keyword
import math
import sys
from typing import Any

from .errors import ConfigTypeError

_LINE_WIDTH = 100


def _is_identifier(key: Any) -> bool:
    return isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key)


def _scalar_source(value: Any) -> str | None:
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "-float('inf')"
        return repr(value)
    # range: mmcv-based tools set ``cfg.gpu_ids = range(world_size)`` before dumping the config
    if value is None or isinstance(value, (bool, int, complex, str, bytes, range)):
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
    """Return ``cfg`` as Python assignments, and the values that have no literal form."""
    writer = _PySourceWriter()
    lines = []
    for key, value in cfg.items():
        if not _is_identifier(key):
            writer.problems.append(f"{key!r} (not a Python identifier)")
            continue
        lines.append(f"{key} = {writer.block(value, 0, key, len(key) + 3)}")
    return "\n".join(lines) + ("\n" if lines else ""), writer.problems


def _json_default(obj: Any) -> Any:
    """``json``'s ``default=`` for config values: sets and ranges as lists, NumPy as numbers."""
    if isinstance(obj, (set, frozenset, range)):
        return list(obj)
    np = sys.modules.get("numpy")  # a NumPy value can only exist if NumPy is imported
    if np is not None and isinstance(obj, (np.ndarray, np.generic)):
        return obj.tolist()
    raise TypeError(f"{type(obj).__qualname__} is not JSON serializable")


def _dump_text(cfg: dict, ext: str, target: str) -> str:
    """Render ``cfg`` in the format of extension ``ext``; ``target`` names the output in errors.

    Raises:
        ConfigTypeError: A value the format cannot represent (a ``TypeError``, like json's).
    """
    if ext == ".py":
        text, problems = _python_source(cfg)
        if problems:
            raise ConfigTypeError(
                f"Cannot dump the config to Python ({target}): no literal form for "
                f"{', '.join(problems)}"
            )
        return text
    try:
        if ext == ".json":
            # What mmcv.dump writes: one line, sets/ranges/NumPy values as plain JSON.
            return json.dumps(cfg, default=_json_default)
        import yaml

        return yaml.safe_dump(cfg, sort_keys=False, default_flow_style=False)
    except Exception as err:  # json TypeError / yaml RepresenterError
        raise ConfigTypeError(
            f"Cannot dump the config to {ext[1:].upper()} ({target}): {err}"
        ) from err
