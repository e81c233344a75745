"""Learning-rate schedule hooks (mmcv 1.x ``lr_config`` policies).

Every hook derives the learning rate of each param group from the group's initial LR
(``base_lr``) and the runner's position (``runner.epoch`` or ``runner.iter``), so the schedule
is a pure function of where training is. The hooks are registered under mmcv's names, so
``lr_config=dict(policy='step', step=[8, 11])`` builds :class:`StepLrUpdaterHook`.

Resume: ``state_dict()`` holds the per-group base LRs. A resumed run restores them (before or
after ``before_run``) and recomputes the same LRs as an uninterrupted run.
"""

from __future__ import annotations

import copy
import numbers
from math import cos, pi
from typing import Any, Callable, Union

from .hook import HOOKS, Hook

GroupValues = Union[list, dict]  # list of per-group values, or {optimizer name: list}

WARMUP_TYPES = ("constant", "linear", "exp")
ANNEAL_STRATEGIES = ("cos", "linear")


# ---------------------------------------------------------------------------------------------
# Helpers shared with momentum_updater.py (mmcv public names first).
# ---------------------------------------------------------------------------------------------
def annealing_cos(start: float, end: float, factor: float, weight: float = 1.0) -> float:
    """Cosine-anneal from ``weight * start + (1 - weight) * end`` to ``end``.

    Args:
        start: Value at ``factor == 0`` (when ``weight == 1``).
        end: Value at ``factor == 1``.
        factor: Progress in ``[0, 1]``.
        weight: Scales the distance between ``start`` and ``end`` (used by restarts).

    Returns:
        The annealed value.
    """
    return end + 0.5 * weight * (start - end) * (cos(pi * factor) + 1)


def annealing_linear(start: float, end: float, factor: float) -> float:
    """Linearly anneal from ``start`` to ``end`` as ``factor`` goes from 0 to 1.

    Args:
        start: Value at ``factor == 0``.
        end: Value at ``factor == 1``.
        factor: Progress in ``[0, 1]``.

    Returns:
        The annealed value.
    """
    return start + (end - start) * factor


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


def get_position_from_periods(iteration: int, cumulative_periods: list[int]) -> int:
    """Return the index of the first cumulative period that ``iteration`` has not reached.

    For ``cumulative_periods = [100, 200, 300]``: 50 → 0, 210 → 2, 200 → 2.

    Raises:
        ValueError: ``iteration`` is past the last period.
    """
    for i, period in enumerate(cumulative_periods):
        if iteration < period:
            return i
    raise ValueError(
        f"Current iteration/epoch {iteration} exceeds the cumulative periods "
        f'{cumulative_periods}; make the "periods" of CosineRestart cover the whole training'
    )


def check_step(owner: str, step: Any) -> None:
    """Validate a Step schedule's ``step`` (positive int, or list of positive ints)."""
    steps = step if isinstance(step, (list, tuple)) else [step]
    if not isinstance(step, (int, list, tuple)) or isinstance(step, bool):
        raise TypeError(f'{owner}: "step" must be an int or a list of ints, got {step!r}')
    for s in steps:
        if not isinstance(s, int) or isinstance(s, bool) or s <= 0:
            raise ValueError(f'{owner}: "step" must hold positive integers, got {step!r}')


def step_exponent(progress: int, step: Union[int, list]) -> int:
    """Number of decays a Step schedule has applied at ``progress``."""
    if isinstance(step, int):
        return progress // step
    return sum(1 for s in step if progress >= s)


def check_min_or_ratio(owner: str, name: str, value: Any, ratio: Any) -> None:
    """Require exactly one of ``min_<name>`` / ``min_<name>_ratio`` to be set."""
    if (value is None) == (ratio is None):
        raise ValueError(
            f'{owner}: set exactly one of "min_{name}" and "min_{name}_ratio", '
            f"got min_{name}={value!r}, min_{name}_ratio={ratio!r}"
        )


