"""Momentum schedule hooks (mmcv 1.x ``momentum_config`` policies).

The momentum of a param group is ``group['momentum']`` (SGD, RMSprop) or ``group['betas'][0]``
(Adam-style optimizers); the hooks set whichever the group has. As with the LR hooks, the value
is a function of ``runner.epoch``/``runner.iter`` and the group's initial momentum, which
``state_dict()`` carries across a resume; the bookkeeping is
:class:`.param_schedule.ParamScheduleHook`'s, the shapes shared with the LR hooks are in
:mod:`.schedule_policies`.

mmcv bugs not copied: warmup read an attribute that only the last stage set (``regular_mom``)
and ignored the per-optimizer values for a dict of optimizers; phases were appended again on
every ``before_run``.
"""

from __future__ import annotations

import operator
from typing import Any, Union

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.runner.hooks.hook import Hook as Hook

from ..runner_protocol import RunnerLike
from .hook import HOOKS
from .param_schedule import (
    GroupValues,
    ParamScheduleHook,
    check_group_shape,
    format_param,
    from_named,
    group_values_property,
    named_optimizers,
    values_of,
)
from .schedule_policies import (
    AnnealToTarget,
    CyclicMixin,
    OneCycleMixin,
    StepDecay,
    annealing_cos,
    annealing_linear,
    one_cycle_phases,
    one_cycle_value,
)


def get_group_momentum(group: dict) -> float:
    """Return a param group's momentum (``momentum`` or ``betas[0]``)."""
    if "momentum" in group:
        return group["momentum"]
    if "betas" in group:
        return group["betas"][0]
    raise ValueError(
        'a param group has neither "momentum" nor "betas"; momentum schedules need an '
        "optimizer with momentum (SGD, RMSprop) or betas (Adam, AdamW, ...), or remove "
        "momentum_config"
    )


def set_group_momentum(group: dict, momentum: float) -> None:
    """Set a param group's momentum (``momentum`` or ``betas[0]``, keeping ``betas[1]``)."""
    if "momentum" in group:
        group["momentum"] = momentum
    elif "betas" in group:
        group["betas"] = (momentum, group["betas"][1])


class MomentumUpdaterHook(ParamScheduleHook):
    """Base class of momentum schedules: sets ``momentum`` or ``betas[0]`` of every group.

    A policy implements :meth:`get_momentum` (or takes it from a mixin of
    :mod:`.schedule_policies`).

    Args:
        by_epoch: Update once per epoch (``True``) or every iteration.
        warmup: ``None``, ``'constant'``, ``'linear'`` or ``'exp'``. The warmup momentum is
            ``regular / warmup_ratio`` at the start (momentum warms *down* to the schedule).
        warmup_iters: Length of the warmup in iterations.
        warmup_ratio: In ``(0, 1]``.
    """

    value_name = "momentum"
    value_label = "momentum"
    apply_warmup = staticmethod(operator.truediv)  # warms down: regular momentum / factor
    get_group_value = staticmethod(get_group_momentum)
    set_group_value = staticmethod(set_group_momentum)
    # mmcv's names of the base class's attributes and methods
    base_momentum = group_values_property("base_values", "Initial momentum of every group.")
    regular_momentum = group_values_property("regular_values", "Momentum without warmup.")
    get_regular_momentum = ParamScheduleHook.regular_values_at
    get_warmup_momentum = ParamScheduleHook.warmup_values_at
    _set_momentum = ParamScheduleHook.set_values

    def __init__(
        self,
        by_epoch: bool = True,
        warmup: str | None = None,
        warmup_iters: int = 0,
        warmup_ratio: float = 0.9,
    ) -> None:
        super().__init__(by_epoch, warmup, warmup_iters, warmup_ratio)

    @property
    def regular_mom(self) -> GroupValues:
        """Mmcv's alias of :attr:`regular_momentum`."""
        return self.regular_values

    def get_momentum(self, runner: RunnerLike, base_momentum: float) -> float:
        """Return the scheduled momentum of a group whose initial momentum is given."""
        return self.scheduled_value(runner, base_momentum)


