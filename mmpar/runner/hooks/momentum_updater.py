"""Momentum schedule hooks (mmcv 1.x ``momentum_config`` policies).

The momentum of a param group is ``group['momentum']`` (SGD, RMSprop) or ``group['betas'][0]``
(Adam-style optimizers); the hooks set whichever the group has. As with the LR hooks, the value
is a function of ``runner.epoch``/``runner.iter`` and the group's initial momentum, which
``state_dict()`` carries across a resume.

mmcv bugs not copied: warmup read an attribute that only the last stage set (``regular_mom``)
and ignored the per-optimizer values for a dict of optimizers; phases were appended again on
every ``before_run``.
"""

from __future__ import annotations

import copy
import numbers
from typing import Any, Callable, Union

from .hook import HOOKS, Hook
from .lr_updater import (
    WARMUP_TYPES,
    CyclicMixin,
    GroupValues,
    anneal_func,
    annealing_cos,
    annealing_linear,
    check_group_shape,
    check_min_or_ratio,
    check_not_by_epoch,
    check_step,
    check_unit_interval,
    format_param,
    map_groups,
    named_optimizers,
    one_cycle_value,
    progress_of,
    step_exponent,
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


class MomentumUpdaterHook(Hook):
    """Base class of momentum schedules; subclasses implement :meth:`get_momentum`.

    Args:
        by_epoch: Update once per epoch (``True``) or every iteration.
        warmup: ``None``, ``'constant'``, ``'linear'`` or ``'exp'``. The warmup momentum is
            ``regular / warmup_ratio`` at the start (momentum warms *down* to the schedule).
        warmup_iters: Length of the warmup in iterations.
        warmup_ratio: In ``(0, 1]``.
    """

    def __init__(
        self,
        by_epoch: bool = True,
        warmup: str | None = None,
        warmup_iters: int = 0,
        warmup_ratio: float = 0.9,
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
        self.warmup_iters = warmup_iters
        self.warmup_ratio = warmup_ratio
        self.base_momentum: GroupValues = []  # initial momentum of every param group
        self.regular_momentum: GroupValues = []  # momentum without warmup at the position
        self._restored: dict | None = None

    @property
    def regular_mom(self) -> GroupValues:
        """Mmcv's alias of :attr:`regular_momentum`."""
        return self.regular_momentum

    # -- schedule ------------------------------------------------------------------------------
    def get_momentum(self, runner: Any, base_momentum: float) -> float:
        """Return the scheduled momentum of a group whose initial momentum is given."""
        raise NotImplementedError

    def get_regular_momentum(self, runner: Any) -> GroupValues:
        """Scheduled (non-warmup) momentum of every param group."""
        return map_groups(self.base_momentum, lambda base: self.get_momentum(runner, base))

    def get_warmup_momentum(self, cur_iters: int) -> GroupValues:
        """Warmup momentum of every group at iteration ``cur_iters``."""
        if self.warmup == "constant":
            k = self.warmup_ratio
        elif self.warmup == "linear":
            k = 1 - (1 - cur_iters / self.warmup_iters) * (1 - self.warmup_ratio)
        elif self.warmup == "exp":
            k = self.warmup_ratio ** (1 - cur_iters / self.warmup_iters)
        else:
            raise ValueError(f"no warmup is configured (warmup={self.warmup!r})")
        return map_groups(self.regular_momentum, lambda m: m / k)

    def _set_momentum(self, runner: Any, momentum_groups: GroupValues) -> None:
        for name, optim in named_optimizers(runner):
            values = momentum_groups if name is None else momentum_groups[name]
            for group, momentum in zip(optim.param_groups, values):
                set_group_momentum(group, momentum)

    # -- hook stages ---------------------------------------------------------------------------
    def before_run(self, runner: Any) -> None:
        """Record each group's ``initial_momentum`` (kept if present, e.g. after a resume)."""
        restored = (self._restored or {}).get("base_momentum")
        if restored is not None:
            check_group_shape(type(self).__name__, runner, restored, "base momentums")
        base: dict = {}
        for name, optim in named_optimizers(runner):
            values = None if restored is None else (restored if name is None else restored[name])
            for i, group in enumerate(optim.param_groups):
                if values is not None:
                    group["initial_momentum"] = values[i]
                group.setdefault("initial_momentum", get_group_momentum(group))
            base[name] = [group["initial_momentum"] for group in optim.param_groups]
        self.base_momentum = base[None] if None in base else base

    def before_train_epoch(self, runner: Any) -> None:
        """Epoch schedules: set the epoch's momentum."""
        if not self.by_epoch:
            return
        self.regular_momentum = self.get_regular_momentum(runner)
        self._set_momentum(runner, self.regular_momentum)

    def before_train_iter(self, runner: Any) -> None:
        """Iteration schedules: set the iteration's momentum; both kinds: apply the warmup."""
        cur_iter = runner.iter
        if not self.by_epoch:
            self.regular_momentum = self.get_regular_momentum(runner)
            if self.warmup is None or cur_iter >= self.warmup_iters:
                self._set_momentum(runner, self.regular_momentum)
            else:
                self._set_momentum(runner, self.get_warmup_momentum(cur_iter))
            return
        if self.warmup is None or cur_iter > self.warmup_iters:
            return
        if not self.regular_momentum:  # resumed mid-epoch without a before_train_epoch call
            self.regular_momentum = self.get_regular_momentum(runner)
        if cur_iter == self.warmup_iters:
            self._set_momentum(runner, self.regular_momentum)
        else:
            self._set_momentum(runner, self.get_warmup_momentum(cur_iter))

    # -- resume --------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Return ``{'base_momentum': ...}`` (per-group initial momentums)."""
        if not self.base_momentum:
            return copy.deepcopy(self._restored) if self._restored else {}
        return {"base_momentum": copy.deepcopy(self.base_momentum)}

    def load_state_dict(self, state: dict) -> None:
        """Restore the initial momentums; they win over the optimizer's at ``before_run``.

        Args:
            state: A dict returned by :meth:`state_dict`.
        """
        if not state:
            return
        if "base_momentum" not in state:
            raise KeyError(f'{type(self).__name__}: state has no "base_momentum": {sorted(state)}')
        self._restored = copy.deepcopy(state)
        self.base_momentum = copy.deepcopy(state["base_momentum"])


@HOOKS.register_module()
class StepMomentumUpdaterHook(MomentumUpdaterHook):
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
        check_step(type(self).__name__, step)
        self.step = list(step) if isinstance(step, tuple) else step
        self.gamma = gamma
        self.min_momentum = min_momentum
        super().__init__(**kwargs)

    def get_momentum(self, runner: Any, base_momentum: float) -> float:
        """Return ``base * gamma ** (decays so far)``, clipped at ``min_momentum``."""
        progress = runner.epoch if self.by_epoch else runner.iter
        momentum = base_momentum * self.gamma ** step_exponent(progress, self.step)
        return momentum if self.min_momentum is None else max(momentum, self.min_momentum)


class _MinMomentumMixin:
    """Shared ``min_momentum`` / ``min_momentum_ratio`` handling."""

    min_momentum: float | None
    min_momentum_ratio: float | None

    def _init_min(self, min_momentum: float | None, min_momentum_ratio: float | None):
        check_min_or_ratio(type(self).__name__, "momentum", min_momentum, min_momentum_ratio)
        self.min_momentum = min_momentum
        self.min_momentum_ratio = min_momentum_ratio

    def target_momentum(self, base_momentum: float) -> float:
        """The momentum the annealing ends at."""
        if self.min_momentum_ratio is not None:
            return base_momentum * self.min_momentum_ratio
        return self.min_momentum


class _AnnealingMomentumUpdaterHook(_MinMomentumMixin, MomentumUpdaterHook):
    """Anneal the momentum to the target over the whole training with ``anneal``.

    Args:
        min_momentum: Final momentum. Exactly one of the two must be set.
        min_momentum_ratio: Final momentum as a fraction of the initial one.
        **kwargs: :class:`MomentumUpdaterHook` arguments.
    """

    anneal: Callable[[float, float, float], float]

    def __init__(
        self,
        min_momentum: float | None = None,
        min_momentum_ratio: float | None = None,
        **kwargs: Any,
    ) -> None:
        self._init_min(min_momentum, min_momentum_ratio)
        super().__init__(**kwargs)

    def get_momentum(self, runner: Any, base_momentum: float) -> float:
        """Return the annealed momentum."""
        progress, max_progress = progress_of(runner, self.by_epoch)
        target = self.target_momentum(base_momentum)
        return self.anneal(base_momentum, target, progress / max_progress)


@HOOKS.register_module()
class CosineAnnealingMomentumUpdaterHook(_AnnealingMomentumUpdaterHook):
    """Cosine-anneal the momentum over the whole training.

    Args:
        min_momentum: Final momentum. Exactly one of the two must be set.
        min_momentum_ratio: Final momentum as a fraction of the initial one.
        **kwargs: :class:`MomentumUpdaterHook` arguments.
    """

    anneal = staticmethod(annealing_cos)


@HOOKS.register_module()
class LinearAnnealingMomentumUpdaterHook(_AnnealingMomentumUpdaterHook):
    """Linearly anneal the momentum over the whole training.

    Args:
        min_momentum: Final momentum. Exactly one of the two must be set.
        min_momentum_ratio: Final momentum as a fraction of the initial one.
        **kwargs: :class:`MomentumUpdaterHook` arguments.
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

    def __init__(
        self,
        by_epoch: bool = False,
        target_ratio: Union[float, tuple] = (0.85 / 0.95, 1),
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
    def momentum_phases(self) -> list[list]:
        """``[start_iter, end_iter, start_ratio, end_ratio]`` of the two phases."""
        return self._cycle.phases

    def get_momentum(self, runner: Any, base_momentum: float) -> float:
        """Return the momentum at ``runner.iter`` within its cycle."""
        return self._cycle.value(runner.iter, base_momentum)


@HOOKS.register_module()
class OneCycleMomentumUpdaterHook(MomentumUpdaterHook):
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
        owner = type(self).__name__
        kwargs.setdefault("by_epoch", False)
        check_not_by_epoch(owner, kwargs["by_epoch"])
        for name, value in (("base_momentum", base_momentum), ("max_momentum", max_momentum)):
            if isinstance(value, bool) or not isinstance(value, (numbers.Number, list, dict)):
                raise ValueError(
                    f'{owner}: "{name}" must be a number, a list (one per param group) or a '
                    f"dict (per optimizer), got {type(value).__name__}"
                )
        check_unit_interval(owner, "pct_start", pct_start)
        self._base_momentum = base_momentum
        self._max_momentum = max_momentum
        self.pct_start = pct_start
        self.anneal_func = anneal_func(owner, anneal_strategy)
        self.three_phase = three_phase
        self.momentum_phases: list[list] = []  # [end_iter, start_key, end_key] per phase
        self._bounds: dict = {}  # per-group base/max momentum, set by before_run
        super().__init__(**kwargs)

    def before_run(self, runner: Any) -> None:
        """Write ``base_momentum``/``max_momentum`` into each group, start at the maximum."""
        owner = type(self).__name__
        restored = self._restored
        if restored is not None:
            for key in ("base_momentum", "max_momentum"):
                check_group_shape(owner, runner, restored[key], key.replace("_", " ") + "s")
        bounds: dict = {"base_momentum": {}, "max_momentum": {}}
        for name, optim in named_optimizers(runner):
            key = type(optim).__name__ if name is None else name
            if restored is not None:
                lows = (
                    restored["base_momentum"] if name is None else restored["base_momentum"][name]
                )
                highs = restored["max_momentum"] if name is None else restored["max_momentum"][name]
            else:
                lows = format_param(key, optim, self._base_momentum)
                highs = format_param(key, optim, self._max_momentum)
            for group, low, high in zip(optim.param_groups, lows, highs):
                get_group_momentum(group)  # fail early on optimizers without momentum
                set_group_momentum(group, high)
                group["base_momentum"] = low
                group["max_momentum"] = high
            bounds["base_momentum"][name] = list(lows)
            bounds["max_momentum"][name] = list(highs)
        self._bounds = {k: v[None] if None in v else v for k, v in bounds.items()}

        max_iters = runner.max_iters
        fall_end = float(self.pct_start * max_iters) - 1
        if self.three_phase:
            self.momentum_phases = [
                [fall_end, "max_momentum", "base_momentum"],
                [float(2 * self.pct_start * max_iters) - 2, "base_momentum", "max_momentum"],
                [max_iters - 1, "max_momentum", "max_momentum"],
            ]
        else:
            self.momentum_phases = [
                [fall_end, "max_momentum", "base_momentum"],
                [max_iters - 1, "base_momentum", "max_momentum"],
            ]

    def get_momentum(self, runner: Any, param_group: dict) -> float:
        """Return the momentum of ``param_group`` at ``runner.iter``."""
        return one_cycle_value(
            runner.iter, self.momentum_phases, lambda key: param_group[key], self.anneal_func
        )

    def get_regular_momentum(self, runner: Any) -> GroupValues:
        """Scheduled momentum of every param group (read from the groups' bounds)."""
        values: dict = {}
        for name, optim in named_optimizers(runner):
            values[name] = [self.get_momentum(runner, group) for group in optim.param_groups]
        return values[None] if None in values else values

    def state_dict(self) -> dict:
        """Return the per-group ``base_momentum`` and ``max_momentum``."""
        if not self._bounds:
            return copy.deepcopy(self._restored) if self._restored else {}
        return copy.deepcopy(self._bounds)

    def load_state_dict(self, state: dict) -> None:
        """Restore the per-group bounds; they win over the config's at ``before_run``."""
        if not state:
            return
        missing = {"base_momentum", "max_momentum"} - set(state)
        if missing:
            raise KeyError(f"{type(self).__name__}: state misses {sorted(missing)}")
        self._restored = copy.deepcopy(state)


__all__ = [
    "MomentumUpdaterHook",
    "StepMomentumUpdaterHook",
    "CosineAnnealingMomentumUpdaterHook",
    "LinearAnnealingMomentumUpdaterHook",
    "CyclicMomentumUpdaterHook",
    "OneCycleMomentumUpdaterHook",
]