def check_unit_interval(owner: str, name: str, value: Any) -> None:
    """Require ``0 <= value <= 1`` (a real number)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
        raise ValueError(f'{owner}: expected "{name}" to be a number in [0, 1], got {value!r}')


def anneal_func(owner: str, strategy: str) -> Callable[[float, float, float], float]:
    """Return the annealing function for ``'cos'`` or ``'linear'``."""
    if strategy == "cos":
        return annealing_cos
    if strategy == "linear":
        return annealing_linear
    raise ValueError(
        f"{owner}: anneal_strategy must be one of {list(ANNEAL_STRATEGIES)}, got {strategy!r}"
    )


def check_not_by_epoch(owner: str, by_epoch: bool) -> None:
    """Cyclic and OneCycle schedules are defined per iteration only."""
    if by_epoch:
        raise ValueError(f"{owner} only supports by_epoch=False (it is an iteration schedule)")


def progress_of(runner: Any, by_epoch: bool) -> tuple[int, int]:
    """Return ``(progress, max_progress)`` in epochs or iterations."""
    if by_epoch:
        return runner.epoch, runner.max_epochs
    return runner.iter, runner.max_iters


def map_groups(values: GroupValues, fn: Callable[[Any], Any]) -> GroupValues:
    """Apply ``fn`` to every per-group value of a list or a dict of lists."""
    if isinstance(values, dict):
        return {k: [fn(v) for v in vs] for k, vs in values.items()}
    return [fn(v) for v in values]


def named_optimizers(runner: Any) -> list[tuple[str | None, Any]]:
    """``[(name, optimizer)]`` for a dict of optimizers, ``[(None, optimizer)]`` otherwise."""
    if isinstance(runner.optimizer, dict):
        return list(runner.optimizer.items())
    return [(None, runner.optimizer)]


def check_group_shape(owner: str, runner: Any, values: GroupValues, what: str) -> None:
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


# ---------------------------------------------------------------------------------------------
# Base class
# ---------------------------------------------------------------------------------------------
class LrUpdaterHook(Hook):
    """Base class of LR schedules: sets ``param_group['lr']`` before epochs/iterations.

    Subclasses implement :meth:`get_lr`. The runner needs ``optimizer`` (an optimizer or a dict
    of them), ``epoch``, ``iter``, ``max_epochs``/``max_iters`` and ``data_loader``.

    Args:
        by_epoch: Update the LR once per epoch (``True``) or every iteration.
        warmup: ``None``, ``'constant'``, ``'linear'`` or ``'exp'``.
        warmup_iters: Length of the warmup, in iterations (or epochs if ``warmup_by_epoch``).
        warmup_ratio: The warmup starts at ``warmup_ratio * regular_lr``; in ``(0, 1]``.
        warmup_by_epoch: Count ``warmup_iters`` in epochs.

    Example:
        >>> hook = StepLrUpdaterHook(step=[8, 11], warmup='linear', warmup_iters=500)
    """

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
                raise ValueError(
                    f'{owner}: "{warmup}" is not a supported warmup type; valid types are '
                    f"{list(WARMUP_TYPES)} (or None for no warmup)"
                )
            if isinstance(warmup_iters, bool) or not isinstance(warmup_iters, int):
                raise TypeError(f'{owner}: "warmup_iters" must be an int, got {warmup_iters!r}')
            if warmup_iters <= 0:
                raise ValueError(
                    f'{owner}: "warmup_iters" must be a positive integer when warmup={warmup!r}, '
                    f"got {warmup_iters}"
                )
            if not 0 < warmup_ratio <= 1.0:
                raise ValueError(f'{owner}: "warmup_ratio" must be in (0, 1], got {warmup_ratio}')
        self.by_epoch = by_epoch
        self.warmup = warmup
        self.warmup_ratio = warmup_ratio
        self.warmup_by_epoch = warmup_by_epoch
        # mmcv: with warmup_by_epoch the iteration count is known once the loader is.
        self.warmup_epochs: int | None = warmup_iters if warmup_by_epoch else None
        self.warmup_iters: int | None = None if warmup_by_epoch else warmup_iters
        self.base_lr: GroupValues = []  # initial LR of every param group
        self.regular_lr: GroupValues = []  # LR without warmup at the current position
        self._restored_base_lr: GroupValues | None = None

    # -- schedule ------------------------------------------------------------------------------
    def get_lr(self, runner: Any, base_lr: float) -> float:
        """Return the scheduled LR of a group whose initial LR is ``base_lr``."""
        raise NotImplementedError

    def get_regular_lr(self, runner: Any) -> GroupValues:
        """Scheduled (non-warmup) LR of every param group at the runner's position."""
        return map_groups(self.base_lr, lambda base: self.get_lr(runner, base))

    def get_warmup_lr(self, cur_iters: int) -> GroupValues:
        """Warmup LR of every group at iteration ``cur_iters`` (scales ``regular_lr``)."""
        if self.warmup == "constant":
            k = self.warmup_ratio
        elif self.warmup == "linear":
            k = 1 - (1 - cur_iters / self.warmup_iters) * (1 - self.warmup_ratio)
        elif self.warmup == "exp":
            k = self.warmup_ratio ** (1 - cur_iters / self.warmup_iters)
        else:
            raise ValueError(f"no warmup is configured (warmup={self.warmup!r})")
        return map_groups(self.regular_lr, lambda lr: lr * k)

    def _set_lr(self, runner: Any, lr_groups: GroupValues) -> None:
        for name, optim in named_optimizers(runner):
            lrs = lr_groups if name is None else lr_groups[name]
            for group, lr in zip(optim.param_groups, lrs):
                group["lr"] = lr

    # -- hook stages ---------------------------------------------------------------------------
    def before_run(self, runner: Any) -> None:
        """Record each group's ``initial_lr`` (kept if already there, e.g. after a resume)."""
        if self._restored_base_lr is not None:
            check_group_shape(type(self).__name__, runner, self._restored_base_lr, "base LRs")
            self._write_initial_lr(runner, self._restored_base_lr)
        self.base_lr = self._read_initial_lr(runner)

    def _read_initial_lr(self, runner: Any) -> GroupValues:
        base: dict = {}
        for name, optim in named_optimizers(runner):
            for group in optim.param_groups:
                group.setdefault("initial_lr", group["lr"])
            base[name] = [group["initial_lr"] for group in optim.param_groups]
        return base[None] if None in base else base

    def _write_initial_lr(self, runner: Any, values: GroupValues) -> None:
        for name, optim in named_optimizers(runner):
            for group, lr in zip(optim.param_groups, values if name is None else values[name]):
                group["initial_lr"] = lr

    def _ensure_warmup_iters(self, runner: Any) -> None:
        if self.warmup_iters is None:
            self.warmup_iters = self.warmup_epochs * len(runner.data_loader)

    def before_train_epoch(self, runner: Any) -> None:
        """Epoch schedules: set the epoch's LR."""
        self._ensure_warmup_iters(runner)
        if not self.by_epoch:
            return
        self.regular_lr = self.get_regular_lr(runner)
        self._set_lr(runner, self.regular_lr)

    def before_train_iter(self, runner: Any) -> None:
        """Iteration schedules: set the iteration's LR; both kinds: apply the warmup."""
        self._ensure_warmup_iters(runner)
        cur_iter = runner.iter
        if not self.by_epoch:
            self.regular_lr = self.get_regular_lr(runner)
            if self.warmup is None or cur_iter >= self.warmup_iters:
                self._set_lr(runner, self.regular_lr)
            else:
                self._set_lr(runner, self.get_warmup_lr(cur_iter))
            return
        if self.warmup is None or cur_iter > self.warmup_iters:
            return
        if not self.regular_lr:  # resumed mid-epoch without a before_train_epoch call
            self.regular_lr = self.get_regular_lr(runner)
        if cur_iter == self.warmup_iters:
            self._set_lr(runner, self.regular_lr)
        else:
            self._set_lr(runner, self.get_warmup_lr(cur_iter))

    # -- resume --------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Return ``{'base_lr': ...}`` (per-group initial LRs; a dict for several optimizers)."""
        return {"base_lr": copy.deepcopy(self.base_lr)} if self.base_lr else {}

    def load_state_dict(self, state: dict) -> None:
        """Restore the initial LRs; they win over the optimizer's at the next ``before_run``.

        Args:
            state: A dict returned by :meth:`state_dict`.
        """
        if not state:
            return
        if "base_lr" not in state:
            raise KeyError(f'{type(self).__name__}: state has no "base_lr": {sorted(state)}')
        self._restored_base_lr = copy.deepcopy(state["base_lr"])
        self.base_lr = copy.deepcopy(state["base_lr"])


