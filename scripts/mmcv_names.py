"""Write every public module-level name of mmcv 1.7.2, with its kind, as test data.

Reads mmcv's pure-Python source with :mod:`ast` (nothing of mmcv is imported or run) and writes
``tests/test_mmcv_compat/mmcv_1_7_2_names.json``: for every module of the ``mmcv`` package, each
public module-level name (functions, classes, constants, module-level dicts and registries,
and the names the module imports from mmcv's own modules, since code does
``from mmcv.x.y import z`` for all of them) with its kind, plus the parameter lists of the
functions and classes a module defines. ``tests/test_mmcv_compat/test_public_names.py`` checks
the names against mmpar.

Get the source with either of::

    pip download --no-deps --no-binary :all: mmcv==1.7.2      # mmcv-1.7.2.tar.gz
    # or the same file from https://pypi.org/project/mmcv/1.7.2/#files

then::

    python scripts/mmcv_names.py mmcv-1.7.2.tar.gz            # or an unpacked folder
    python scripts/mmcv_names.py                              # default: /work/src/mmcv-1.7.2

Rules (where static reading has to decide):

- Public: no leading underscore, or listed in the module's ``__all__``.
- Kinds: ``class``, ``callable`` (function, lambda, ``partial``), ``dict`` (a dict display or
  ``dict()``/``OrderedDict()``/``defaultdict()`` call), ``module``, ``value`` (any other
  literal or expression that is none of those), ``any`` (the value of a call or attribute that
  static reading cannot classify: the test then only checks that the name exists).
- A module-level ``if``: its body counts, its ``else`` does not (mmcv's fallbacks for old torch
  or parrots); ``try``: the body counts, the ``except`` fallbacks do not.
- Names a module imports from third-party libraries (``torch``, ``numpy``, ``yapf``...) are
  those libraries' names, not mmcv's: they are left out (the migration guide says so).
- ``mmcv.device.ipu``'s submodules import poptorch at the top (they do not import without an
  IPU stack): only the package is listed, as mmcv users see it.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tarfile
import tempfile
from pathlib import Path

DEFAULT_SOURCE = Path("/work/src/mmcv-1.7.2")
OUTPUT = (
    Path(__file__).resolve().parents[1] / "tests" / "test_mmcv_compat" / "mmcv_1_7_2_names.json"
)
SKIPPED_PACKAGES = ("mmcv.device.ipu.",)  # submodules need poptorch to import (docstring)
DICT_FACTORIES = {"dict", "OrderedDict", "defaultdict"}
CALLABLE_FACTORIES = {"partial"}
CLASS_FACTORIES = {"namedtuple", "NamedTuple", "TypeVar"}
# Private modules that released projects import all the same.
PUBLIC_PRIVATE_MODULES = {"mmcv.parallel._functions"}


class ModuleInfo:
    """What one module binds at its top level, before imports are resolved."""

    def __init__(self, name: str, is_package: bool, tree: ast.Module):
        self.name = name
        self.is_package = is_package
        self.tree = tree
        self.all: list[str] | None = None
        # name -> ("kind", kind) | ("alias", local name) | ("from", module, name)
        #       | ("module", dotted name)
        self.bindings: dict[str, tuple] = {}
        self.star_imports: list[str] = []
        self.signatures: dict[str, dict] = {}


def _statements(body: list[ast.stmt]):
    """Yield module-level statements, entering ``if`` and ``try`` bodies (not their fallbacks)."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _statements(node.body)
        elif isinstance(node, ast.Try):
            yield from _statements(node.body)
            yield from _statements(node.orelse)
        elif isinstance(node, (ast.With,)):
            yield from _statements(node.body)
        else:
            yield node


def _call_name(node: ast.AST) -> str:
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _value_binding(value: ast.AST) -> tuple:
    """Classify the right-hand side of a module-level assignment."""
    if isinstance(value, (ast.Dict, ast.DictComp)):
        return ("kind", "dict")
    if isinstance(value, ast.Lambda):
        return ("kind", "callable")
    if isinstance(value, ast.Name):
        return ("alias", value.id)
    if isinstance(value, ast.Call):
        name = _call_name(value)
        if name in DICT_FACTORIES:
            return ("kind", "dict")
        if name in CALLABLE_FACTORIES:
            return ("kind", "callable")
        if name in CLASS_FACTORIES:
            return ("kind", "class")
        return ("kind", "any")
    if isinstance(value, (ast.Attribute, ast.Subscript, ast.IfExp, ast.BoolOp)):
        return ("kind", "any")
    return ("kind", "value")


def _parameters(args: ast.arguments, drop_first: bool) -> dict:
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if drop_first and positional:
        positional = positional[1:]
    return {"positional": positional, "keyword_only": [a.arg for a in args.kwonlyargs]}


def _class_signature(node: ast.ClassDef) -> dict | None:
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            return _parameters(item.args, drop_first=True)
    return None  # inherited: the parameters are the base class's


def _resolve_relative(module: ModuleInfo, level: int, target: str | None) -> str:
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{target}" if target else package


