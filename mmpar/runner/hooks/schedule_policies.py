"""Schedule shapes shared by the LR and momentum policies: annealing, steps, cycles, one cycle.

Pure functions (``annealing_cos``, ``get_position_from_periods``, ...) and small mixins that a
policy class puts before its family base (:class:`~.lr_updater.LrUpdaterHook` or
:class:`~.momentum_updater.MomentumUpdaterHook`). A mixin implements the policy as
``scheduled_value`` (the family's ``get_lr``/``get_momentum`` calls it) and reads the family's
``value_name`` (``'lr'``, ``'momentum'``), so e.g. ``min_lr`` and ``min_momentum`` share one
implementation; the policy class itself only states mmcv's constructor arguments.
"""

from __future__ import annotations

import numbers
from math import cos, pi
from typing import Any, Callable, Union

from mmpar.utils.compat_errors import CheckTypeError, CheckValueError

from ..runner_protocol import RunnerLike
from .param_schedule import progress_of

ANNEAL_STRATEGIES = ("cos", "linear")


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


def anneal_func(owner: str, strategy: str) -> Callable[[float, float, float], float]:
    """Return the annealing function for ``'cos'`` or ``'linear'``."""
    if strategy == "cos":
        return annealing_cos
    if strategy == "linear":
        return annealing_linear
    raise CheckValueError(
        f"{owner}: anneal_strategy must be one of {list(ANNEAL_STRATEGIES)}, got {strategy!r}"
    )


def get_position_from_periods(iteration: int, cumulative_periods: list[int]) -> int:
    """Return the index of the first cumulative period that ``iteration`` has not reached.

    For ``cumulative_periods = [100, 200, 300]``: 50 → 0, 210 → 2, 200 → 2.

    Raises:
        ValueError: ``iteration`` is past the last period.
    """
    for i, period in enumerate(cumulative_periods):
        if iteration < period:
            return i
    raise CheckValueError(
        f"Current iteration/epoch {iteration} exceeds the cumulative periods "
        f'{cumulative_periods}; make the "periods" of CosineRestart cover the whole training'
    )


def check_step(owner: str, step: Any) -> None:
    """Validate a Step schedule's ``step`` (positive int, or list of positive ints)."""
    steps = step if isinstance(step, (list, tuple)) else [step]
    if not isinstance(step, (int, list, tuple)) or isinstance(step, bool):
        raise CheckTypeError(f'{owner}: "step" must be an int or a list of ints, got {step!r}')
    for s in steps:
        if not isinstance(s, int) or isinstance(s, bool) or s <= 0:
            raise CheckValueError(f'{owner}: "step" must hold positive integers, got {step!r}')


def step_exponent(progress: int, step: Union[int, list]) -> int:
    """Number of decays a Step schedule has applied at ``progress``."""
    if isinstance(step, int):
        return progress // step
    return sum(1 for s in step if progress >= s)


def check_min_or_ratio(owner: str, name: str, value: Any, ratio: Any) -> None:
    """Require exactly one of ``min_<name>`` / ``min_<name>_ratio`` to be set."""
    if (value is None) == (ratio is None):
        raise CheckValueError(
            f'{owner}: set exactly one of "min_{name}" and "min_{name}_ratio", '
            f"got min_{name}={value!r}, min_{name}_ratio={ratio!r}"
        )


