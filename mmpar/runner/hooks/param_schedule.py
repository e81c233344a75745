"""The param-group schedule base shared by the LR and momentum updater hooks.

A schedule hook sets one value of every param group (``lr``; ``momentum`` or Adam's
``betas[0]``) before each epoch or iteration. The value is a pure function of where training is
(``runner.epoch`` or ``runner.iter``) and of the group's initial value, which ``before_run``
records under ``group['initial_<name>']`` and ``state_dict()`` carries across a resume, so a
resumed run sets the same values as an uninterrupted one.

:class:`ParamScheduleHook` holds that bookkeeping, the warmup and the hook stages once. A family
(``LrUpdaterHook``, ``MomentumUpdaterHook``) says which value it schedules and how to read and
write it; a policy implements the family's ``get_<name>(runner, base)``.
"""

from __future__ import annotations

import copy
import numbers
from typing import Any, Callable, Union

from mmpar.utils.compat_errors import CheckTypeError, CheckValueError

from ..runner_protocol import RunnerLike
from .hook import Hook

GroupValues = Union[list, dict]  # list of per-group values, or {optimizer name: list}

WARMUP_TYPES = ("constant", "linear", "exp")


def named_optimizers(runner: RunnerLike) -> list[tuple[str | None, Any]]:
    """``[(name, optimizer)]`` for a dict of optimizers, ``[(None, optimizer)]`` otherwise."""
    if isinstance(runner.optimizer, dict):
        return list(runner.optimizer.items())
    return [(None, runner.optimizer)]


def values_of(values: GroupValues, name: str | None) -> list:
    """The per-group list of optimizer ``name`` (``None``: the single optimizer's list)."""
    return values if name is None else values[name]


def from_named(per_optimizer: dict) -> GroupValues:
    """Undo :func:`named_optimizers`: ``{None: list}`` becomes the list itself."""
    return per_optimizer[None] if None in per_optimizer else per_optimizer


def map_groups(values: GroupValues, fn: Callable[[Any], Any]) -> GroupValues:
    """Apply ``fn`` to every per-group value of a list or a dict of lists."""
    if isinstance(values, dict):
        return {k: [fn(v) for v in vs] for k, vs in values.items()}
    return [fn(v) for v in values]


def progress_of(runner: RunnerLike, by_epoch: bool) -> tuple[int, int]:
    """Return ``(progress, max_progress)`` in epochs or iterations."""
    if by_epoch:
        return runner.epoch, runner.max_epochs
    return runner.iter, runner.max_iters


def format_param(name: str, optim: Any, param: Any) -> list:
    """Expand a scalar / per-group list / per-optimizer dict into one value per param group.

    Args:
        name: Name of the optimizer (its key in a dict of optimizers, else its class name).
        optim: The optimizer whose ``param_groups`` are counted.
        param: A number (same for every group), a list/tuple (one per group) or a dict
            mapping optimizer names to one of the former.

    Returns:
        A list with one value per param group.

    Raises:
        ValueError: A list has the wrong length.
        KeyError: A dict has no entry for ``name``.
    """
    n_groups = len(optim.param_groups)
    if isinstance(param, numbers.Number):
        return [param] * n_groups
    if isinstance(param, (list, tuple)):
        if len(param) != n_groups:
            raise ValueError(
                f'expected {n_groups} values for optimizer "{name}" (one per param group), '
                f"got {len(param)}: {list(param)}"
            )
        return list(param)
    if isinstance(param, dict):
        if name not in param:
            raise KeyError(
                f'optimizer "{name}" is not found in {sorted(param)}; give a value for every '
                "optimizer (keys of runner.optimizer, or the class name of a single optimizer)"
            )
        return format_param(name, optim, param[name])
    raise TypeError(f'expected a number, list or dict for "{name}", got {type(param).__name__}')


def config_values(runner: RunnerLike, param: Any) -> GroupValues:
    """:func:`format_param` for every optimizer of the runner (keyed by name for a dict)."""
    return from_named(
        {
            name: format_param(type(optim).__name__ if name is None else name, optim, param)
            for name, optim in named_optimizers(runner)
        }
    )


def check_group_shape(owner: str, runner: RunnerLike, values: GroupValues, what: str) -> None:
    """Check that restored per-group values match the runner's optimizer(s)."""
    for name, optim in named_optimizers(runner):
        if name is None:
            got = values if isinstance(values, (list, tuple)) else None
        else:
            got = values.get(name) if isinstance(values, dict) else None
        if got is None:
            raise ValueError(
                f"{owner}: the restored {what} {values!r} do not match the optimizer layout "
                f"(optimizer {name or type(optim).__name__!r}); resume with the same optimizers"
            )
        if len(got) != len(optim.param_groups):
            raise ValueError(
                f"{owner}: the restored {what} have {len(got)} values for optimizer "
                f"{name or type(optim).__name__!r} but it has {len(optim.param_groups)} param "
                "groups; resume with the same param groups"
            )


