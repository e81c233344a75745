"""Hook states in a checkpoint: each stateful hook's ``state_dict()`` under its hook key.

The key is the hook's class name, with ``#1``, ``#2`` appended for the 2nd, 3rd hook of the
same class in priority order; on resume each registered hook gets its state back by that key.
"""

from __future__ import annotations

import logging
from typing import Any


def hooks_by_key(hooks: list[Any]) -> dict[str, Any]:
    """Hooks by checkpoint key: class name, with ``#1``, ``#2`` for repeats."""
    counts: dict[str, int] = {}
    keyed = {}
    for hook in hooks:
        name = type(hook).__name__
        n = counts.get(name, 0)
        counts[name] = n + 1
        keyed[name if n == 0 else f"{name}#{n}"] = hook
    return keyed


def collect_hook_states(hooks: list[Any]) -> dict[str, dict]:
    """The non-empty ``state_dict()`` of every hook, by hook key."""
    states = {}
    for key, hook in hooks_by_key(hooks).items():
        state = hook.state_dict()
        if state:
            states[key] = state
    return states


def load_hook_states(
    hooks: list[Any], states: dict[str, dict], logger: logging.Logger | None = None
) -> None:
    """Give each hook its state by key; with ``logger``, warn about states no hook took."""
    keyed = hooks_by_key(hooks)
    for key, state in states.items():
        if key in keyed:
            keyed[key].load_state_dict(state)
    unused = sorted(set(states) - set(keyed))
    if logger is not None and unused:
        logger.warning("checkpoint has state for hooks that are not registered: %s", unused)
