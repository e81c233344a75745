"""Which command-line options the running program accepts, for the hints in messages.

A message that tells the user how to go on (resume a preempted run, give a new run a folder of
its own) must name an option of *the program that is running*: mmpar's ``tools/train.py`` has
``--auto-resume``, mmcls 0.25's own ``tools/train.py`` only ``--resume-from``, and a script
written around a runner may have neither. The options are found by reading the main script's
source (``sys.argv[0]``, else ``__main__.__file__``) for the quoted option string, as argparse
declares it (``'--resume-from'``); a program can also declare them (:func:`declare_options`),
as mmpar's own commands do while their ``main`` runs (:func:`options_declared`), whose entry
points are thin wrappers.
"""

from __future__ import annotations

import contextlib
import functools
import os.path as osp
import re
import sys
from collections.abc import Iterator

_declared: set[str] = set()


def declare_options(*options: str) -> None:
    """Record that the running program accepts ``options`` (e.g. ``'--auto-resume'``)."""
    _declared.update(options)


@contextlib.contextmanager
def options_declared(*options: str) -> Iterator[None]:
    """Declare ``options`` while the block runs, e.g. around a command's ``main``.

    On leaving, the declarations are as before the block: a command called in-process (from
    a test, or another program) does not leave its options to the messages of what runs next.
    """
    before = set(_declared)
    _declared.update(options)
    try:
        yield
    finally:
        _declared.intersection_update(before)


@functools.lru_cache(maxsize=8)
def _source_options(path: str) -> frozenset[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return frozenset()
    return frozenset(re.findall(r"""["'](--[A-Za-z][\w-]*)["']""", text))


def main_script() -> str | None:
    """Path of the program's main script, or None (an interactive session, ``python -c``)."""
    # sys.argv[0] first: the zero-edit launcher sets it to the script before running it.
    candidates = [sys.argv[0] if sys.argv else None]
    candidates.append(getattr(sys.modules.get("__main__"), "__file__", None))
    for path in candidates:
        if path and osp.isfile(path):
            return osp.abspath(path)
    return None


def accepts(option: str) -> bool:
    """Whether the running program accepts ``option`` (declared, or quoted in its source)."""
    if option in _declared:
        return True
    path = main_script()
    return path is not None and option in _source_options(path)


def resume_action(checkpoint: str) -> str:
    """How to continue from ``checkpoint`` with this program, as a clause of a message.

    ``pass --auto-resume`` when the program has it, else ``pass --resume-from <checkpoint>``,
    else ``set resume_from='<checkpoint>' in the config``.
    """
    if accepts("--auto-resume"):
        return "pass --auto-resume"
    if accepts("--resume-from"):
        return f"pass --resume-from {checkpoint}"
    return f"set resume_from='{checkpoint}' in the config"


def work_dir_hint(suggested: str) -> str:
    """How to give a run another work dir with this program: ``--work-dir`` or the config key."""
    if accepts("--work-dir"):
        return f"pass --work-dir {suggested}"
    return f"set work_dir='{suggested}' in the config"


__all__ = [
    "accepts",
    "declare_options",
    "main_script",
    "options_declared",
    "resume_action",
    "work_dir_hint",
]
