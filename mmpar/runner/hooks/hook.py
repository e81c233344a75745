"""The Hook base class and the HOOKS registry."""

from __future__ import annotations

import contextlib
from typing import Callable, Protocol

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import is_method_overridden as is_method_overridden
from mmpar.utils.registry import Registry

from ..runner_protocol import RunnerLike

HOOKS = Registry("hook")


class Hook:
    """Base class of runner hooks; override the stages you need.

    The stage names and call order are mmcv 1.x's. A hook is stateless by default; a hook
    whose state must survive a resume (counters, best scores, EMA weights, ...) overrides
    :meth:`state_dict` and :meth:`load_state_dict`, and the runner stores that state in its
    checkpoints and gives it back by hook name on resume.
    """

    #: Set by ``runner.register_hook`` (a hook with it already set is refused), never here:
    #: only declared, so ``hasattr(hook, 'priority')`` stays False until registration.
    priority: int

    #: ``train_step_context(runner) -> context manager``: a hook that defines this method
    #: has the runner enter the context around ``model.train_step`` (e.g. autocast, see
    #: :class:`~mmpar.runner.hooks.optimizer.Fp16OptimizerHook`). None (not callable) by
    #: default, so the runner wraps the step only for the hooks that ask.
    train_step_context: Callable[[RunnerLike], contextlib.AbstractContextManager] | None = None

    stages = (
        "before_run",
        "before_train_epoch",
        "before_train_iter",
        "after_train_iter",
        "after_train_epoch",
        "before_val_epoch",
        "before_val_iter",
        "after_val_iter",
        "after_val_epoch",
        "after_run",
    )

    def before_run(self, runner: RunnerLike) -> None:
        """Called once before the first epoch/iteration."""

    def after_run(self, runner: RunnerLike) -> None:
        """Called once when training ends, also when it ends with an error."""

    def before_epoch(self, runner: RunnerLike) -> None:
        """Called before every train and val epoch (default of the two stages below)."""

    def after_epoch(self, runner: RunnerLike) -> None:
        """Called after every train and val epoch (default of the two stages below)."""

    def before_iter(self, runner: RunnerLike) -> None:
        """Called before every train and val iteration (default of the two stages below)."""

    def after_iter(self, runner: RunnerLike) -> None:
        """Called after every train and val iteration (default of the two stages below)."""

    def before_train_epoch(self, runner: RunnerLike) -> None:
        """Called before each training epoch."""
        self.before_epoch(runner)

    def before_val_epoch(self, runner: RunnerLike) -> None:
        """Called before each validation epoch."""
        self.before_epoch(runner)

    def after_train_epoch(self, runner: RunnerLike) -> None:
        """Called after each training epoch."""
        self.after_epoch(runner)

    def after_val_epoch(self, runner: RunnerLike) -> None:
        """Called after each validation epoch."""
        self.after_epoch(runner)

    def before_train_iter(self, runner: RunnerLike) -> None:
        """Called before each training iteration."""
        self.before_iter(runner)

    def before_val_iter(self, runner: RunnerLike) -> None:
        """Called before each validation iteration."""
        self.before_iter(runner)

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Called after each training iteration (after ``train_step``)."""
        self.after_iter(runner)

    def after_val_iter(self, runner: RunnerLike) -> None:
        """Called after each validation iteration."""
        self.after_iter(runner)

    def state_dict(self) -> dict:
        """Return the hook's resumable state (empty for stateless hooks)."""
        return {}

    def load_state_dict(self, state: dict) -> None:
        """Restore the state returned by :meth:`state_dict`."""

    # Helpers (mmcv 1.x names). ``n <= 0`` means "never".
    def every_n_epochs(self, runner: RunnerLike, n: int) -> bool:
        """Whether the epoch that just ran is a multiple of ``n``."""
        return (runner.epoch + 1) % n == 0 if n > 0 else False

    def every_n_inner_iters(self, runner: RunnerLike, n: int) -> bool:
        """Whether the iteration within the epoch that just ran is a multiple of ``n``."""
        return (runner.inner_iter + 1) % n == 0 if n > 0 else False

    def every_n_iters(self, runner: RunnerLike, n: int) -> bool:
        """Whether the global iteration that just ran is a multiple of ``n``."""
        return (runner.iter + 1) % n == 0 if n > 0 else False

    def end_of_epoch(self, runner: RunnerLike) -> bool:
        """Whether the iteration that just ran is the last of the epoch."""
        return runner.inner_iter + 1 == len(runner.data_loader)

    def is_last_epoch(self, runner: RunnerLike) -> bool:
        """Whether the epoch that just ran is the last one."""
        return runner.epoch + 1 == runner.max_epochs

    def is_last_iter(self, runner: RunnerLike) -> bool:
        """Whether the iteration that just ran is the last one."""
        return runner.iter + 1 == runner.max_iters

    def get_triggered_stages(self) -> list[str]:
        """Return the stages this hook overrides (used by ``runner.get_hook_info``)."""
        aliases = {
            "before_epoch": ("before_train_epoch", "before_val_epoch"),
            "after_epoch": ("after_train_epoch", "after_val_epoch"),
            "before_iter": ("before_train_iter", "before_val_iter"),
            "after_iter": ("after_train_iter", "after_val_iter"),
        }
        triggered: set[str] = set()
        for name in list(self.stages) + list(aliases):
            if getattr(type(self), name) is not getattr(Hook, name):
                triggered.update(aliases.get(name, (name,)))
        return [stage for stage in self.stages if stage in triggered]


class StepContextHook(Protocol):
    """A hook whose ``train_step_context`` is a method (what the runner keeps a list of)."""

    def train_step_context(self, runner: RunnerLike) -> contextlib.AbstractContextManager:
        """The context the runner enters around ``model.train_step``."""
