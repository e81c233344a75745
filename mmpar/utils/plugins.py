"""Plugin discovery: ``custom_imports`` from configs and the ``mmpar.plugins`` entry-point group."""

# NOTE(skeleton): the Foundation helper completes this module (custom_imports, tests, docs).

from __future__ import annotations

ENTRY_POINT_GROUP = 'mmpar.plugins'
_loaded = False


def load_entry_point_plugins() -> bool:
    """Import every module declared in the ``mmpar.plugins`` entry-point group, once.

    Returns:
        True if this call imported plugins (so a failed lookup is worth retrying),
        False if they had been loaded before.
    """
    global _loaded
    if _loaded:
        return False
    _loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        ep.load()
    return True
