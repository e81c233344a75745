"""Learning-rate schedule hooks (mmcv 1.x ``lr_config`` policies).

Every hook derives the learning rate of each param group from the group's initial LR
(``base_lr``) and the runner's position (``runner.epoch`` or ``runner.iter``), so the schedule
is a pure function of where training is. The hooks are registered under mmcv's names, so
``lr_config=dict(policy='step', step=[8, 11])`` builds :class:`StepLrUpdaterHook`. The
bookkeeping (initial LRs, warmup, stages, resume) is :class:`.param_schedule.ParamScheduleHook`'s;
the shapes shared with the momentum hooks are in :mod:`.schedule_policies`.

Resume: ``state_dict()`` holds the per-group base LRs. A resumed run restores them (before or
after ``before_run``) and recomputes the same LRs as an uninterrupted run.
"""

from __future__ import annotations

import operator
from typing import Any, Union

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.runner.hooks.hook import Hook as Hook
from mmpar.utils.compat_errors import CheckValueError

from ..runner_protocol import RunnerLike
from .hook import HOOKS
from .param_schedule import (
    GroupValues,
    ParamScheduleHook,
    config_values,
    format_param,
    group_values_property,
    map_groups,
    progress_of,
    values_of,
)
from .schedule_policies import (
    AnnealToTarget,
    CyclicMixin,
    MinTarget,
    OneCycleMixin,
    StepDecay,
    annealing_cos,
    annealing_linear,
    check_unit_interval,
    get_position_from_periods,
    one_cycle_phases,
    one_cycle_value,
)


class LrUpdaterHook(ParamScheduleHook):
    """Base class of LR schedules: sets ``param_group['lr']`` before epochs/iterations.

    A policy implements :meth:`get_lr` (or takes it from a mixin of
    :mod:`.schedule_policies`). The warmup LR is ``warmup factor * regular LR``: it starts at
    ``warmup_ratio * regular_lr``.

    Args:
        by_epoch: Update the LR once per epoch (``True``) or every iteration.
        warmup: ``None``, ``'constant'``, ``'linear'`` or ``'exp'``.
        warmup_iters: Length of the warmup, in iterations (or epochs if ``warmup_by_epoch``).
        warmup_ratio: The warmup starts at ``warmup_ratio * regular_lr``; in ``(0, 1]``.
        warmup_by_epoch: Count ``warmup_iters`` in epochs.

    Example:
        >>> hook = StepLrUpdaterHook(step=[8, 11], warmup='linear', warmup_iters=500)
    """

    value_name = "lr"
    value_label = "LR"
    apply_warmup = staticmethod(operator.mul)  # warmup LR = factor * regular LR
    # mmcv's names of the base class's attributes and methods
    base_lr = group_values_property("base_values", "Initial LR of every param group.")
    regular_lr = group_values_property("regular_values", "LR without warmup at the position.")
    get_regular_lr = ParamScheduleHook.regular_values_at
    get_warmup_lr = ParamScheduleHook.warmup_values_at
    _set_lr = ParamScheduleHook.set_values

    def get_group_value(self, group: dict) -> float:
        """Return ``group['lr']``."""
        return group["lr"]

    def set_group_value(self, group: dict, value: float) -> None:
        """Set ``group['lr']``."""
        group["lr"] = value

    def get_lr(self, runner: RunnerLike, base_lr: float) -> float:
        """Return the scheduled LR of a group whose initial LR is ``base_lr``."""
        return self.scheduled_value(runner, base_lr)


@HOOKS.register_module()
class FixedLrUpdaterHook(LrUpdaterHook):
    """Constant LR (only the warmup changes it)."""

    def get_lr(self, runner: RunnerLike, base_lr: float) -> float:
        """Return ``base_lr``."""
        return base_lr


@HOOKS.register_module()
class StepLrUpdaterHook(StepDecay, LrUpdaterHook):
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
        self._init_step(step, gamma, min_lr)
        super().__init__(**kwargs)


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

    def get_lr(self, runner: RunnerLike, base_lr: float) -> float:
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

    def get_lr(self, runner: RunnerLike, base_lr: float) -> float:
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

    def get_lr(self, runner: RunnerLike, base_lr: float) -> float:
        """Return the inverse-decayed LR."""
        progress = runner.epoch if self.by_epoch else runner.iter
        return base_lr * (1 + self.gamma * progress) ** (-self.power)


class _AnnealingLrUpdaterHook(AnnealToTarget, LrUpdaterHook):
    """Anneal from ``base_lr`` to the target over the whole training with ``anneal``.

    Args:
        min_lr: Final LR. Exactly one of ``min_lr`` and ``min_lr_ratio`` must be set.
        min_lr_ratio: Final LR as a fraction of ``base_lr``.
        **kwargs: :class:`LrUpdaterHook` arguments.
    """

    def __init__(
        self, min_lr: float | None = None, min_lr_ratio: float | None = None, **kwargs: Any
    ) -> None:
        self._init_target(min_lr, min_lr_ratio)
        super().__init__(**kwargs)


@HOOKS.register_module()
class CosineAnnealingLrUpdaterHook(_AnnealingLrUpdaterHook):
    """Cosine-anneal each group from ``base_lr`` to ``min_lr`` over the whole training.

    ``lr = min_lr + (base_lr - min_lr) * (1 + cos(pi * progress / max_progress)) / 2``. Give
    ``min_lr`` or ``min_lr_ratio`` (``min_lr = base_lr * min_lr_ratio``), not both, and any
    :class:`LrUpdaterHook` arguments.
    """

    anneal = staticmethod(annealing_cos)


