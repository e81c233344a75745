"""ProfilerHook: profile the first epochs/iterations with ``torch.profiler``."""

from __future__ import annotations

import os.path as osp
import warnings
from typing import Callable

import torch
from torch import profiler as torch_profiler

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.runner.dist_utils import master_only as master_only
from mmpar.utils.compat_errors import CheckTypeError, CheckValueError

from ..runner_protocol import RunnerLike
from .hook import HOOKS, Hook


class _ArgTypeError(TypeError, ValueError):
    """An argument of the wrong type where mmcv 1.x raised ValueError."""


@HOOKS.register_module()
class ProfilerHook(Hook):
    """Profile the first ``profile_iters`` epochs (or iterations) with ``torch.profiler``.

    The profiler starts in ``before_run`` and stops after the ``profile_iters``-th training
    epoch/iteration of this run (or in ``after_run`` if training ends first). Unless a custom
    ``on_trace_ready`` or ``schedule`` takes charge of the output, a Chrome trace (open it in
    ``chrome://tracing`` or Perfetto) is written to ``json_trace_path``, by default
    ``<work_dir>/profiler_<timestamp>.json``. Only rank 0 profiles.

    Args:
        by_epoch: Count ``profile_iters`` in epochs (``True``) or iterations.
        profile_iters: Number of epochs/iterations to profile (>= 1).
        activities: Any of ``'cpu'`` and ``'cuda'``; ``'cuda'`` is dropped (with a warning)
            when CUDA is not available.
        schedule: Keyword arguments of ``torch.profiler.schedule`` (``wait``, ``warmup``,
            ``active``, ``repeat``, ``skip_first``); the profiler steps every train iteration.
        on_trace_ready: A callable ``fn(prof)``, or ``dict(type='log_trace', **table_kwargs)``
            (print ``key_averages().table(**table_kwargs)`` to the log), or
            ``dict(type='tb_trace', dir_name=...)`` (``torch.profiler.tensorboard_trace_handler``).
        record_shapes: Record input shapes of operators.
        profile_memory: Track tensor memory allocation.
        with_stack: Record source locations.
        with_flops: Estimate FLOPs of matrix multiplications and convolutions.
        json_trace_path: Where to write the Chrome trace (relative paths are under
            ``work_dir``).
    """

    def __init__(
        self,
        by_epoch: bool = True,
        profile_iters: int = 1,
        activities: list[str] | tuple[str, ...] = ("cpu", "cuda"),
        schedule: dict | None = None,
        on_trace_ready: Callable | dict | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        json_trace_path: str | None = None,
    ) -> None:
        if not isinstance(by_epoch, bool):
            raise CheckTypeError(f"ProfilerHook: by_epoch must be a bool, got {by_epoch!r}")
        if not isinstance(profile_iters, int) or profile_iters < 1:
            raise CheckValueError(
                f"ProfilerHook: profile_iters must be an int >= 1, got {profile_iters}"
            )
        if isinstance(activities, str) or not isinstance(activities, (list, tuple)):
            raise _ArgTypeError(
                f"ProfilerHook: activities must be a list such as ['cpu', 'cuda'], got "
                f"{activities!r}"
            )
        self.activities = []
        for activity in activities:
            name = str(activity).lower()
            if name == "cpu":
                self.activities.append(torch_profiler.ProfilerActivity.CPU)
            elif name == "cuda":
                if torch.cuda.is_available():
                    self.activities.append(torch_profiler.ProfilerActivity.CUDA)
                else:
                    warnings.warn(
                        "ProfilerHook: CUDA is not available, profiling CPU activity only",
                        stacklevel=2,
                    )
            else:
                raise CheckValueError(
                    f'ProfilerHook: unknown activity {activity!r}; valid are "cpu" and "cuda"'
                )
        if not self.activities:
            raise CheckValueError('ProfilerHook: no activity left to profile; include "cpu"')
        if on_trace_ready is not None and not (
            callable(on_trace_ready) or isinstance(on_trace_ready, dict)
        ):
            raise _ArgTypeError(
                'ProfilerHook: on_trace_ready must be a callable, a dict with type "log_trace" '
                f'or "tb_trace", or None; got {type(on_trace_ready).__name__}'
            )
        self.by_epoch = by_epoch
        self.profile_iters = profile_iters
        self.schedule = torch_profiler.schedule(**schedule) if schedule is not None else None
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.json_trace_path = json_trace_path
        self.profiler: torch_profiler.profile | None = None
        self._done = 0  # epochs/iterations profiled so far

    def _trace_handler(self, runner: RunnerLike) -> Callable | None:
        if self.on_trace_ready is None or callable(self.on_trace_ready):
            return self.on_trace_ready
        cfg = dict(self.on_trace_ready)
        kind = cfg.pop("type", None)
        if kind == "log_trace":

            def _log_trace(prof: torch_profiler.profile) -> None:
                runner.logger.info("\n" + prof.key_averages().table(**cfg))

            return _log_trace
        if kind == "tb_trace":
            cfg.setdefault("dir_name", osp.join(runner.work_dir, "tf_tracing_logs"))
            return torch_profiler.tensorboard_trace_handler(**cfg)
        raise ValueError(
            f'ProfilerHook: on_trace_ready type must be "log_trace" or "tb_trace", got {kind!r}'
        )

    def before_run(self, runner: RunnerLike) -> None:
        """Start profiling (rank 0 only)."""
        if runner.rank != 0:
            return
        limit = runner.max_epochs if self.by_epoch else runner.max_iters
        unit = "epochs" if self.by_epoch else "iterations"
        if limit is not None and self.profile_iters > limit:
            raise ValueError(
                f"ProfilerHook: profile_iters={self.profile_iters} exceeds the {limit} {unit} of "
                "the run; lower profile_iters"
            )
        if self.json_trace_path is None and self.on_trace_ready is None and self.schedule is None:
            self.json_trace_path = f"profiler_{runner.timestamp}.json"
        if self.json_trace_path is not None and not osp.isabs(self.json_trace_path):
            self.json_trace_path = osp.join(runner.work_dir, self.json_trace_path)
        self.profiler = torch_profiler.profile(
            activities=self.activities,
            schedule=self.schedule,
            on_trace_ready=self._trace_handler(runner),
            record_shapes=self.record_shapes,
            profile_memory=self.profile_memory,
            with_stack=self.with_stack,
            with_flops=self.with_flops,
        )
        self.profiler.__enter__()
        self._done = 0
        runner.logger.info(f"profiler is profiling the first {self.profile_iters} {unit}")

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Step the profiler schedule; stop after the last profiled iteration."""
        if self.profiler is None:
            return
        self.profiler.step()
        if not self.by_epoch:
            self._done += 1
            if self._done >= self.profile_iters:
                self._stop(runner)

    def after_train_epoch(self, runner: RunnerLike) -> None:
        """Stop after the last profiled epoch."""
        if self.profiler is None or not self.by_epoch:
            return
        self._done += 1
        if self._done >= self.profile_iters:
            self._stop(runner)

    def after_run(self, runner: RunnerLike) -> None:
        """Stop the profiler if training ended before ``profile_iters`` were done."""
        if self.profiler is not None:
            self._stop(runner)

    def _stop(self, runner: RunnerLike) -> None:
        prof, self.profiler = self.profiler, None
        runner.logger.info("profiler is stopping; writing its results may take a while")
        prof.__exit__(None, None, None)
        if self.json_trace_path is not None:
            prof.export_chrome_trace(self.json_trace_path)
            runner.logger.info(f"profiler trace written to {self.json_trace_path}")
