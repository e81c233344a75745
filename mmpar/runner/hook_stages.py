"""Which hooks a stage calls: the runner's hook list and its per-stage dispatch table.

mmcv's ``call_hook`` calls every hook at every stage, most of them the base class's empty
method. On a small model that is a measurable share of each iteration, so the runner calls
only the hooks whose method for the stage can do something, and the table saying which is
rebuilt whenever the hook list changes (:class:`HookList` numbers its versions). Skipping is
invisible: a skipped method is :class:`Hook`'s own, which does nothing but forward to
``before_iter``/``after_iter``/``before_epoch``/``after_epoch``, themselves Hook's no-ops.
``get_triggered_stages`` and ``get_hook_info`` are not used (a hook may override them).
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable, Iterator, SupportsIndex

from .hooks import Hook

# Each stage's base method forwards to this generic one (mmcv's Hook).
_FORWARDS = {
    "before_train_epoch": "before_epoch",
    "before_val_epoch": "before_epoch",
    "after_train_epoch": "after_epoch",
    "after_val_epoch": "after_epoch",
    "before_train_iter": "before_iter",
    "before_val_iter": "before_iter",
    "after_train_iter": "after_iter",
    "after_val_iter": "after_iter",
}

# Version numbers are unique across all lists, so a version also identifies its list.
_versions = itertools.count()


def _mutator(name: str) -> Any:
    base = getattr(list, name)

    def method(self: HookList, *args: Any, **kwargs: Any) -> Any:
        result = base(self, *args, **kwargs)
        self.version = next(_versions)
        return result

    method.__name__ = name
    method.__doc__ = base.__doc__
    return method


class HookList(list):
    """The runner's hook list (a ``list``): every change gives it a new ``version``.

    Changes through any list method or operator count (``runner.hooks[i] = hook``, as
    mmaction2's LongShortCycleHook does, ``insert``, ``remove``, ``sort``, ...).
    """

    def __init__(self, hooks: Iterable = ()) -> None:
        super().__init__(hooks)
        self.version = next(_versions)

    __setitem__ = _mutator("__setitem__")
    __delitem__ = _mutator("__delitem__")
    __iadd__ = _mutator("__iadd__")
    __imul__ = _mutator("__imul__")
    append = _mutator("append")
    extend = _mutator("extend")
    insert = _mutator("insert")
    pop = _mutator("pop")
    remove = _mutator("remove")
    clear = _mutator("clear")
    sort = _mutator("sort")
    reverse = _mutator("reverse")

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        # Pickled and deep-copied as a plain list of hooks.
        return list, (list(self),)


def _overrides(hook: Any, name: str, own: dict) -> bool:
    """Whether ``hook.<name>`` is not Hook's own method (set on the instance or its class)."""
    return name in own or getattr(type(hook), name, None) is not getattr(Hook, name)


def calls_stage(hook: Any, stage: str) -> bool:
    """Whether ``getattr(hook, stage)(runner)`` may do anything (False: Hook's empty method).

    Anything not a plain Hook (a non-Hook in the list, a class with its own
    ``__getattribute__``) counts as calling every stage, as does an unknown stage.
    """
    if (
        stage not in Hook.stages
        or not isinstance(hook, Hook)
        or type(hook).__getattribute__ is not object.__getattribute__
    ):
        return True
    own = getattr(hook, "__dict__", {})
    if _overrides(hook, stage, own):
        return True
    generic = _FORWARDS.get(stage)
    return generic is not None and _overrides(hook, generic, own)


# One stage's dispatch: (the hooks to call, each with its index in the list; the instance
# dicts of the skipped hooks, where ``call_hook`` looks for a stage method assigned later;
# the generic method the stage's base method forwards to).
StageEntry = tuple[list[tuple[Any, int]], list[dict], str]


def stage_entry(stage: str, hooks: list) -> StageEntry:
    """The dispatch of ``stage`` for ``hooks`` (see :data:`StageEntry`)."""
    calls, watched = [], []
    for index, hook in enumerate(hooks):
        if calls_stage(hook, stage):
            calls.append((hook, index))
        elif hasattr(hook, "__dict__"):
            watched.append(hook.__dict__)
    return calls, watched, _FORWARDS.get(stage, stage)


def stage_table(hooks: list) -> dict[str, StageEntry]:
    """The dispatch of every standard stage (``Hook.stages``) for ``hooks``."""
    return {stage: stage_entry(stage, hooks) for stage in Hook.stages}


def live_from(hooks: list, start: int) -> Iterator:
    """The hooks from index ``start`` on, read from the list as it is at each step."""
    index = start
    while index < len(hooks):
        yield hooks[index]
        index += 1