@HOOKS.register_module()
class FlatCosineAnnealingLrUpdaterHook(MinTarget, LrUpdaterHook):
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
        self._init_target(min_lr, min_lr_ratio)
        check_unit_interval(type(self).__name__, "start_percent", start_percent)
        self.start_percent = start_percent
        super().__init__(**kwargs)

    def get_lr(self, runner: RunnerLike, base_lr: float) -> float:
        """Return ``base_lr`` during the flat part, else the cosine-annealed LR."""
        progress, max_progress = progress_of(runner, self.by_epoch)
        start = round(max_progress * self.start_percent)
        if progress < start:
            return base_lr
        return annealing_cos(
            base_lr, self.target_value(base_lr), (progress - start) / (max_progress - start)
        )


@HOOKS.register_module()
class CosineRestartLrUpdaterHook(MinTarget, LrUpdaterHook):
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
        self._init_target(min_lr, min_lr_ratio)
        if restart_weights is None:
            restart_weights = [1]
        if not isinstance(periods, (list, tuple)) or not all(
            isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in periods
        ):
            raise CheckValueError(
                f'{owner}: "periods" must be a list of positive ints, got {periods!r}'
            )
        if len(periods) != len(restart_weights):
            raise CheckValueError(
                f'{owner}: "periods" and "restart_weights" must have the same length, got '
                f"{len(periods)} periods and {len(restart_weights)} weights"
            )
        self.periods = list(periods)
        self.restart_weights = list(restart_weights)
        self.cumulative_periods = [sum(self.periods[: i + 1]) for i in range(len(self.periods))]
        super().__init__(**kwargs)

    def get_lr(self, runner: RunnerLike, base_lr: float) -> float:
        """Return the LR within the current cycle."""
        progress = runner.epoch if self.by_epoch else runner.iter
        idx = get_position_from_periods(progress, self.cumulative_periods)
        nearest_restart = 0 if idx == 0 else self.cumulative_periods[idx - 1]
        alpha = min((progress - nearest_restart) / self.periods[idx], 1)
        return annealing_cos(base_lr, self.target_value(base_lr), alpha, self.restart_weights[idx])


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

    __init__ = CyclicMixin.make_init(default_target_ratio=(10, 1e-4))

    @property
    def lr_phases(self) -> list[list]:
        """``[start_iter, end_iter, start_ratio, end_ratio]`` of the rise and the fall."""
        return self._cycle.phases


@HOOKS.register_module()
class OneCycleLrUpdaterHook(OneCycleMixin, LrUpdaterHook):
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
        self._init_one_cycle(kwargs, pct_start, anneal_strategy, three_phase, max_lr=max_lr)
        if total_steps is not None and (
            isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps <= 0
        ):
            raise CheckValueError(
                f'{owner}: "total_steps" must be a positive int, got {total_steps!r}'
            )
        self._max_lr = max_lr
        self.total_steps = total_steps
        self.div_factor = div_factor
        self.final_div_factor = final_div_factor
        self.lr_phases: list[list] = []  # [end_iter, start_factor, end_factor] per phase
        self._config_base_lr: GroupValues = []  # max_lr / div_factor, set by before_run
        super().__init__(**kwargs)

    def before_run(self, runner: RunnerLike) -> None:
        """Derive the initial LRs from ``max_lr`` and lay out the phases."""
        owner = type(self).__name__
        total_steps = self.total_steps if self.total_steps is not None else runner.max_iters
        if total_steps < runner.max_iters:
            raise ValueError(
                f"{owner}: total_steps={total_steps} must be >= the runner's max_iters="
                f"{runner.max_iters}"
            )
        self._config_base_lr = map_groups(
            config_values(runner, self._max_lr), lambda lr: lr / self.div_factor
        )
        super().before_run(runner)  # records initial_lr; a restored state wins
        if self._restored is None:
            # mmcv: the schedule starts from max_lr / div_factor even if a group had an
            # initial_lr already (e.g. from a loaded optimizer state).
            self.base_values = self._config_base_lr
        self.lr_phases = one_cycle_phases(
            self.pct_start,
            total_steps,
            self.three_phase,
            1,
            self.div_factor,
            1 / self.final_div_factor,
        )

    def default_initial_values(self, name: str | None, optim: Any) -> list:
        """``max_lr / div_factor`` of each group."""
        return values_of(self._config_base_lr, name)

    def get_lr(self, runner: RunnerLike, base_lr: float) -> float:
        """Return the LR at ``runner.iter``."""
        return one_cycle_value(
            runner.iter,
            self.lr_phases,
            lambda f: base_lr * f,
            self.anneal_func,
        )


@HOOKS.register_module()
class LinearAnnealingLrUpdaterHook(_AnnealingLrUpdaterHook):
    """Linearly anneal each group from ``base_lr`` to ``min_lr`` over the whole training.

    Arguments as :class:`CosineAnnealingLrUpdaterHook` (``min_lr`` or ``min_lr_ratio``).
    """

    anneal = staticmethod(annealing_linear)


__all__ = [
    "CosineAnnealingLrUpdaterHook",
    "CosineRestartLrUpdaterHook",
    "CyclicLrUpdaterHook",
    "ExpLrUpdaterHook",
    "FixedLrUpdaterHook",
    "FlatCosineAnnealingLrUpdaterHook",
    "InvLrUpdaterHook",
    "LinearAnnealingLrUpdaterHook",
    "LrUpdaterHook",
    "OneCycleLrUpdaterHook",
    "PolyLrUpdaterHook",
    "StepLrUpdaterHook",
    "annealing_cos",
    "annealing_linear",
    "format_param",
    "get_position_from_periods",
]