@HOOKS.register_module()
class StepMomentumUpdaterHook(StepDecay, MomentumUpdaterHook):
    """Multiply the momentum by ``gamma`` at given epochs/iterations.

    Args:
        step: Decay interval (int) or the decay positions (list of ints).
        gamma: Decay factor.
        min_momentum: Lower clip (``None``: no clipping).
        **kwargs: :class:`MomentumUpdaterHook` arguments.
    """

    def __init__(
        self,
        step: Union[int, list[int]],
        gamma: float = 0.5,
        min_momentum: float | None = None,
        **kwargs: Any,
    ) -> None:
        self._init_step(step, gamma, min_momentum)
        super().__init__(**kwargs)


class _AnnealingMomentumUpdaterHook(AnnealToTarget, MomentumUpdaterHook):
    """Anneal the momentum to the target over the whole training with ``anneal``.

    Args:
        min_momentum: Final momentum. Exactly one of the two must be set.
        min_momentum_ratio: Final momentum as a fraction of the initial one.
        **kwargs: :class:`MomentumUpdaterHook` arguments.
    """

    def __init__(
        self,
        min_momentum: float | None = None,
        min_momentum_ratio: float | None = None,
        **kwargs: Any,
    ) -> None:
        self._init_target(min_momentum, min_momentum_ratio)
        super().__init__(**kwargs)


@HOOKS.register_module()
class CosineAnnealingMomentumUpdaterHook(_AnnealingMomentumUpdaterHook):
    """Cosine-anneal each group's momentum to ``min_momentum`` over the whole training.

    Give ``min_momentum`` or ``min_momentum_ratio`` (a fraction of the initial momentum), not
    both, and any :class:`MomentumUpdaterHook` arguments.
    """

    anneal = staticmethod(annealing_cos)


@HOOKS.register_module()
class LinearAnnealingMomentumUpdaterHook(_AnnealingMomentumUpdaterHook):
    """Linearly anneal each group's momentum to ``min_momentum`` over the whole training.

    Arguments as :class:`CosineAnnealingMomentumUpdaterHook`.
    """

    anneal = staticmethod(annealing_linear)


@HOOKS.register_module()
class CyclicMomentumUpdaterHook(CyclicMixin, MomentumUpdaterHook):
    """Cyclic momentum, usually paired with :class:`CyclicLrUpdaterHook` (iteration-based).

    Args:
        by_epoch: Must be ``False``.
        target_ratio: ``(low, end)`` ratios to the initial momentum; a single number ``r``
            means ``(r, r / 1e5)``.
        cyclic_times: Number of cycles during training.
        step_ratio_up: Fraction of a cycle spent in the first phase, in ``[0, 1)``.
        anneal_strategy: ``'cos'`` or ``'linear'``.
        gamma: Per-cycle shrink of the distance to the initial momentum, in ``(0, 1]``.
        **kwargs: :class:`MomentumUpdaterHook` arguments.
    """

    __init__ = CyclicMixin.make_init(default_target_ratio=(0.85 / 0.95, 1))

    @property
    def momentum_phases(self) -> list[list]:
        """``[start_iter, end_iter, start_ratio, end_ratio]`` of the two phases."""
        return self._cycle.phases


