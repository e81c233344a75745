"""Which keys ``--cfg-options`` added were read while a tool set its run up.

mmcv lets ``--cfg-options`` add keys a config does not have, and so do we; but a key that
nothing reads is most likely a typo the near-miss check let through (``data.my_typo=1``).
``tools/train.py`` watches the added keys (:func:`watch_keys`) from the merge to the end of
its set-up and then reports those never read (:func:`unread_keys`).

A read is any lookup of the key's name in a :class:`ConfigDict` (``cfg.x``, ``cfg['x']``,
``get``, ``pop``, ``setdefault``, ``in``), or its use as a keyword argument of a built object
(:func:`mmpar.utils.config_args.check_argument_names`). Reads are matched by the last part of
the dotted path, so a key of the same name read elsewhere also counts: a missed report is
possible, a false one only for keys read later (while training) or through a plain-dict copy.
"""

from __future__ import annotations

from collections.abc import Iterable

# Last part of a watched path -> the dotted paths with that name; names read so far.
_watched: dict[str, set[str]] = {}
_read: set[str] = set()


def watch_keys(paths: Iterable[str]) -> None:
    """Start watching the dotted ``paths`` (forgetting earlier ones and their reads)."""
    _watched.clear()
    _read.clear()
    for path in paths:
        _watched.setdefault(str(path).rsplit(".", 1)[-1], set()).add(str(path))


def note_read(name: object) -> None:
    """Record that a key called ``name`` was read (cheap when nothing is watched)."""
    if _watched and name in _watched:
        _read.add(name)  # type: ignore[arg-type]


def unread_keys() -> list[str]:
    """The watched paths whose name was not read since :func:`watch_keys`, sorted."""
    return sorted(p for name, paths in _watched.items() if name not in _read for p in paths)


def stop_watching() -> None:
    """Forget the watched keys."""
    _watched.clear()
    _read.clear()


def report_unread_keys(logger) -> list[str]:
    """Log one warning naming the watched keys nothing read, stop watching; return them."""
    unread = unread_keys()
    stop_watching()
    if unread:
        logger.warning(
            f"--cfg-options added key(s) that nothing read while setting the run up: "
            f"{', '.join(unread)}. A typo? (An existing key is changed, a new one is added "
            "unchecked; a key read only later, e.g. by a hook while training, is fine.)"
        )
    return unread
