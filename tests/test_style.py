"""The code base stays ruff-clean: lint and format are checked with the config in pyproject.toml."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _ruff():
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail(
            "ruff is not installed: it is part of the `test` extra (pip install -e .[test])"
        )
    return exe


@pytest.mark.parametrize("args", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_is_clean(args):
    proc = subprocess.run([_ruff(), *args, "."], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, (
        f"ruff {' '.join(args)} found problems:\n{proc.stdout}{proc.stderr}"
    )