@HOOKS.register_module()
class OneCycleMomentumUpdaterHook(OneCycleMixin, MomentumUpdaterHook):
    """One-cycle momentum, cycled inversely to :class:`OneCycleLrUpdaterHook`.

    Momentum starts at ``max_momentum``, falls to ``base_momentum`` at ``pct_start`` of
    ``runner.max_iters``, then rises back. Works with ``momentum`` and Adam-style ``betas``.
    Each group gets ``base_momentum`` / ``max_momentum`` keys (as in mmcv).

    Args:
        base_momentum: Lowest momentum: a number, one per group, or a dict per optimizer.
        max_momentum: Highest momentum, same forms.
        pct_start: Fraction of the cycle spent falling, in ``[0, 1]``.
        anneal_strategy: ``'cos'`` or ``'linear'``.
        three_phase: Fall, rise back symmetrically, then hold ``max_momentum``.
        **kwargs: :class:`MomentumUpdaterHook` arguments (``by_epoch`` must be ``False``).
    """

    def __init__(
        self,
        base_momentum: Union[float, list, dict] = 0.85,
        max_momentum: Union[float, list, dict] = 0.95,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        three_phase: bool = False,
        **kwargs: Any,
    ) -> None:
        self._init_one_cycle(
            kwargs,
            pct_start,
            anneal_strategy,
            three_phase,
            base_momentum=base_momentum,
            max_momentum=max_momentum,
        )
        self._base_momentum = base_momentum
        self._max_momentum = max_momentum
        self.momentum_phases: list[list] = []  # [end_iter, start_key, end_key] per phase
        self._bounds: dict = {}  # per-group base/max momentum, set by before_run
        super().__init__(**kwargs)

    def before_run(self, runner: RunnerLike) -> None:
        """Write ``base_momentum``/``max_momentum`` into each group, start at the maximum."""
        owner = type(self).__name__
        if self._restored is not None:
            configured = self._restored
            for key in self.state_keys():
                check_group_shape(owner, runner, configured[key], key.replace("_", " ") + "s")
        else:
            configured = None
        bounds: dict = {"base_momentum": {}, "max_momentum": {}}
        for name, optim in named_optimizers(runner):
            if configured is not None:
                lows = values_of(configured["base_momentum"], name)
                highs = values_of(configured["max_momentum"], name)
            else:
                key = type(optim).__name__ if name is None else name
                lows = format_param(key, optim, self._base_momentum)
                highs = format_param(key, optim, self._max_momentum)
            for group, low, high in zip(optim.param_groups, lows, highs):
                get_group_momentum(group)  # fail early on optimizers without momentum
                set_group_momentum(group, high)
                group["base_momentum"] = low
                group["max_momentum"] = high
            bounds["base_momentum"][name] = list(lows)
            bounds["max_momentum"][name] = list(highs)
        self._bounds = {key: from_named(per_optimizer) for key, per_optimizer in bounds.items()}
        self.momentum_phases = one_cycle_phases(
            self.pct_start,
            runner.max_iters,
            self.three_phase,
            "max_momentum",
            "base_momentum",
            "max_momentum",
        )

    def get_momentum(self, runner: RunnerLike, param_group: dict) -> float:
        """Return the momentum of ``param_group`` at ``runner.iter``."""
        return one_cycle_value(
            runner.iter, self.momentum_phases, lambda key: param_group[key], self.anneal_func
        )

    def get_regular_momentum(self, runner: RunnerLike) -> GroupValues:
        """Scheduled momentum of every param group (read from the groups' bounds)."""
        return from_named(
            {
                name: [self.get_momentum(runner, group) for group in optim.param_groups]
                for name, optim in named_optimizers(runner)
            }
        )

    def state_keys(self) -> tuple[str, ...]:
        """A state holds the per-group ``base_momentum`` and ``max_momentum``."""
        return ("base_momentum", "max_momentum")

    def current_state(self) -> dict:
        """The per-group bounds written by ``before_run`` (empty before it)."""
        return self._bounds

    def adopt_state(self, state: dict) -> None:
        """Nothing to do until ``before_run``, which writes the bounds into the groups."""


__all__ = [
    "CosineAnnealingMomentumUpdaterHook",
    "CyclicMomentumUpdaterHook",
    "LinearAnnealingMomentumUpdaterHook",
    "MomentumUpdaterHook",
    "OneCycleMomentumUpdaterHook",
    "StepMomentumUpdaterHook",
]
