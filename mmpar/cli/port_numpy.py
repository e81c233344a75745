"""Code that numpy 2 no longer runs, found and fixed by ruff's NumPy rules (the port tool's part).

Released mmcv 1.x projects and their dependencies stop under numpy 2 on names it removed
(``np.float``, ``np.float_``, ``np.product``, ``np.sctypes``, ...). ruff knows them: NPY001
(type aliases removed in numpy 1.24), NPY003 (deprecated functions) and NPY201 (removed in
numpy 2.0); its safe fixes rewrite them. ruff is an optional dependency of the port tool (the
``port`` extra: ``pip install 'mmpar[port]'``): a 10+ MB native binary that a training install
has no use for. Without it the port still runs and says that this check was skipped; only
``--fix`` needs it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["MISSING_RUFF", "RULES", "findings", "findings_in_source", "fix_source", "ruff_binary"]

#: ruff's rules for numpy names that numpy 2 no longer has.
RULES = ("NPY001", "NPY003", "NPY201")

# Files per ruff run: command lines stay short on every platform.
_CHUNK = 200

MISSING_RUFF = (
    "ruff is not installed, which finds and fixes code that numpy 2 no longer runs: "
    "pip install 'mmpar[port]' (or pip install ruff)"
)


def ruff_binary() -> str | None:
    """The ruff executable (from the ``ruff`` package, else on ``PATH``); None without one."""
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("ruff")


def _ruff(ruff: str, args: Sequence[str], stdin: str | None = None) -> str:
    # --isolated: the project's own ruff settings must not change what is checked.
    cmd = [ruff, "check", "--isolated", "--no-cache", "--select", ",".join(RULES), "--exit-zero"]
    proc = subprocess.run(
        [*cmd, *args], input=stdin, capture_output=True, text=True, encoding="utf-8", check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"ruff failed ({' '.join(cmd)}): {proc.stderr.strip()[-500:]}")
    return proc.stdout


def findings(
    ruff: str, paths: Sequence[Path], names: dict[Path, str]
) -> list[tuple[str, int, str]]:
    """What ruff's numpy rules find in ``paths``.

    Args:
        ruff: The ruff executable.
        paths: The files to check.
        names: The name to report for each path (relative to the tree).

    Returns:
        ``(name, line, "message (rule)")`` for every finding, sorted.

    Raises:
        RuntimeError: ruff itself failed (its message).
    """
    by_path = {str(Path(p).resolve()): name for p, name in names.items()}
    items = []
    for start in range(0, len(paths), _CHUNK):
        chunk = [str(p) for p in paths[start : start + _CHUNK]]
        items += json.loads(_ruff(ruff, ["--output-format", "json", *chunk]) or "[]")
    found = []
    for item in items:
        name = by_path.get(str(Path(item["filename"]).resolve()), item["filename"])
        found.append((name, item["location"]["row"], f"{item['message']} ({item['code']})"))
    return sorted(found)


def fix_source(ruff: str, text: str, filename: str) -> str:
    """``text`` with ruff's safe fixes for the numpy rules applied (nothing is written).

    Args:
        ruff: The ruff executable.
        text: The module's source.
        filename: Its name (ruff's messages, and what it infers from the suffix).

    Returns:
        The fixed source.

    Raises:
        RuntimeError: ruff itself failed (its message).
    """
    return _ruff(ruff, ["--fix", "--quiet", "--stdin-filename", filename, "-"], stdin=text)


def findings_in_source(ruff: str, text: str, filename: str) -> list[tuple[str, int, str]]:
    """:func:`findings` for a source held in memory (``filename`` is how it is reported)."""
    out = _ruff(ruff, ["--output-format", "json", "--stdin-filename", filename, "-"], stdin=text)
    return sorted(
        (filename, item["location"]["row"], f"{item['message']} ({item['code']})")
        for item in json.loads(out or "[]")
    )
