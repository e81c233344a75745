"""The code base stays ruff-clean: lint and format are checked with the config in pyproject.toml."""

import os
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


def _mypy(*args):
    """Run mypy from the repository root with the ``[tool.mypy]`` config of pyproject.toml.

    Its cache is the repository's (gitignored) ``.mypy_cache``: warm, a run takes seconds.
    ``MYPYPATH`` makes files outside the repository see this checkout's ``mmpar``.
    """
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("mypy is not installed: it is in the `test` extra (pip install -e .[test])")
    env = {**os.environ, "MYPYPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "mypy", *args], cwd=REPO, capture_output=True, text=True, env=env
    )


def test_mypy_is_clean_on_the_runner():
    proc = _mypy()
    assert proc.returncode == 0, f"mypy found problems in mmpar/runner:\n{proc.stdout}{proc.stderr}"
    assert "no issues found" in proc.stdout


HOOK_USING = """
from mmpar.runner.hooks import Hook
from mmpar.runner.runner_protocol import RunnerLike


class MyHook(Hook):
    def after_train_iter(self, runner: RunnerLike) -> None:
        print({use})
"""


def _check_hook(tmp_path, use):
    path = tmp_path / "my_hook.py"
    path.write_text(HOOK_USING.format(use=use))
    return _mypy(str(path))


def test_mypy_holds_a_typed_hook_to_the_runner_contract(tmp_path):
    ok = _check_hook(tmp_path, "runner.iter + 1, runner.log_buffer.output, runner.current_lr()")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # A misspelt attribute and a private one are both outside RunnerLike.
    bad = _check_hook(tmp_path, "runner.epochs, runner._hooks")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert '"RunnerLike" has no attribute "epochs"' in bad.stdout
    assert '"RunnerLike" has no attribute "_hooks"' in bad.stdout
