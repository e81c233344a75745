"""Which hooks a stage calls: the runner's hook list and its per-stage dispatch table.

mmcv's ``call_hook`` calls every hook at every stage, most of them the base class's empty
method. On a small model that is a measurable share of each iteration, so the runner calls
only the hooks whose method for the stage can do something, and where that method is Hook's
forwarder to an overridden ``before_iter``/``after_iter``/``before_epoch``/``after_epoch``,
calls that one directly. The table saying which lives on the :class:`HookList` itself and is
dropped by every change of the list; a change made during a stage also turns the rest of the
stage's running loop into a loop over the live list (:meth:`StageCalls.divert`), so the loop
in ``call_hook`` needs no test per hook. Skipping is invisible: a skipped method is
:class:`Hook`'s own, which does nothing but forward to the generic one, itself Hook's no-op.
``get_triggered_stages`` and ``get_hook_info`` are not used (a hook may override them).
"""

from __future__ import annotations

import itertools
from functools import partial
from operator import contains
from typing import Any, Callable, Iterable, Iterator, SupportsIndex

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
        self.drop_dispatch()
        return result

    method.__name__ = name
    method.__doc__ = base.__doc__
    return method


class HookList(list):
    """The runner's hook list (a ``list``): every change gives it a new ``version``.

    Changes through any list method or operator count (``runner.hooks[i] = hook``, as
    mmaction2's LongShortCycleHook does, ``insert``, ``remove``, ``sort``, ...), and drop
    ``dispatch``, the per-stage table (:func:`stage_table`) ``call_hook`` fills and reads.
    """

    def __init__(self, hooks: Iterable = ()) -> None:
        super().__init__(hooks)
        self.version = next(_versions)
        self.dispatch: dict[str, StageEntry] = {}

    def drop_dispatch(self) -> None:
        """Drop the table; loops of ``call_hook`` over it go on over the live list.

        A loop running now (the change may come from one of its hooks) goes on after its
        current hook as a loop over the list would.
        """
        table = self.dispatch
        if table:
            self.dispatch = {}
            for stage, (methods, _) in table.items():
                _, calls, names = methods.args
                calls.divert(self, stage, names)

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


def stage_method(hook: Any, stage: str) -> str | None:
    """The method ``call_hook`` calls on ``hook`` for ``stage``; None: none (Hook's empty one).

    Usually ``stage`` itself. Where the hook's method for a train/val stage is :class:`Hook`'s,
    which only forwards to the generic one (``before_iter``, ...), and that is overridden,
    the generic one: the call is the same, without the forwarding frame. Anything not a plain
    Hook (a non-Hook in the list, a class with its own ``__getattribute__``) gets every stage
    called by its name, as does an unknown stage.
    """
    if (
        stage not in Hook.stages
        or not isinstance(hook, Hook)
        or type(hook).__getattribute__ is not object.__getattribute__
    ):
        return stage
    own = getattr(hook, "__dict__", {})
    if _overrides(hook, stage, own):
        return stage
    generic = _FORWARDS.get(stage)
    return generic if generic is not None and _overrides(hook, generic, own) else None


def calls_stage(hook: Any, stage: str) -> bool:
    """Whether ``getattr(hook, stage)(runner)`` may do anything (False: Hook's empty method)."""
    return stage_method(hook, stage) is not None


class StageCalls(list):
    """The hooks one stage calls, in list order, with their ``indices`` in the hook list."""

    def __init__(self, hooks: list, indices: list[int]) -> None:
        super().__init__(hooks)
        self.indices = indices

    def divert(self, live: list, stage: str, methods: list[str]) -> None:
        """Make the rest of any loop over these calls a loop over ``live`` (the changed list).

        Position ``p`` gets a stand-in whose methods (any name) call ``stage`` on the hooks
        after the one at position ``p - 1`` (its index in ``live`` before the change) as a
        loop over the live list would, and then empty this list: the loop ends there.
        ``call_hook`` itself needs no test for changes. ``methods`` (the names ``call_hook``
        zips with these calls) gets one more, for the stand-in after the last hook.
        """
        self[:] = [_GoOnLive(live, self, after, stage) for after in [-1, *self.indices]]
        methods.append(stage)


class _GoOnLive:
    """Stand-in put into :class:`StageCalls` by :meth:`StageCalls.divert`."""

    def __init__(self, live: list, calls: StageCalls, after: int, stage: str) -> None:
        self.live, self.calls, self.after, self.stage = live, calls, after, stage

    def __getattr__(self, name: str) -> Any:
        # ``call_hook`` looks up the stage's method, or the generic one it forwards to.
        return self._go_on

    def _go_on(self, runner: Any) -> None:
        self.calls.clear()  # the loop that called this stops after it
        for hook in live_from(self.live, self.after + 1):
            getattr(hook, self.stage)(runner)


# One stage's dispatch, unpacked by ``call_hook`` at every call: two partials of ``map``,
# each called for a new iterator over lists fixed when the table is built (C code only):
# - ``methods``: ``partial(map, getattr, calls, names)``, the methods to call: ``calls`` are
#   the hooks (:class:`StageCalls`), ``names`` the name of the method to call on each (see
#   :func:`stage_method`). Each method is looked up at call time, so methods assigned on
#   those hooks' instances or classes count,
# - ``watch``: ``partial(map, contains, dicts, keys)``, whose ``any`` says whether the table
#   is out of date: ``dicts`` are instance dicts, each once per name that would change the
#   call if assigned there (for a skipped hook, the stage and the generic method its base
#   method forwards to; for a hook whose generic method is called directly, the stage),
#   ``keys`` those names.
StageEntry = tuple[Callable[[], Iterator], Callable[[], Iterator]]


def stage_entry(stage: str, hooks: list) -> StageEntry:
    """The dispatch of ``stage`` for ``hooks`` (see :data:`StageEntry`)."""
    calls, indices, methods, dicts, names = [], [], [], [], []
    generic = _FORWARDS.get(stage, stage)
    for index, hook in enumerate(hooks):
        method = stage_method(hook, stage)
        if method is not None:
            calls.append(hook)
            indices.append(index)
            methods.append(method)
        if method != stage and hasattr(hook, "__dict__"):
            for name in {stage, generic} if method is None else (stage,):
                dicts.append(hook.__dict__)
                names.append(name)
    return (
        partial(map, getattr, StageCalls(calls, indices), methods),
        partial(map, contains, dicts, names),
    )


def stage_table(hooks: list) -> dict[str, StageEntry]:
    """The dispatch of every standard stage (``Hook.stages``) for ``hooks``."""
    return {stage: stage_entry(stage, hooks) for stage in Hook.stages}


def live_from(hooks: list, start: int) -> Iterator:
    """The hooks from index ``start`` on, read from the list as it is at each step."""
    index = start
    while index < len(hooks):
        yield hooks[index]
        index += 1
