"""Each console script of pyproject.toml runs the same ``main`` as its wrapper in ``tools/``."""

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _docs_console_scripts() -> dict:
    """The docs test's map of console scripts to tools (for its flag checks and 1-epoch runs)."""
    return _load(REPO / "tests/docs/markdown_blocks.py", "mmpar_docs_blocks").CONSOLE_SCRIPTS


def test_the_docs_test_knows_every_console_script():
    assert set(_docs_console_scripts()) == set(SCRIPTS)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_a_console_script_and_its_tools_wrapper_run_one_main(script):
    module, function = SCRIPTS[script].split(":")
    assert module.startswith("mmpar.cli.") and function == "main"
    main = getattr(importlib.import_module(module), function)
    tool = REPO / _docs_console_scripts()[script]
    assert _load(tool, f"mmpar_wrapper_{tool.stem}").main is main