def group_values_property(attr: str, doc: str) -> property:
    """A read-write property that forwards to ``attr`` (a family's mmcv attribute name)."""
    return property(
        lambda self: getattr(self, attr), lambda self, value: setattr(self, attr, value), doc=doc
    )


class ParamScheduleHook(Hook):
    """Base of the hooks that schedule one value of every param group (LR, momentum).

    A family subclass sets ``value_name`` (``'lr'``); mmcv's names follow from it and are what
    the stages call, so a subclass may override any of them as in mmcv:
    ``get_<name>(runner, base)`` is the policy (one value from a group's base value),
    ``get_regular_<name>(runner)`` and ``get_warmup_<name>(cur_iters)`` give every group's
    value (defaults: :meth:`regular_values_at`, :meth:`warmup_values_at`). The group key
    ``initial_<name>`` and the state key ``base_<name>`` hold the initial values. The runner
    needs ``optimizer`` (an optimizer or a dict of them), ``epoch``, ``iter``,
    ``max_epochs``/``max_iters`` and ``data_loader``.

    Args:
        by_epoch: Update the value once per epoch (``True``) or every iteration.
        warmup: ``None``, ``'constant'``, ``'linear'`` or ``'exp'``.
        warmup_iters: Length of the warmup, in iterations (or epochs if ``warmup_by_epoch``).
        warmup_ratio: Warmup factor at the start, in ``(0, 1]`` (see :meth:`warmup_factor`).
        warmup_by_epoch: Count ``warmup_iters`` in epochs.
    """

    value_name = ""  # 'lr' or 'momentum'
    value_label = ""  # how messages name it: 'LR', 'momentum'

    def __init__(
        self,
        by_epoch: bool = True,
        warmup: str | None = None,
        warmup_iters: int = 0,
        warmup_ratio: float = 0.1,
        warmup_by_epoch: bool = False,
    ) -> None:
        owner = type(self).__name__
        if warmup is not None:
            if warmup not in WARMUP_TYPES:
                raise CheckValueError(
                    f'{owner}: "{warmup}" is not a supported warmup type; valid types are '
                    f"{list(WARMUP_TYPES)} (or None for no warmup)"
                )
            if isinstance(warmup_iters, bool) or not isinstance(warmup_iters, int):
                raise CheckTypeError(
                    f'{owner}: "warmup_iters" must be an int, got {warmup_iters!r}'
                )
            if warmup_iters <= 0:
                raise CheckValueError(
                    f'{owner}: "warmup_iters" must be a positive integer when warmup={warmup!r}, '
                    f"got {warmup_iters}"
                )
            if not 0 < warmup_ratio <= 1.0:
                raise CheckValueError(
                    f'{owner}: "warmup_ratio" must be in (0, 1], got {warmup_ratio}'
                )
        self.by_epoch = by_epoch
        self.warmup = warmup
        self.warmup_ratio = warmup_ratio
        self.warmup_by_epoch = warmup_by_epoch
        # mmcv: with warmup_by_epoch the iteration count is known once the loader is.
        self.warmup_epochs: int | None = warmup_iters if warmup_by_epoch else None
        self.warmup_iters: int | None = None if warmup_by_epoch else warmup_iters
        self.base_values: GroupValues = []  # initial value of every param group
        self.regular_values: GroupValues = []  # value without warmup at the current position
        self._restored: dict | None = None  # a loaded state, applied at before_run
        # mmcv's method names (get_lr, get_regular_lr, get_warmup_lr), looked up at every call
        # so that a subclass overriding one (as mmdet's YOLOX hook does) is honoured.
        self._mmcv_names = {
            what: f"get_{what}{self.value_name}" for what in ("", "regular_", "warmup_")
        }

    # -- the family's value in a param group ----------------------------------------------------
    def get_group_value(self, group: dict) -> float:
        """Return the scheduled value of a param group."""
        raise NotImplementedError

    def set_group_value(self, group: dict, value: float) -> None:
        """Set the scheduled value of a param group."""
        raise NotImplementedError

    @staticmethod
    def apply_warmup(value: float, factor: float) -> float:
        """Return the warmup value of a regular ``value`` at warmup ``factor``."""
        raise NotImplementedError

    def scheduled_value(self, runner: RunnerLike, base: float) -> float:
        """The policy behind the family's ``get_<name>``; the shared shapes implement it."""
        raise NotImplementedError(
            f"{type(self).__name__} has no schedule: implement get_{self.value_name}()"
        )

    # -- schedule -------------------------------------------------------------------------------
    def regular_values_at(self, runner: RunnerLike) -> GroupValues:
        """Scheduled (non-warmup) value of every param group at the runner's position."""
        policy = getattr(self, self._mmcv_names[""])
        return map_groups(self.base_values, lambda base: policy(runner, base))

    def warmup_factor(self, cur_iters: int) -> float:
        """Warmup factor at iteration ``cur_iters``: ``warmup_ratio`` at 0 up to 1 at the end."""
        if self.warmup == "constant":
            return self.warmup_ratio
        if self.warmup == "linear":
            return 1 - (1 - cur_iters / self.warmup_iters) * (1 - self.warmup_ratio)
        if self.warmup == "exp":
            return self.warmup_ratio ** (1 - cur_iters / self.warmup_iters)
        raise ValueError(f"no warmup is configured (warmup={self.warmup!r})")

    def warmup_values_at(self, cur_iters: int) -> GroupValues:
        """Warmup value of every group at iteration ``cur_iters`` (from ``regular_values``)."""
        factor = self.warmup_factor(cur_iters)
        return map_groups(self.regular_values, lambda value: self.apply_warmup(value, factor))

    def set_values(self, runner: RunnerLike, values: GroupValues) -> None:
        """Write one value per param group (a dict of lists for several optimizers)."""
        for name, optim in named_optimizers(runner):
            for group, value in zip(optim.param_groups, values_of(values, name)):
                self.set_group_value(group, value)

    def _regular(self, runner: RunnerLike) -> GroupValues:
        return getattr(self, self._mmcv_names["regular_"])(runner)

    def _warmup(self, cur_iter: int) -> GroupValues:
        return getattr(self, self._mmcv_names["warmup_"])(cur_iter)

    # -- hook stages ----------------------------------------------------------------------------
    def before_run(self, runner: RunnerLike) -> None:
        """Record each group's ``initial_<name>`` (a restored state wins; else kept if set)."""
        key = f"initial_{self.value_name}"
        restored = None if self._restored is None else self._restored[self.state_key]
        if restored is not None:
            check_group_shape(type(self).__name__, runner, restored, f"base {self.value_label}s")
        base: dict = {}
        for name, optim in named_optimizers(runner):
            defaults = self.default_initial_values(name, optim)
            for i, group in enumerate(optim.param_groups):
                if restored is not None:
                    group[key] = values_of(restored, name)[i]
                group.setdefault(key, defaults[i])
            base[name] = [group[key] for group in optim.param_groups]
        self.base_values = from_named(base)

    def default_initial_values(self, name: str | None, optim: Any) -> list:
        """Initial value of each group of ``optim`` when it has none yet: its current value."""
        return [self.get_group_value(group) for group in optim.param_groups]

    def _ensure_warmup_iters(self, runner: RunnerLike) -> None:
        if self.warmup_iters is None:
            self.warmup_iters = self.warmup_epochs * len(runner.data_loader)

    def before_train_epoch(self, runner: RunnerLike) -> None:
        """Epoch schedules: set the epoch's values."""
        self._ensure_warmup_iters(runner)
        if self.by_epoch:
            self.regular_values = self._regular(runner)
            self.set_values(runner, self.regular_values)

    def before_train_iter(self, runner: RunnerLike) -> None:
        """Iteration schedules: set the iteration's values; both kinds: apply the warmup."""
        self._ensure_warmup_iters(runner)
        cur_iter = runner.iter
        if not self.by_epoch:
            self.regular_values = self._regular(runner)
            if self.warmup is None or cur_iter >= self.warmup_iters:
                self.set_values(runner, self.regular_values)
            else:
                self.set_values(runner, self._warmup(cur_iter))
            return
        if self.warmup is None or cur_iter > self.warmup_iters:
            return
        if not self.regular_values:  # resumed mid-epoch without a before_train_epoch call
            self.regular_values = self._regular(runner)
        if cur_iter == self.warmup_iters:
            self.set_values(runner, self.regular_values)
        else:
            self.set_values(runner, self._warmup(cur_iter))

    # -- resume ---------------------------------------------------------------------------------
    @property
    def state_key(self) -> str:
        """The key of the initial values in :meth:`state_dict` (``'base_lr'``, ...)."""
        return f"base_{self.value_name}"

    def state_keys(self) -> tuple[str, ...]:
        """The keys a state must hold to be loaded."""
        return (self.state_key,)

    def current_state(self) -> dict:
        """The state recorded by this run (empty before ``before_run``)."""
        return {self.state_key: self.base_values} if self.base_values else {}

    def state_dict(self) -> dict:
        """Return the per-group initial values (a loaded state until ``before_run`` ran)."""
        state = self.current_state() or self._restored or {}
        return copy.deepcopy(state)

    def load_state_dict(self, state: dict) -> None:
        """Restore the initial values; they win over the optimizer's at the next ``before_run``.

        Args:
            state: A dict returned by :meth:`state_dict`.
        """
        if not state:
            return
        missing = [key for key in self.state_keys() if key not in state]
        if missing:
            names = ", ".join(f'"{key}"' for key in missing)
            raise KeyError(f"{type(self).__name__}: state has no {names}: {sorted(state)}")
        self._restored = copy.deepcopy(state)
        self.adopt_state(self._restored)

    def adopt_state(self, state: dict) -> None:
        """Use a loaded state from the next stage on (``before_run`` also writes it to groups)."""
        self.base_values = copy.deepcopy(state[self.state_key])
