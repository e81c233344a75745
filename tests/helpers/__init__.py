"""Helpers shared by the test modules: one copy of each, imported as ``from helpers import ...``.

pytest runs with ``--import-mode=importlib``, which puts no test directory on ``sys.path``;
tests/conftest.py adds ``tests/`` so that this package imports from every test module.
"""

from .files import tree_bytes
from .models import TinyModel
from .processes import (
    REPO,
    free_port,
    import_path,
    load_tool,
    run_tool,
    tool_env,
    torchrun_args,
    work_dir_lock_holder,
)

__all__ = [
    "REPO",
    "TinyModel",
    "free_port",
    "import_path",
    "load_tool",
    "run_tool",
    "tool_env",
    "torchrun_args",
    "tree_bytes",
    "work_dir_lock_holder",
]
