"""Report the kind of every listed mmcv name as ``import mmcv`` served by mmpar sees it.

Run as a script (``python names_probe.py NAMES_JSON``) by ``test_public_names.py``: the zero-edit
mode is switched on in a fresh process, as a project's would be, and each ``mmcv.X`` module is
imported by its mmcv dotted path. Prints one JSON object: ``{module: {name: kind}}`` where kind is
``class``, ``callable``, ``dict``, ``module``, ``value``, ``missing``, or
``import error: <message>`` for a module that does not import.
"""

from __future__ import annotations

import importlib
import json
import sys
import types
import warnings


def kind_of(obj: object) -> str:
    """The kind of a live object, in the vocabulary of ``scripts/mmcv_names.py``."""
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, type):
        return "class"
    if isinstance(obj, dict):
        return "dict"
    if callable(obj):
        return "callable"
    return "value"


def probe(modules: dict[str, dict[str, str]]) -> dict[str, dict[str, str] | str]:
    """Import each mmcv module through the alias and classify each of its listed names."""
    import mmpar.as_mmcv  # noqa: F401  (switches the zero-edit mode on)

    found: dict[str, dict[str, str] | str] = {}
    for module_name, names in modules.items():
        try:
            module = importlib.import_module(module_name)
        except Exception as err:  # noqa: BLE001  (any failure is the finding)
            found[module_name] = f"import error: {type(err).__name__}: {err}"
            continue
        kinds = {}
        for name in names:
            try:
                obj = getattr(module, name)
            except Exception:  # noqa: BLE001  (AttributeError, or a not-provided ImportError)
                kinds[name] = "missing"
                continue
            kinds[name] = kind_of(obj)
        found[module_name] = kinds
    return found


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print(json.dumps(probe(data["modules"])))
