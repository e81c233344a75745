"""The example in docs/fileio.md runs as written."""

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_docs_example_runs(tmp_path):
    text = (REPO / "docs" / "fileio.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, re.S)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "a: 1",
        "['ann.txt', 'deep/hello.txt', 'out/cfg.json', 'out/cfg.yaml']",
        "hello",
    ]
