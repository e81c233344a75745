"""Plugin discovery: ``custom_imports`` from configs and the ``mmpar.plugins`` entry-point group.

Two ways for user code to register classes (hooks, models, ...) without editing mmpar:

* ``custom_imports=dict(imports=['my_pkg.hooks'], allow_failed_imports=False)`` in a config:
  :class:`~mmpar.utils.Config` imports the modules when it loads the file.
* An installed package declaring an entry point in the group ``mmpar.plugins``: its module is
  imported once per process, lazily, the first time a registry lookup misses.
"""

from __future__ import annotations

import importlib
import warnings
from types import ModuleType
from typing import Union

ENTRY_POINT_GROUP = "mmpar.plugins"
_loaded = False


def import_modules_from_strings(
    imports: Union[str, list[str], tuple[str, ...], None],
    allow_failed_imports: bool = False,
    *,
    source: str | None = None,
) -> Union[ModuleType, list[ModuleType | None], None]:
    """Import modules by dotted name (mmcv 1.x name and behaviour).

    Args:
        imports: A module name or a list of them.
        allow_failed_imports: Warn and return None for a module that fails to import,
            instead of raising.
        source: What asked for the import (a config path), named in errors.

    Returns:
        The module (for a str) or the list of modules (None for the ones that failed);
        None when ``imports`` is empty.

    Raises:
        TypeError: ``imports`` is not a str or a list of str.
        ImportError: A module failed to import and ``allow_failed_imports`` is False.
    """
    if not imports:
        return None
    single = isinstance(imports, str)
    names = [imports] if single else imports
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"custom imports must be a str or a list of str, but got {imports!r}")
    where = f' (custom_imports of config "{source}")' if source else ""
    modules: list[ModuleType | None] = []
    for name in names:
        try:
            modules.append(importlib.import_module(name))
        except ImportError as err:
            if not allow_failed_imports:
                raise ImportError(
                    f'Failed to import custom module "{name}"{where}: {err}. Check the name and '
                    f"that the module is installed or on PYTHONPATH.",
                    name=name,
                ) from err
            warnings.warn(
                f'Custom module "{name}"{where} failed to import and is ignored: {err}',
                UserWarning,
                stacklevel=2,
            )
            modules.append(None)
    return modules[0] if single else modules


def _plugin_entry_points() -> list:
    from importlib.metadata import entry_points

    try:  # Python >= 3.10
        eps = list(entry_points(group=ENTRY_POINT_GROUP))
    except TypeError:  # Python 3.9: no keyword, a dict of group -> entry points
        eps = list(entry_points().get(ENTRY_POINT_GROUP, []))
    unique = {}
    for ep in eps:  # the same distribution can be seen twice through two sys.path entries
        unique.setdefault((ep.name, ep.value), ep)
    return list(unique.values())


def load_entry_point_plugins() -> bool:
    """Import every module declared in the ``mmpar.plugins`` entry-point group, once.

    A plugin that fails to import is skipped with a warning naming its entry point, so a
    broken plugin never breaks an unrelated registry lookup.

    Returns:
        True if this call imported plugins (so a failed lookup is worth retrying),
        False if they had been loaded before.
    """
    global _loaded
    if _loaded:
        return False
    _loaded = True  # set first: a plugin's own registry lookups must not re-enter
    for ep in _plugin_entry_points():
        try:
            ep.load()
        except Exception as err:
            warnings.warn(
                f'mmpar plugin entry point "{ep.name} = {ep.value}" (group '
                f'"{ENTRY_POINT_GROUP}") failed to import and is skipped: '
                f"{type(err).__name__}: {err}",
                UserWarning,
                stacklevel=2,
            )
    return True