# ---------------------------------------------------------------------------------------------
# Policies
# ---------------------------------------------------------------------------------------------
@HOOKS.register_module()
class FixedLrUpdaterHook(LrUpdaterHook):
    """Constant LR (only the warmup changes it)."""

    def get_lr(self, runner: Any, base_lr: float) -> float:
        """Return ``base_lr``."""
        return base_lr


@HOOKS.register_module()
class StepLrUpdaterHook(LrUpdaterHook):
    """Multiply the LR by ``gamma`` at given epochs/iterations.

    Args:
        step: Decay interval (int) or the positions where the LR decays (list of ints).
        gamma: Decay factor.
        min_lr: Lower clip of the LR (``None``: no clipping).
        **kwargs: :class:`LrUpdaterHook` arguments.
    """

    def __init__(
        self,
        step: Union[int, list[int]],
        gamma: float = 0.1,
        min_lr: float | None = None,
        **kwargs: Any,
    ) -> None:
        check_step(type(self).__name__, step)
        self.step = list(step) if isinstance(step, tuple) else step
        self.gamma = gamma
        self.min_lr = min_lr
        super().__init__(**kwargs)

    def get_lr(self, runner: Any, base_lr: float) -> float:
        """Return ``base_lr * gamma ** (decays so far)``, clipped at ``min_lr``."""
        progress = runner.epoch if self.by_epoch else runner.iter
        lr = base_lr * self.gamma ** step_exponent(progress, self.step)
        return lr if self.min_lr is None else max(lr, self.min_lr)


