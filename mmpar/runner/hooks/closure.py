"""ClosureHook: run a plain function at one hook stage."""

from __future__ import annotations

from typing import Any, Callable

from .hook import HOOKS, Hook

# Stage names that stand for two stages (``after_iter`` runs after train and val iterations).
_ALIASES = {
    "before_epoch": ("before_train_epoch", "before_val_epoch"),
    "after_epoch": ("after_train_epoch", "after_val_epoch"),
    "before_iter": ("before_train_iter", "before_val_iter"),
    "after_iter": ("after_train_iter", "after_val_iter"),
}


@HOOKS.register_module()
class ClosureHook(Hook):
    """Call ``fn(runner)`` at the stage ``fn_name`` (e.g. ``'after_train_epoch'``).

    A way to add a one-off action without writing a hook class::

        runner.register_hook(ClosureHook('after_train_epoch', lambda runner: print(runner.epoch)))

    Args:
        fn_name: A stage of :class:`Hook` (``'before_run'``, ``'after_train_iter'``, ... or the
            two-stage names ``'before_epoch'``, ``'after_epoch'``, ``'before_iter'``,
            ``'after_iter'``).
        fn: Called with the runner as its only argument.

    Raises:
        AssertionError: ``fn_name`` is not an attribute of a hook, or ``fn`` is not callable
            (mmcv's exception type).
    """

    def __init__(self, fn_name: str, fn: Callable[[Any], Any]) -> None:
        if not isinstance(fn_name, str) or not hasattr(self, fn_name):
            stages = ", ".join(list(Hook.stages) + list(_ALIASES))
            raise AssertionError(
                f"ClosureHook: fn_name={fn_name!r} is not a hook stage; use one of {stages}"
            )
        if not callable(fn):
            raise AssertionError(
                f"ClosureHook: fn for stage {fn_name!r} must be callable, got {type(fn).__name__}"
            )
        self.fn_name = fn_name
        setattr(self, fn_name, fn)

    def get_triggered_stages(self) -> list[str]:
        """Return the stage(s) ``fn`` runs at (both stages of an alias such as ``after_iter``)."""
        stages = set(_ALIASES.get(self.fn_name, (self.fn_name,)))
        return [stage for stage in self.stages if stage in stages]
