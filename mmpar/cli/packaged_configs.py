"""The example configs that ship with mmpar, found by name when there is no clone at hand.

The wheel carries the repository's ``configs/`` as ``mmpar/configs/`` (see ``setup.py``); a
checkout has them beside the package. So after ``pip install mmpar`` the tools accept
``digits_lenet``, ``digits_lenet.py`` or ``configs/digits_lenet.py`` from any directory. A path
that exists is always taken as given: a user's own ``configs/digits_lenet.py`` wins over the
shipped one, and a path found nowhere is passed on unchanged, so the tool reports it as before.
"""

from __future__ import annotations

import argparse
import os.path as osp
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
_PREFIX = "configs/"


def configs_dir() -> Path | None:
    """The folder of the shipped configs: ``mmpar/configs`` (a wheel), else a checkout's.

    Returns:
        The folder, or None when neither exists.
    """
    installed = _PACKAGE_DIR / "configs"
    if installed.is_dir():
        return installed
    # A checkout (editable install or PYTHONPATH): configs/ beside mmpar/. pyproject.toml tells
    # it from a site-packages that happens to hold some other top-level "configs" package.
    checkout = _PACKAGE_DIR.parent
    if (checkout / "configs").is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout / "configs"
    return None


def list_configs() -> list[str]:
    """Names of the shipped configs one can train (``_base_`` fragments left out), sorted."""
    folder = configs_dir()
    if folder is None:
        return []
    return sorted(path.stem for path in folder.glob("*.py"))


def resolve_config(path: str) -> str:
    """The config file ``path`` names: itself when it exists, else the shipped one it names.

    ``digits_lenet``, ``digits_lenet.py`` and ``configs/digits_lenet.py`` all name
    ``<configs dir>/digits_lenet.py``.

    Args:
        path: The tool's config argument.

    Returns:
        ``path`` unchanged when it exists, is absolute or names no shipped config; else the
        shipped file's path.
    """
    folder = configs_dir()
    if folder is None or osp.exists(path) or osp.isabs(path):
        return path
    name = path.replace("\\", "/")
    name = name[len(_PREFIX) :] if name.startswith(_PREFIX) else name
    for candidate in (folder / name, folder / f"{name}.py"):
        if candidate.is_file():
            return str(candidate)
    return path


class ListConfigsAction(argparse.Action):
    """``--list-configs``: print the shipped configs (name and file) and exit, like ``--help``."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, **kw):
        kw.setdefault("help", "list the example configs that ship with mmpar and exit")
        super().__init__(option_strings, dest=dest, default=default, nargs=0, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        """Print one ``name  path`` line per config, then end the program (exit code 0)."""
        folder = configs_dir()
        names = list_configs()
        if not names:  # an install without them: a message, not an empty list
            parser.exit(1, "error: no example configs found (mmpar/configs is missing)\n")
        width = max(len(name) for name in names)
        for name in names:  # stdout, like --help: the list is the command's output
            print(f"{name:<{width}}  {folder / (name + '.py')}")
        parser.exit(0)