@HOOKS.register_module()
class ExpLrUpdaterHook(LrUpdaterHook):
    """``lr = base_lr * gamma ** progress``.

    Args:
        gamma: Decay factor per epoch/iteration.
        **kwargs: :class:`LrUpdaterHook` arguments.
    """

    def __init__(self, gamma: float, **kwargs: Any) -> None:
        self.gamma = gamma
        super().__init__(**kwargs)

    def get_lr(self, runner: Any, base_lr: float) -> float:
        """Return the exponentially decayed LR."""
        progress = runner.epoch if self.by_epoch else runner.iter
        return base_lr * self.gamma**progress


@HOOKS.register_module()
class PolyLrUpdaterHook(LrUpdaterHook):
    """``lr = (base_lr - min_lr) * (1 - progress / max_progress) ** power + min_lr``.

    Args:
        power: Polynomial power.
        min_lr: LR reached at the end of training.
        **kwargs: :class:`LrUpdaterHook` arguments.
    """

    def __init__(self, power: float = 1.0, min_lr: float = 0.0, **kwargs: Any) -> None:
        self.power = power
        self.min_lr = min_lr
        super().__init__(**kwargs)

    def get_lr(self, runner: Any, base_lr: float) -> float:
        """Return the polynomially decayed LR."""
        progress, max_progress = progress_of(runner, self.by_epoch)
        coeff = (1 - progress / max_progress) ** self.power
        return (base_lr - self.min_lr) * coeff + self.min_lr


@HOOKS.register_module()
class InvLrUpdaterHook(LrUpdaterHook):
    """``lr = base_lr * (1 + gamma * progress) ** (-power)``.

    Args:
        gamma: Decay rate.
        power: Decay power.
        **kwargs: :class:`LrUpdaterHook` arguments.
    """

    def __init__(self, gamma: float, power: float = 1.0, **kwargs: Any) -> None:
        self.gamma = gamma
        self.power = power
        super().__init__(**kwargs)

    def get_lr(self, runner: Any, base_lr: float) -> float:
        """Return the inverse-decayed LR."""
        progress = runner.epoch if self.by_epoch else runner.iter
        return base_lr * (1 + self.gamma * progress) ** (-self.power)


class _MinLrMixin:
    """Shared ``min_lr`` / ``min_lr_ratio`` handling of the annealing policies."""

    min_lr: float | None
    min_lr_ratio: float | None

    def _init_min_lr(self, min_lr: float | None, min_lr_ratio: float | None) -> None:
        check_min_or_ratio(type(self).__name__, "lr", min_lr, min_lr_ratio)
        self.min_lr = min_lr
        self.min_lr_ratio = min_lr_ratio

    def target_lr(self, base_lr: float) -> float:
        """The LR the annealing ends at."""
        return base_lr * self.min_lr_ratio if self.min_lr_ratio is not None else self.min_lr


class _AnnealingLrUpdaterHook(_MinLrMixin, LrUpdaterHook):
    """Anneal from ``base_lr`` to the target over the whole training with ``anneal``.

    Args:
        min_lr: Final LR. Exactly one of ``min_lr`` and ``min_lr_ratio`` must be set.
        min_lr_ratio: Final LR as a fraction of ``base_lr``.
        **kwargs: :class:`LrUpdaterHook` arguments.
    """

    anneal: Callable[[float, float, float], float]

    def __init__(
        self, min_lr: float | None = None, min_lr_ratio: float | None = None, **kwargs: Any
    ) -> None:
        self._init_min_lr(min_lr, min_lr_ratio)
        super().__init__(**kwargs)

    def get_lr(self, runner: Any, base_lr: float) -> float:
        """Return the annealed LR."""
        progress, max_progress = progress_of(runner, self.by_epoch)
        return self.anneal(base_lr, self.target_lr(base_lr), progress / max_progress)