def read_module(info: ModuleInfo) -> None:
    """Fill ``info.bindings``, ``info.all``, ``info.star_imports`` and ``info.signatures``."""
    for node in _statements(info.tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            info.bindings[node.name] = ("kind", "callable")
            info.signatures[node.name] = _parameters(node.args, drop_first=False)
        elif isinstance(node, ast.ClassDef):
            info.bindings[node.name] = ("kind", "class")
            signature = _class_signature(node)
            if signature is not None:
                info.signatures[node.name] = signature
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            for target in targets:
                if isinstance(target, ast.Name):
                    if target.id == "__all__" and value is not None:
                        info.all = [ast.literal_eval(e) for e in value.elts]
                    elif value is not None:
                        info.bindings[target.id] = _value_binding(value)
                elif isinstance(target, ast.Tuple):
                    for element in target.elts:
                        if isinstance(element, ast.Name):
                            info.bindings[element.id] = ("kind", "any")
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            if node.target.id == "__all__":
                extra = node.value
                if isinstance(extra, (ast.List, ast.Tuple)) and info.all is not None:
                    info.all += [ast.literal_eval(e) for e in extra.elts]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if not alias.name.startswith("mmcv"):
                    continue
                if alias.asname:
                    info.bindings[alias.asname] = ("module", alias.name)
                else:
                    info.bindings.setdefault("mmcv", ("module", "mmcv"))
        elif isinstance(node, ast.ImportFrom):
            source = _resolve_relative(info, node.level, node.module) if node.level else node.module
            if not source or not (source == "mmcv" or source.startswith("mmcv.")):
                continue  # a third-party library's names (module docstring)
            for alias in node.names:
                if alias.name == "*":
                    info.star_imports.append(source)
                else:
                    info.bindings[alias.asname or alias.name] = ("from", source, alias.name)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    info.bindings.pop(target.id, None)


class Resolver:
    """Resolve imports and aliases across modules to the kind of each name."""

    def __init__(self, modules: dict[str, ModuleInfo]):
        self.modules = modules
        self._names: dict[str, dict[str, tuple]] = {}

    def names(self, module: str) -> dict[str, tuple]:
        """Every binding of ``module`` with star imports expanded (name -> binding)."""
        if module in self._names:
            return self._names[module]
        self._names[module] = {}  # cycle guard
        info = self.modules[module]
        merged: dict[str, tuple] = {}
        for source in info.star_imports:
            if source in self.modules:
                for name in self.exported(source):
                    merged[name] = ("from", source, name)
        merged.update(info.bindings)
        self._names[module] = merged
        return merged

    def exported(self, module: str) -> list[str]:
        """What ``from module import *`` binds."""
        info = self.modules[module]
        if info.all is not None:
            return list(info.all)
        return [n for n in self.names(module) if not n.startswith("_")]

    def kind(self, module: str, name: str, depth: int = 0) -> str:
        """The kind of ``module.name`` (``any`` when it cannot be told)."""
        if depth > 20:
            return "any"
        binding = self.names(module).get(name)
        if binding is None:
            submodule = f"{module}.{name}"
            return "module" if submodule in self.modules else "any"
        tag = binding[0]
        if tag == "kind":
            return binding[1]
        if tag == "module":
            return "module"
        if tag == "alias":
            return self.kind(module, binding[1], depth + 1)
        _, source, target = binding
        if f"{source}.{target}" in self.modules and target not in self.names(source):
            return "module"  # `from . import submodule`
        if source not in self.modules:
            return "any"
        return self.kind(source, target, depth + 1)

    def public(self, module: str) -> dict[str, str]:
        """Public module-level names of ``module`` with their kinds."""
        info = self.modules[module]
        listed = set(info.all or ())
        names = set(self.names(module)) | listed
        return {
            n: self.kind(module, n)
            for n in sorted(names)
            if (not n.startswith("_") or n in listed) and n != "mmcv"
        }


def _source_root(source: Path, workdir: str) -> Path:
    """The folder holding the ``mmcv`` package, from an sdist or an unpacked tree."""
    if source.is_file():
        with tarfile.open(source) as archive:
            archive.extractall(workdir, filter="data")
        source = Path(workdir)
    found = sorted(source.rglob("mmcv/__init__.py"), key=lambda p: len(p.parts))
    if not found:
        raise FileNotFoundError(f"no mmcv/__init__.py under {source}: pass mmcv's sdist or folder")
    return found[0].parent.parent


def collect(root: Path) -> dict:
    """Read every module under ``root / 'mmcv'``; return the data written to the JSON file."""
    modules: dict[str, ModuleInfo] = {}
    for path in sorted((root / "mmcv").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        if name.startswith(SKIPPED_PACKAGES) or any(p.startswith("_") for p in parts[:-1]):
            continue
        if not is_package and parts[-1].startswith("_") and name not in PUBLIC_PRIVATE_MODULES:
            continue
        info = ModuleInfo(name, is_package, ast.parse(path.read_text(), str(path)))
        read_module(info)
        modules[name] = info
    resolver = Resolver(modules)
    names = {m: resolver.public(m) for m in sorted(modules)}
    signatures = {
        f"{m}.{n}": sig
        for m in sorted(modules)
        for n, sig in sorted(modules[m].signatures.items())
        if n in names[m]
    }
    return {
        "source": "mmcv 1.7.2 (PyPI sdist), read with scripts/mmcv_names.py",
        "modules": names,
        "signatures": signatures,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python scripts/mmcv_names.py [SDIST_OR_FOLDER] [-o OUTPUT]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    if not args.source.exists():
        parser.error(f"{args.source} does not exist: pass mmcv 1.7.2's sdist or its folder")
    with tempfile.TemporaryDirectory() as workdir:
        data = collect(_source_root(args.source, workdir))
    args.output.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    total = sum(len(v) for v in data["modules"].values())
    print(f"{len(data['modules'])} modules, {total} names -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