def check_unit_interval(owner: str, name: str, value: Any) -> None:
    """Require ``0 <= value <= 1`` (a real number)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
        raise CheckValueError(f'{owner}: expected "{name}" to be a number in [0, 1], got {value!r}')


def check_not_by_epoch(owner: str, by_epoch: bool) -> None:
    """Cyclic and OneCycle schedules are defined per iteration only."""
    if by_epoch:
        raise CheckValueError(f"{owner} only supports by_epoch=False (it is an iteration schedule)")


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


def one_cycle_phases(
    pct_start: float, total: int, three_phase: bool, start: Any, turn: Any, end: Any
) -> list[list]:
    """Lay out a one-cycle schedule over ``total`` steps as ``[end_iter, start, end]`` per phase.

    Two phases go ``start → turn → end`` (the turn at ``pct_start`` of the steps); three phases
    go ``start → turn → start`` symmetrically, then ``start → end``. The markers are whatever
    the caller's ``resolve`` in :func:`one_cycle_value` understands (factors, group keys).
    """
    first = [float(pct_start * total) - 1, start, turn]
    if three_phase:
        return [first, [float(2 * pct_start * total) - 2, turn, start], [total - 1, start, end]]
    return [first, [total - 1, turn, end]]


class OneCycleMixin:
    """Arguments shared by the one-cycle LR and momentum hooks (iteration schedules only)."""

    def _init_one_cycle(
        self,
        kwargs: dict,
        pct_start: float,
        anneal_strategy: str,
        three_phase: bool,
        **values: Any,
    ) -> None:
        """Check and keep the arguments; ``kwargs['by_epoch']`` defaults to ``False``.

        Args:
            kwargs: The keyword arguments for the family base class.
            pct_start: Fraction of the cycle before the turn, in ``[0, 1]``.
            anneal_strategy: ``'cos'`` or ``'linear'``.
            three_phase: Use the three-phase layout of :func:`one_cycle_phases`.
            **values: Per-group values by argument name (a number, a list or a dict each).
        """
        owner = type(self).__name__
        kwargs.setdefault("by_epoch", False)
        check_not_by_epoch(owner, kwargs["by_epoch"])
        for name, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (numbers.Number, list, dict)):
                raise CheckValueError(
                    f'{owner}: "{name}" must be a number, a list (one per param group) or a '
                    f"dict (per optimizer), got {type(value).__name__}"
                )
        check_unit_interval(owner, "pct_start", pct_start)
        self.pct_start = pct_start
        self.anneal_func = anneal_func(owner, anneal_strategy)
        self.three_phase = three_phase


class StepDecay:
    """Policy mixin: multiply the base value by ``gamma`` at each step, clip at ``min_<value>``."""

    value_name: str
    by_epoch: bool

    def _init_step(self, step: Any, gamma: float, minimum: float | None) -> None:
        check_step(type(self).__name__, step)
        self.step = list(step) if isinstance(step, tuple) else step
        self.gamma = gamma
        self._min_attr = f"min_{self.value_name}"  # min_lr, min_momentum
        setattr(self, self._min_attr, minimum)

    def scheduled_value(self, runner: RunnerLike, base: float) -> float:
        """Return ``base * gamma ** (decays so far)``, clipped at ``min_<value>``."""
        progress = runner.epoch if self.by_epoch else runner.iter
        value = base * self.gamma ** step_exponent(progress, self.step)
        minimum = getattr(self, self._min_attr)
        return value if minimum is None else max(value, minimum)


class MinTarget:
    """Policy mixin: the value a group anneals to, ``min_<value>`` or a ratio of its base value.

    Exactly one of ``min_<value>`` and ``min_<value>_ratio`` is set (``min_lr``/``min_lr_ratio``
    for LR hooks, ``min_momentum``/``min_momentum_ratio`` for momentum hooks).
    """

    value_name: str

    def _init_target(self, minimum: float | None, ratio: float | None) -> None:
        check_min_or_ratio(type(self).__name__, self.value_name, minimum, ratio)
        self._target_attrs = (f"min_{self.value_name}", f"min_{self.value_name}_ratio")
        setattr(self, self._target_attrs[0], minimum)
        setattr(self, self._target_attrs[1], ratio)

    def target_value(self, base: float) -> float:
        """The value the annealing ends at for a group whose base value is ``base``."""
        min_attr, ratio_attr = self._target_attrs
        ratio = getattr(self, ratio_attr)
        return base * ratio if ratio is not None else getattr(self, min_attr)


class AnnealToTarget(MinTarget):
    """Policy mixin: anneal each group from its base value to the target over the training.

    ``anneal`` is the curve (cosine unless a policy sets another).
    """

    by_epoch: bool
    anneal: Callable[[float, float, float], float] = staticmethod(annealing_cos)

    def scheduled_value(self, runner: RunnerLike, base: float) -> float:
        """Return the value annealed over the whole training at the runner's position."""
        progress, max_progress = progress_of(runner, self.by_epoch)
        return self.anneal(base, self.target_value(base), progress / max_progress)


def parse_target_ratio(owner: str, target_ratio: Any) -> tuple[float, float]:
    """Normalise a Cyclic ``target_ratio`` to ``(peak_ratio, end_ratio)`` as mmcv does."""
    if isinstance(target_ratio, numbers.Real) and not isinstance(target_ratio, bool):
        return (target_ratio, target_ratio / 1e5)
    if isinstance(target_ratio, (list, tuple)):
        if len(target_ratio) == 1:
            return (target_ratio[0], target_ratio[0] / 1e5)
        if len(target_ratio) == 2:
            return (target_ratio[0], target_ratio[1])
    raise CheckValueError(
        f'{owner}: "target_ratio" must be a number or a tuple of one or two numbers, '
        f"got {target_ratio!r}"
    )


class CyclicPhases:
    """The two phases (rise to the peak, fall to the end) of a cyclic schedule.

    Shared by the cyclic LR and momentum hooks.

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
            raise CheckValueError(
                f'{owner}: "step_ratio_up" must be in [0, 1), got {step_ratio_up}'
            )
        if not 0 < gamma <= 1:
            raise CheckValueError(f'{owner}: "gamma" must be in (0, 1], got {gamma}')
        if isinstance(cyclic_times, bool) or not isinstance(cyclic_times, int) or cyclic_times <= 0:
            raise CheckValueError(
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
            raise CheckValueError(
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

    def _init_cycle(self, by_epoch: bool, *cycle_args: Any) -> None:
        # cycle_args: CyclicPhases' arguments after the owner, as the hook received them.
        owner = type(self).__name__
        check_not_by_epoch(owner, by_epoch)
        self._cycle = CyclicPhases(owner, *cycle_args)
        self.target_ratio = self._cycle.target_ratio
        self.cyclic_times = self._cycle.cyclic_times
        self.step_ratio_up = self._cycle.step_ratio_up
        self.gamma = self._cycle.gamma
        self.anneal_func = self._cycle.anneal_func

    def before_run(self, runner: RunnerLike) -> None:
        """Record the initial values (base class) and lay out the cycle."""
        # misc: mypy checks the mixin alone, whose base is object; it is always listed before
        # a Hook subclass, whose before_run this super() call reaches.
        super().before_run(runner)  # type: ignore[misc]
        self._cycle.build(runner.max_iters)

    @staticmethod
    def make_init(default_target_ratio: tuple) -> Callable[..., None]:
        """The ``__init__`` of a cyclic hook: mmcv's arguments, its own ``target_ratio`` default.

        The LR and momentum hooks differ only in that default; the hook class is
        ``class Hook(CyclicMixin, Base)`` and the rest goes to ``Base.__init__``.
        """

        def __init__(
            self: Any,
            by_epoch: bool = False,
            target_ratio: Union[float, tuple] = default_target_ratio,
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

        return __init__

    @property
    def max_iter_per_phase(self) -> int | None:
        """Iterations per cycle (known after ``before_run``)."""
        return self._cycle.max_iter_per_phase

    def scheduled_value(self, runner: RunnerLike, base: float) -> float:
        """Return the value at ``runner.iter`` within its cycle."""
        return self._cycle.value(runner.iter, base)