@HOOKS.register_module()
class CosineAnnealingLrUpdaterHook(_AnnealingLrUpdaterHook):
    """Cosine-anneal from ``base_lr`` to the target over the whole training.

    Args:
        min_lr: Final LR. Exactly one of ``min_lr`` and ``min_lr_ratio`` must be set.
        min_lr_ratio: Final LR as a fraction of ``base_lr``.
        **kwargs: :class:`LrUpdaterHook` arguments.
    """

    anneal = staticmethod(annealing_cos)


@HOOKS.register_module()
class FlatCosineAnnealingLrUpdaterHook(_MinLrMixin, LrUpdaterHook):
    """Keep ``base_lr`` for the first ``start_percent`` of training, then cosine-anneal.

    Args:
        start_percent: Fraction of training (in ``[0, 1]``) before the annealing starts.
        min_lr: Final LR. Exactly one of ``min_lr`` and ``min_lr_ratio`` must be set.
        min_lr_ratio: Final LR as a fraction of ``base_lr``.
        **kwargs: :class:`LrUpdaterHook` arguments.
    """

    def __init__(
        self,
        start_percent: float = 0.75,
        min_lr: float | None = None,
        min_lr_ratio: float | None = None,
        **kwargs: Any,
    ) -> None:
        self._init_min_lr(min_lr, min_lr_ratio)
        check_unit_interval(type(self).__name__, "start_percent", start_percent)
        self.start_percent = start_percent
        super().__init__(**kwargs)

    def get_lr(self, runner: Any, base_lr: float) -> float:
        """Return ``base_lr`` during the flat part, else the cosine-annealed LR."""
        progress, max_progress = progress_of(runner, self.by_epoch)
        start = round(max_progress * self.start_percent)
        if progress < start:
            return base_lr
        return annealing_cos(
            base_lr, self.target_lr(base_lr), (progress - start) / (max_progress - start)
        )


@HOOKS.register_module()
class CosineRestartLrUpdaterHook(_MinLrMixin, LrUpdaterHook):
    """Cosine annealing with warm restarts (SGDR).

    Args:
        periods: Length of each cosine cycle (epochs or iterations); they must cover training.
        restart_weights: Peak of each cycle as a fraction of ``base_lr`` (one per period).
        min_lr: Final LR of each cycle. Exactly one of ``min_lr`` and ``min_lr_ratio``.
        min_lr_ratio: Final LR as a fraction of ``base_lr``.
        **kwargs: :class:`LrUpdaterHook` arguments.
    """

    def __init__(
        self,
        periods: list[int],
        restart_weights: list[float] | None = None,
        min_lr: float | None = None,
        min_lr_ratio: float | None = None,
        **kwargs: Any,
    ) -> None:
        owner = type(self).__name__
        self._init_min_lr(min_lr, min_lr_ratio)
        if restart_weights is None:
            restart_weights = [1]
        if not isinstance(periods, (list, tuple)) or not all(
            isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in periods
        ):
            raise ValueError(f'{owner}: "periods" must be a list of positive ints, got {periods!r}')
        if len(periods) != len(restart_weights):
            raise ValueError(
                f'{owner}: "periods" and "restart_weights" must have the same length, got '
                f"{len(periods)} periods and {len(restart_weights)} weights"
            )
        self.periods = list(periods)
        self.restart_weights = list(restart_weights)
        self.cumulative_periods = [sum(self.periods[: i + 1]) for i in range(len(self.periods))]
        super().__init__(**kwargs)

    def get_lr(self, runner: Any, base_lr: float) -> float:
        """Return the LR within the current cycle."""
        progress = runner.epoch if self.by_epoch else runner.iter
        idx = get_position_from_periods(progress, self.cumulative_periods)
        nearest_restart = 0 if idx == 0 else self.cumulative_periods[idx - 1]
        alpha = min((progress - nearest_restart) / self.periods[idx], 1)
        return annealing_cos(base_lr, self.target_lr(base_lr), alpha, self.restart_weights[idx])


