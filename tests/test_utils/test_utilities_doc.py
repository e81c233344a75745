"""The example in docs/utilities.md runs and prints what its comments say."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "utilities.md"


def test_utilities_page_example_runs(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 1
    script = tmp_path / "example.py"
    script.write_text(blocks[0])
    repo = str(DOC.parents[1])
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": repo, "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    )
    if proc.returncode:
        pytest.fail(proc.stderr)
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("\r")]
    text = proc.stdout
    assert "['a.log', 'c.log']" in lines
    assert "[[1], [2, 3], [4, 5, 6]]" in lines
    assert lines.count("True") == 2
    assert "[1, 4, 9]" in text and "3/3" in text
    assert lines[-1].endswith("2")
