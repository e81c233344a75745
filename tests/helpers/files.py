"""What a folder holds, to show that a refused or failed command changed nothing."""

from __future__ import annotations

import os
from pathlib import Path


def tree_bytes(root: str | os.PathLike) -> dict[str, bytes | str]:
    """``{relative path: content}`` of every file under ``root`` (a symlink: its target)."""
    root = Path(root)
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            out[str(path.relative_to(root))] = os.readlink(path)
        elif path.is_file():
            out[str(path.relative_to(root))] = path.read_bytes()
    return out