def parse_target_ratio(owner: str, target_ratio: Any) -> tuple[float, float]:
    """Normalise a Cyclic ``target_ratio`` to ``(peak_ratio, end_ratio)`` as mmcv does."""
    if isinstance(target_ratio, numbers.Real) and not isinstance(target_ratio, bool):
        return (target_ratio, target_ratio / 1e5)
    if isinstance(target_ratio, (list, tuple)):
        if len(target_ratio) == 1:
            return (target_ratio[0], target_ratio[0] / 1e5)
        if len(target_ratio) == 2:
            return (target_ratio[0], target_ratio[1])
    raise ValueError(
        f'{owner}: "target_ratio" must be a number or a tuple of one or two numbers, '
        f"got {target_ratio!r}"
    )


class CyclicPhases:
    """The two phases (rise to the peak, fall to the end) of a cyclic schedule.

    Shared by :class:`CyclicLrUpdaterHook` and the cyclic momentum hook.

    Args:
        owner: Hook name, for error messages.
        target_ratio: ``(peak_ratio, end_ratio)`` relative to the base value.
        cyclic_times: Number of cycles over the whole training.
        step_ratio_up: Fraction of a cycle spent rising, in ``[0, 1)``.
        anneal_strategy: ``'cos'`` or ``'linear'``.
        gamma: Per-cycle shrink of the peak's distance to the base value, in ``(0, 1]``.
    """

    def __init__(
        self,
        owner: str,
        target_ratio: Any,
        cyclic_times: int,
        step_ratio_up: float,
        anneal_strategy: str,
        gamma: float,
    ) -> None:
        self.owner = owner
        self.target_ratio = parse_target_ratio(owner, target_ratio)
        if not 0 <= step_ratio_up < 1.0:
            raise ValueError(f'{owner}: "step_ratio_up" must be in [0, 1), got {step_ratio_up}')
        if not 0 < gamma <= 1:
            raise ValueError(f'{owner}: "gamma" must be in (0, 1], got {gamma}')
        if isinstance(cyclic_times, bool) or not isinstance(cyclic_times, int) or cyclic_times <= 0:
            raise ValueError(
                f'{owner}: "cyclic_times" must be a positive int, got {cyclic_times!r}'
            )
        self.cyclic_times = cyclic_times
        self.step_ratio_up = step_ratio_up
        self.gamma = gamma
        self.anneal_func = anneal_func(owner, anneal_strategy)
        self.max_iter_per_phase: int | None = None
        self.phases: list[list] = []

    def build(self, max_iters: int) -> None:
        """Lay the phases out for a training of ``max_iters`` iterations (idempotent)."""
        per_cycle = max_iters // self.cyclic_times
        if per_cycle <= 0:
            raise ValueError(
                f"{self.owner}: max_iters={max_iters} is smaller than cyclic_times="
                f"{self.cyclic_times}; use fewer cycles"
            )
        up = int(self.step_ratio_up * per_cycle)
        self.max_iter_per_phase = per_cycle
        self.phases = [
            [0, up, 1, self.target_ratio[0]],
            [up, per_cycle, self.target_ratio[0], self.target_ratio[1]],
        ]

    def value(self, cur_iter: int, base: float) -> float:
        """Scheduled value at iteration ``cur_iter`` for a group whose base value is ``base``."""
        pos = cur_iter % self.max_iter_per_phase
        scale = self.gamma ** (cur_iter // self.max_iter_per_phase)
        for start_iter, end_iter, start_ratio, end_ratio in self.phases:
            if start_iter <= pos < end_iter:
                # gamma < 1 moves the peak towards the base value each cycle.
                if start_iter == 0:
                    end_ratio = 1 - scale + end_ratio * scale
                else:
                    start_ratio = 1 - scale + start_ratio * scale
                factor = (pos - start_iter) / (end_iter - start_iter)
                return self.anneal_func(base * start_ratio, base * end_ratio, factor)
        raise RuntimeError(f"{self.owner}: iteration {cur_iter} is in no phase {self.phases}")


class CyclicMixin:
    """Set-up shared by the cyclic LR and momentum hooks: validates and holds the cycle.

    Put it before the hook base class; its ``before_run`` lays the cycle out for
    ``runner.max_iters`` after the base class recorded the initial values.
    """

    _cycle: CyclicPhases

    def _init_cycle(
        self,
        by_epoch: bool,
        target_ratio: Any,
        cyclic_times: int,
        step_ratio_up: float,
        anneal_strategy: str,
        gamma: float,
    ) -> None:
        owner = type(self).__name__
        check_not_by_epoch(owner, by_epoch)
        self._cycle = CyclicPhases(
            owner, target_ratio, cyclic_times, step_ratio_up, anneal_strategy, gamma
        )
        self.target_ratio = self._cycle.target_ratio
        self.cyclic_times = cyclic_times
        self.step_ratio_up = step_ratio_up
        self.gamma = gamma
        self.anneal_func = self._cycle.anneal_func

    def before_run(self, runner: Any) -> None:
        """Record the initial values (base class) and lay out the cycle."""
        super().before_run(runner)  # type: ignore[misc]
        self._cycle.build(runner.max_iters)


@HOOKS.register_module()
class CyclicLrUpdaterHook(CyclicMixin, LrUpdaterHook):
    """Cyclic LR (CLR, arXiv:1506.01186) with cosine or linear annealing inside each cycle.

    Each cycle rises from ``base_lr`` to ``base_lr * target_ratio[0]`` and falls to
    ``base_lr * target_ratio[1]``. Iteration-based only.

    Args:
        by_epoch: Must be ``False``.
        target_ratio: ``(peak, end)`` ratios to ``base_lr``; a single number ``r`` means
            ``(r, r / 1e5)``.
        cyclic_times: Number of cycles during training.
        step_ratio_up: Fraction of a cycle spent rising, in ``[0, 1)``.
        anneal_strategy: ``'cos'`` or ``'linear'``.
        gamma: Each cycle's peak distance to ``base_lr`` is multiplied by ``gamma``.
        **kwargs: :class:`LrUpdaterHook` arguments.
    """

    def __init__(
        self,
        by_epoch: bool = False,
        target_ratio: Union[float, tuple] = (10, 1e-4),
        cyclic_times: int = 1,
        step_ratio_up: float = 0.4,
        anneal_strategy: str = "cos",
        gamma: float = 1,
        **kwargs: Any,
    ) -> None:
        self._init_cycle(
            by_epoch, target_ratio, cyclic_times, step_ratio_up, anneal_strategy, gamma
        )
        super().__init__(by_epoch, **kwargs)

    @property
    def lr_phases(self) -> list[list]:
        """``[start_iter, end_iter, start_ratio, end_ratio]`` of the rise and the fall."""
        return self._cycle.phases

    @property
    def max_iter_per_phase(self) -> int | None:
        """Iterations per cycle (known after ``before_run``)."""
        return self._cycle.max_iter_per_phase

    def get_lr(self, runner: Any, base_lr: float) -> float:
        """Return the LR at ``runner.iter`` within its cycle."""
        return self._cycle.value(runner.iter, base_lr)


@HOOKS.register_module()
class OneCycleLrUpdaterHook(LrUpdaterHook):
    """One-cycle LR (arXiv:1708.07120), as ``torch.optim.lr_scheduler.OneCycleLR``.

    The LR starts at ``max_lr / div_factor``, rises to ``max_lr`` at ``pct_start`` of the
    steps, then falls to ``initial / final_div_factor``. Iteration-based only.

    Args:
        max_lr: Peak LR: a number, one per param group, or a dict per optimizer name.
        total_steps: Steps of the cycle (default ``runner.max_iters``; must be at least that).
        pct_start: Fraction of the cycle spent rising, in ``[0, 1]``.
        anneal_strategy: ``'cos'`` or ``'linear'``.
        div_factor: ``initial_lr = max_lr / div_factor``.
        final_div_factor: ``min_lr = initial_lr / final_div_factor``.
        three_phase: Rise, fall back to the initial LR symmetrically, then annihilate.
        **kwargs: :class:`LrUpdaterHook` arguments (``by_epoch`` must be ``False``).
    """

    def __init__(
        self,
        max_lr: Union[float, list, dict],
        total_steps: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        div_factor: float = 25,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        **kwargs: Any,
    ) -> None:
        owner = type(self).__name__
        kwargs.setdefault("by_epoch", False)
        check_not_by_epoch(owner, kwargs["by_epoch"])
        if isinstance(max_lr, bool) or not isinstance(max_lr, (numbers.Number, list, dict)):
            raise ValueError(
                f'{owner}: "max_lr" must be a number, a list (one per param group) or a dict '
                f"(per optimizer), got {type(max_lr).__name__}"
            )
        if total_steps is not None and (
            isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps <= 0
        ):
            raise ValueError(f'{owner}: "total_steps" must be a positive int, got {total_steps!r}')
        check_unit_interval(owner, "pct_start", pct_start)
        self._max_lr = max_lr
        self.total_steps = total_steps
        self.pct_start = pct_start
        self.anneal_func = anneal_func(owner, anneal_strategy)
        self.div_factor = div_factor
        self.final_div_factor = final_div_factor
        self.three_phase = three_phase
        self.lr_phases: list[list] = []  # [end_iter, start_factor, end_factor] per phase
        super().__init__(**kwargs)

    def before_run(self, runner: Any) -> None:
        """Derive the initial LRs from ``max_lr`` and lay out the phases."""
        owner = type(self).__name__
        total_steps = self.total_steps if self.total_steps is not None else runner.max_iters
        if total_steps < runner.max_iters:
            raise ValueError(
                f"{owner}: total_steps={total_steps} must be >= the runner's max_iters="
                f"{runner.max_iters}"
            )
        base: dict = {}
        for name, optim in named_optimizers(runner):
            key = type(optim).__name__ if name is None else name
            base[name] = [lr / self.div_factor for lr in format_param(key, optim, self._max_lr)]
            for group, lr in zip(optim.param_groups, base[name]):
                group.setdefault("initial_lr", lr)
        self.base_lr = base[None] if None in base else base
        if self._restored_base_lr is not None:
            check_group_shape(owner, runner, self._restored_base_lr, "base LRs")
            self._write_initial_lr(runner, self._restored_base_lr)
            self.base_lr = copy.deepcopy(self._restored_base_lr)

        rise_end = float(self.pct_start * total_steps) - 1
        if self.three_phase:
            self.lr_phases = [
                [rise_end, 1, self.div_factor],
                [float(2 * self.pct_start * total_steps) - 2, self.div_factor, 1],
                [total_steps - 1, 1, 1 / self.final_div_factor],
            ]
        else:
            self.lr_phases = [
                [rise_end, 1, self.div_factor],
                [total_steps - 1, self.div_factor, 1 / self.final_div_factor],
            ]

    def get_lr(self, runner: Any, base_lr: float) -> float:
        """Return the LR at ``runner.iter``."""
        return one_cycle_value(
            runner.iter,
            self.lr_phases,
            lambda f: base_lr * f,
            self.anneal_func,
        )


def one_cycle_value(
    cur_iter: int,
    phases: list[list],
    resolve: Callable[[Any], float],
    anneal: Callable[[float, float, float], float],
) -> float:
    """Anneal within the phase ``cur_iter`` falls in (the last phase takes any overflow).

    Args:
        cur_iter: Current iteration.
        phases: ``[end_iter, start, end]`` per phase; ``start``/``end`` go through ``resolve``.
        resolve: Maps a phase's start/end marker to a value.
        anneal: The annealing function.

    Returns:
        The annealed value.
    """
    start_iter = 0.0
    for i, (end_iter, start, end) in enumerate(phases):
        if cur_iter <= end_iter or i == len(phases) - 1:
            span = end_iter - start_iter
            pct = (cur_iter - start_iter) / span if span else 1.0
            return anneal(resolve(start), resolve(end), pct)
        start_iter = end_iter
    raise RuntimeError("one-cycle schedule has no phases; before_run was not called")


@HOOKS.register_module()
class LinearAnnealingLrUpdaterHook(_AnnealingLrUpdaterHook):
    """Linearly anneal from ``base_lr`` to the target over the whole training.

    Args:
        min_lr: Final LR. Exactly one of ``min_lr`` and ``min_lr_ratio`` must be set.
        min_lr_ratio: Final LR as a fraction of ``base_lr``.
        **kwargs: :class:`LrUpdaterHook` arguments.
    """

    anneal = staticmethod(annealing_linear)


__all__ = [
    "LrUpdaterHook",
    "FixedLrUpdaterHook",
    "StepLrUpdaterHook",
    "ExpLrUpdaterHook",
    "PolyLrUpdaterHook",
    "InvLrUpdaterHook",
    "CosineAnnealingLrUpdaterHook",
    "FlatCosineAnnealingLrUpdaterHook",
    "CosineRestartLrUpdaterHook",
    "CyclicLrUpdaterHook",
    "OneCycleLrUpdaterHook",
    "LinearAnnealingLrUpdaterHook",
    "annealing_cos",
    "annealing_linear",
    "format_param",
    "get_position_from_periods",
]
