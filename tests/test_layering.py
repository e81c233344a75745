"""Imports go one way: no module of mmpar imports a higher layer, not even lazily in a function.

The checker reads the sources with ``ast`` (nothing is imported), so an import inside a function
body that runs rarely is caught as surely as one at the top of the file. Whether importing
``mmpar.utils`` stays free of torch is checked by ``tests/test_utils/test_misc.py``
(``test_import_is_light``).
"""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Layers, low to high, keyed by the first name below ``mmpar`` (a sub-package or a top-level
# module). A package or top-level module that is not listed here fails the test: add it at its
# layer, so a new package cannot escape the check.
LAYERS = {
    "version": 0,
    "_lazy_names": 0,  # the root's table of the names image/video/... serve, a literal
    "utils": 1,
    "fileio": 1,
    "image": 1,  # mmcv.image: numpy/OpenCV, uses utils and fileio
    "video": 1,  # mmcv.video: uses image (flow files) and arraymisc
    "arraymisc": 1,
    "parallel": 2,
    # mmcv.device's wrappers subclass parallel's and its scatter handles DataContainer, so the
    # package sits at parallel's layer, not with utils (nothing below needs get_device).
    "device": 2,
    "visualization": 2,  # draws with image, shows flow with video
    "runner": 3,
    "engine": 3,  # the test loops, beside the runner as in mmcv
    "cnn": 4,  # layers and model builders, on the runner's BaseModule and weight init
    "ops": 5,  # mmcv.ops: registers DCN/MMSyncBN in cnn's registries, as mmcv does
    "datasets": 6,
    "models": 6,  # models may use the runner layer (mmcv's BaseModule lives in mmcv.runner)
    "apis": 7,
    "cli": 8,
    "as_mmcv": 8,
}
# Packages of one layer that must still not know each other.
FORBIDDEN_SAME_LAYER = {frozenset({"datasets", "models"})}
# ``mmpar/__init__.py`` re-exports names from anything below ``apis``; a module that imports the
# package root itself (``import mmpar``, ``from mmpar import Config``) therefore depends on that
# layer.
ROOT_LAYER = LAYERS["apis"] - 1
ROOT = "<root>"


def _layer_label(part):
    if part == ROOT:
        return f"layer {ROOT_LAYER} (the package root mmpar/__init__.py, which re-exports up to it)"
    return f"layer {LAYERS[part]} ({part})"


def _module_names(package_dir, package):
    """Map every module's dotted name to its file, and list the dotted names of packages."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = [package, *path.relative_to(package_dir).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        modules[".".join(parts)] = (path, is_package)
    return modules


class _ImportCollector(ast.NodeVisitor):
    """Collect (line, dotted target, lazy?) for every import of ``package`` in one module."""

    def __init__(self, module, is_package, package, known_modules):
        self.package_of_module = module if is_package else module.rpartition(".")[0]
        self.package = package
        self.known = known_modules
        self.found = []
        self.type_only = set()  # lines of imports under ``if TYPE_CHECKING:`` (never run)
        self._function_depth = 0
        self._type_checking_depth = 0

    def _visit_function(self, node):
        self._function_depth += 1
        self.generic_visit(node)
        self._function_depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _visit_function

    def visit_If(self, node):
        test = node.test
        name = getattr(test, "id", None) or getattr(test, "attr", None)
        if name != "TYPE_CHECKING":
            self.generic_visit(node)
            return
        self._type_checking_depth += 1
        for child in node.body:
            self.visit(child)
        self._type_checking_depth -= 1
        for child in node.orelse:
            self.visit(child)

    def _add(self, node, target):
        found = (node.lineno, target, self._function_depth > 0)
        if self._type_checking_depth:
            self.type_only.add(node.lineno)
        if (target == self.package or target.startswith(self.package + ".")) and (
            found not in self.found
        ):
            self.found.append(found)

    def visit_Import(self, node):
        for alias in node.names:
            self._add(node, alias.name)

    def visit_ImportFrom(self, node):
        if node.level:
            base = self.package_of_module.split(".")
            base = base[: len(base) - (node.level - 1)]
            base = ".".join([*base, node.module] if node.module else base)
        else:
            base = node.module
        for alias in node.names:
            # ``from pkg import name`` imports the submodule ``pkg.name`` when there is one.
            submodule = f"{base}.{alias.name}"
            self._add(node, submodule if submodule in self.known else base)

    def visit_Call(self, node):
        # importlib.import_module("mmpar.x") / __import__("mmpar.x") with a literal name.
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name in ("import_module", "__import__") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                self._add(node, first.value)
        self.generic_visit(node)


def find_layering_violations(package_dir, package="mmpar"):
    """Return one message per import in ``package_dir`` that goes against the layer table.

    Args:
        package_dir (Path): The directory of the package (holding its ``__init__.py``).
        package (str): The package's import name.

    Returns:
        list[str]: Human-readable violations (file:line, what is imported, both layers).
    """
    modules = _module_names(package_dir, package)
    problems = []
    for module, (path, is_package) in modules.items():
        rel = path.relative_to(package_dir.parent)
        parts = module.split(".")
        source = parts[1] if len(parts) > 1 else ROOT
        if source != ROOT and source not in LAYERS:
            problems.append(
                f"{rel}: '{package}.{source}' is not in the layer table LAYERS of "
                f"tests/test_layering.py; add it there at its layer"
            )
            continue
        source_layer = ROOT_LAYER if source == ROOT else LAYERS[source]
        collector = _ImportCollector(module, is_package, package, modules)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for line, target, lazy in collector.found:
            target_parts = target.split(".")
            imported = target_parts[1] if len(target_parts) > 1 else ROOT
            where = f"{rel}:{line} imports {target}{' inside a function' if lazy else ''}"
            if imported == source:
                continue
            if imported != ROOT and imported not in LAYERS:
                problems.append(
                    f"{where}: '{package}.{imported}' is not in the layer table LAYERS of "
                    f"tests/test_layering.py; add it there at its layer"
                )
                continue
            imported_layer = ROOT_LAYER if imported == ROOT else LAYERS[imported]
            if imported_layer > source_layer:
                problems.append(
                    f"{where}: {_layer_label(imported)} is above {_layer_label(source)}"
                )
            elif frozenset({source, imported}) in FORBIDDEN_SAME_LAYER:
                problems.append(
                    f"{where}: {source} and {imported} share {_layer_label(source)} but must "
                    f"not import each other"
                )
    return problems


def test_no_module_imports_a_higher_layer():
    problems = find_layering_violations(REPO / "mmpar")
    assert not problems, "imports against the layering (table: LAYERS above):\n" + "\n".join(
        problems
    )


# The map of docs/internals.md: one row per layer, naming each package of mmpar/ at its layer.
MAP_PAGE = REPO / "docs" / "internals.md"


def top_level_names(package_dir):
    """The first names below the package: its sub-packages and top-level modules."""
    return {
        path.stem
        for path in package_dir.iterdir()
        if (path.is_dir() and (path / "__init__.py").is_file())
        or (path.suffix == ".py" and path.name != "__init__.py")
    }


def read_map(text):
    """``{name: [layer, ...]}`` for each ```mmpar/<name>/``` or ```mmpar/<name>.py``` in the map."""
    section = text.split("\n## The map\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].isdigit():
            continue
        for name in re.findall(r"`mmpar/(\w+)(?:/|\.py)`", cells[1]):
            rows.setdefault(name, []).append(int(cells[0]))
    return rows


def map_problems(rows, layers, names):
    """One message per package missing from the map, on another row than ``layers``, or extra."""
    problems = []
    for name in sorted(names):
        if name not in rows:
            problems.append(f"mmpar/{name} is missing from the map (LAYERS: layer {layers[name]})")
        elif rows[name] != [layers[name]]:
            problems.append(f"mmpar/{name} is on row {rows[name]}, LAYERS says {layers[name]}")
    problems += [
        f"the map lists mmpar/{name}, which does not exist" for name in rows.keys() - names
    ]
    return problems


def test_the_map_lists_every_package_at_its_layer():
    rows = read_map(MAP_PAGE.read_text(encoding="utf-8"))
    assert map_problems(rows, LAYERS, top_level_names(REPO / "mmpar")) == []


def test_map_checker_reports_a_missing_a_misplaced_and_an_extra_package():
    text = (
        "# Page\n\n## The map\n\n| layer | packages | files |\n|---|---|---|\n"
        "| 2 | `mmpar/runner/`, `tools/` | `mmpar/utils/` named in the third cell only |\n"
        "| 1 | `mmpar/utils/`, `mmpar/version.py`, `mmpar/gone/` | |\n\n## Next\n"
        "| 0 | `mmpar/parallel/` | a row of another section |\n"
    )
    rows = read_map(text)
    assert rows == {"runner": [2], "utils": [1], "version": [1], "gone": [1]}
    layers = {"version": 0, "utils": 1, "parallel": 2, "runner": 3}
    assert map_problems(rows, layers, set(layers)) == [
        "mmpar/parallel is missing from the map (LAYERS: layer 2)",
        "mmpar/runner is on row [2], LAYERS says 3",
        "mmpar/version is on row [1], LAYERS says 0",
        "the map lists mmpar/gone, which does not exist",
    ]


# Inside mmpar.runner: checkpoint files, resume state and model set-up sit below the loop and
# the hooks, which use them; none of their modules imports the loop or a hook.
RUNNER_BELOW_LOOP = ("checkpointing", "resume", "model_setup")
RUNNER_LOOP = (
    "base_runner",
    "epoch_based_runner",
    "iter_based_runner",
    "hook_registration",
    "builder",
    "hooks",
)


def find_runner_layering_violations(package_dir, package="mmpar"):
    """One message per import of the runner loop or a hook from a ``RUNNER_BELOW_LOOP`` package."""
    modules = _module_names(package_dir, package)
    problems = []
    for module, (path, is_package) in modules.items():
        parts = module.split(".")
        if parts[1:2] != ["runner"] or len(parts) < 3 or parts[2] not in RUNNER_BELOW_LOOP:
            continue
        collector = _ImportCollector(module, is_package, package, modules)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for line, target, lazy in collector.found:
            target_parts = target.split(".")
            if (
                target_parts[1:2] == ["runner"]
                and target_parts[2:3]
                and target_parts[2] in RUNNER_LOOP
            ):
                problems.append(
                    f"{path.relative_to(package_dir.parent)}:{line} imports {target}"
                    f"{' inside a function' if lazy else ''}: runner.{parts[2]} is below the "
                    "runner loop and its hooks"
                )
    return problems


def test_runner_checkpointing_resume_and_model_setup_stay_below_the_loop():
    for name in RUNNER_BELOW_LOOP:
        assert (REPO / "mmpar" / "runner" / name / "__init__.py").is_file(), name
    problems = find_runner_layering_violations(REPO / "mmpar")
    assert not problems, "\n".join(problems)


def find_checkpointing_escapes(package_dir, package="mmpar"):
    """One message per import of another part of ``mmpar.runner`` from ``runner.checkpointing``.

    The checkpoint files, from the format to what auto-resume picks, live in that one folder:
    nothing there reaches back into the runner (not even ``runner.checkpoint``, mmcv's path,
    which only re-exports it).
    """
    modules = _module_names(package_dir, package)
    problems = []
    for module, (path, is_package) in modules.items():
        if module.split(".")[1:3] != ["runner", "checkpointing"]:
            continue
        collector = _ImportCollector(module, is_package, package, modules)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        for line, target, lazy in collector.found:
            parts = target.split(".")
            if parts[1:2] == ["runner"] and parts[2:3] != ["checkpointing"]:
                problems.append(
                    f"{path.relative_to(package_dir.parent)}:{line} imports {target}"
                    f"{' inside a function' if lazy else ''}: runner.checkpointing imports no "
                    "other part of the runner"
                )
    return problems


def test_runner_checkpointing_is_one_folder():
    assert find_checkpointing_escapes(REPO / "mmpar") == []


# Pairs of modules known to import each other, each with its reason. A pair that no longer does
# fails the test, so the list stays true.
KNOWN_MUTUAL_IMPORTS = {
    # SparseModule's children are SparseConvolutions, which are SparseModules; the first import
    # is at module level, the other inside functions.
    frozenset({"mmpar.ops.sparse_conv", "mmpar.ops.sparse_modules"}),
}


def find_mutual_imports(package_dir, package="mmpar"):
    """Every pair of modules of ``package`` that import each other (lazy imports included).

    Imports under ``if TYPE_CHECKING:`` are left out: they never run, and a Protocol and the
    classes it describes naturally name each other in annotations.
    """
    modules = _module_names(package_dir, package)
    imports = {}
    for module, (path, is_package) in modules.items():
        collector = _ImportCollector(module, is_package, package, modules)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        imports[module] = {
            target
            for line, target, _ in collector.found
            if target != module and line not in collector.type_only
        }
    return {
        frozenset({a, b})
        for a, targets in imports.items()
        for b in targets
        if a in imports.get(b, ())
    }


def test_no_two_modules_import_each_other():
    # A module pair that needs each other is one module, or a third one is missing (e.g. the
    # registries of mmpar.datasets, which its builder and its wrappers both import).
    found = find_mutual_imports(REPO / "mmpar")
    assert sorted(map(sorted, found - KNOWN_MUTUAL_IMPORTS)) == []
    assert sorted(map(sorted, KNOWN_MUTUAL_IMPORTS - found)) == [], "no longer: drop from list"


def test_mutual_import_checker_sees_a_lazy_import_back(fake_tree):
    _write(fake_tree, "datasets/builder.py", "def build():\n    from .wrappers import Concat\n")
    _write(fake_tree, "datasets/wrappers.py", "from .builder import build\n")
    assert find_mutual_imports(fake_tree) == {
        frozenset({"mmpar.datasets.builder", "mmpar.datasets.wrappers"})
    }


def test_mutual_import_checker_ignores_type_checking_imports(fake_tree):
    _write(fake_tree, "runner/protocol.py", "if TYPE_CHECKING:\n    from .hook import Hook\n")
    _write(fake_tree, "runner/hook.py", "from .protocol import RunnerLike\n")
    assert find_mutual_imports(fake_tree) == set()


def _write(root, rel, text=""):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def fake_tree(tmp_path):
    """A tiny clean package tree named ``mmpar`` under ``tmp_path``."""
    pkg = tmp_path / "mmpar"
    _write(pkg, "__init__.py", "from .utils import helper\nfrom .version import __version__\n")
    _write(pkg, "version.py", "__version__ = '0'\n")
    _write(pkg, "utils/__init__.py", "from .helper import helper\n")
    _write(pkg, "utils/helper.py", "def helper():\n    return 1\n")
    _write(pkg, "runner/__init__.py", "from mmpar.utils import helper\nfrom ..parallel import x\n")
    _write(pkg, "parallel/__init__.py", "x = 1\n")
    _write(pkg, "engine/__init__.py", "from ..runner import helper\n")
    _write(pkg, "models/__init__.py", "from mmpar.runner import helper\n")
    _write(pkg, "apis/__init__.py", "from ..models import helper\nfrom ..datasets import y\n")
    _write(pkg, "datasets/__init__.py", "y = 2\n")
    return pkg


def test_checker_accepts_a_clean_tree(fake_tree):
    assert find_layering_violations(fake_tree) == []


def test_checker_reports_an_upward_lazy_relative_import(fake_tree):
    _write(
        fake_tree,
        "runner/hooks/evaluation.py",
        "import os\n\n\ndef evaluate():\n    from ...apis import test\n    return test\n",
    )
    _write(fake_tree, "runner/hooks/__init__.py")
    problems = find_layering_violations(fake_tree)
    assert problems == [
        "mmpar/runner/hooks/evaluation.py:5 imports mmpar.apis inside a function: "
        "layer 7 (apis) is above layer 3 (runner)"
    ]


def test_checker_reports_upward_absolute_and_dynamic_imports(fake_tree):
    _write(fake_tree, "apis/test.py", "def run():\n    pass\n")
    _write(
        fake_tree,
        "utils/lazy.py",
        "import importlib\n\nimport mmpar.parallel\n\n\n"
        "def load():\n    return importlib.import_module('mmpar.apis.test')\n",
    )
    _write(fake_tree, "parallel/wrap.py", "from mmpar import helper\n")
    problems = find_layering_violations(fake_tree)
    assert problems == [
        "mmpar/parallel/wrap.py:1 imports mmpar: layer 6 (the package root mmpar/__init__.py, "
        "which re-exports up to it) is above layer 2 (parallel)",
        "mmpar/utils/lazy.py:3 imports mmpar.parallel: layer 2 (parallel) is above layer 1 (utils)",
        "mmpar/utils/lazy.py:7 imports mmpar.apis.test inside a function: "
        "layer 7 (apis) is above layer 1 (utils)",
    ]


def test_checker_keeps_datasets_and_models_apart(fake_tree):
    _write(fake_tree, "datasets/builder.py", "def build():\n    from mmpar.models import x\n")
    problems = find_layering_violations(fake_tree)
    assert problems == [
        "mmpar/datasets/builder.py:2 imports mmpar.models inside a function: datasets and models "
        "share layer 6 (datasets) but must not import each other"
    ]


def test_checker_reports_packages_missing_from_the_table(fake_tree):
    _write(fake_tree, "newpkg/__init__.py", "x = 1\n")
    _write(fake_tree, "utils/uses_new.py", "from mmpar.newpkg import x\n")
    problems = find_layering_violations(fake_tree)
    assert len(problems) == 2
    assert problems[0].startswith("mmpar/newpkg/__init__.py: 'mmpar.newpkg' is not in the layer")
    assert problems[1].startswith("mmpar/utils/uses_new.py:1 imports mmpar.newpkg:")
    assert all("add it there at its layer" in p for p in problems)


def test_checkpointing_checker_reports_an_import_of_the_facade(fake_tree):
    _write(fake_tree, "runner/checkpoint.py", "from .checkpointing.format import save\n")
    _write(fake_tree, "runner/checkpointing/__init__.py")
    _write(fake_tree, "runner/checkpointing/format.py", "from .atomic import write\n")
    _write(fake_tree, "runner/checkpointing/atomic.py", "write = 1\n")
    _write(fake_tree, "runner/checkpointing/loop.py", "from ..checkpoint import save\n")
    assert find_checkpointing_escapes(fake_tree) == [
        "mmpar/runner/checkpointing/loop.py:1 imports mmpar.runner.checkpoint: "
        "runner.checkpointing imports no other part of the runner"
    ]


def test_runner_checker_reports_a_lazy_import_of_the_loop(fake_tree):
    _write(fake_tree, "runner/base_runner.py", "BaseRunner = 1\n")
    _write(fake_tree, "runner/checkpointing/__init__.py")
    _write(
        fake_tree,
        "runner/checkpointing/files.py",
        "from . import other\n\n\ndef f():\n    from ..base_runner import BaseRunner\n",
    )
    _write(fake_tree, "runner/checkpointing/other.py")
    assert find_runner_layering_violations(fake_tree) == [
        "mmpar/runner/checkpointing/files.py:5 imports mmpar.runner.base_runner inside a "
        "function: runner.checkpointing is below the runner loop and its hooks"
    ]
