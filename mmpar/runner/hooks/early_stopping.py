"""EarlyStoppingHook: stop training when a monitored metric stops improving."""

from __future__ import annotations

import math

import torch

from mmpar.utils.dist import broadcast_object
from mmpar.utils.misc import check_int_arg

from ..runner_protocol import RunnerLike
from .best_checkpoint import DEFAULT_GREATER_KEYS, DEFAULT_LESS_KEYS, infer_rule
from .evaluation import EvalHook, MissingMetricError
from .hook import HOOKS, Hook


@HOOKS.register_module()
class EarlyStoppingHook(Hook):
    """Set ``runner.should_stop`` after ``patience`` evaluations without improvement.

    The metric comes from the evaluation hooks (:class:`~mmpar.runner.EvalHook` /
    ``DistEvalHook``): after each stage, the hook looks for evaluations that finished since it
    last looked and reads ``monitor`` from their results. Without an evaluation hook it reads the
    average of ``monitor`` over a ``val`` workflow epoch (e.g. ``loss``).

    An evaluation improves when it beats the best so far by more than ``min_delta``
    (``greater``: ``score > best + min_delta``; ``less``: ``score < best - min_delta``). A
    non-finite score counts as no improvement. In distributed runs only rank 0 has metrics; its
    decision is broadcast so every rank stops at the same point.

    Register it after the evaluation hook, e.g. ``priority='VERY_LOW'`` (``train_model``
    registers the evaluation hook at ``LOW`` after the custom hooks): registered before it, it
    still works but sees each result one stage later.

    Args:
        monitor: Name of the metric returned by ``dataset.evaluate`` (or of a val log var).
        rule: ``'greater'`` or ``'less'``; inferred from the name like ``EvalHook`` when ``None``.
        patience: Number of evaluations without improvement after which training stops.
        min_delta: Minimum change that counts as an improvement (>= 0).
        stopping_threshold: Stop as soon as the metric reaches this value (optional).
    """

    def __init__(
        self,
        monitor: str,
        rule: str | None = None,
        patience: int = 5,
        min_delta: float = 0.0,
        stopping_threshold: float | None = None,
    ) -> None:
        if not isinstance(monitor, str) or not monitor:
            raise ValueError(f"EarlyStoppingHook: monitor must be a metric name, got {monitor!r}")
        if rule is None:
            rule = infer_rule(monitor, DEFAULT_GREATER_KEYS, DEFAULT_LESS_KEYS)
            if rule is None:
                raise ValueError(
                    f"EarlyStoppingHook: cannot infer whether greater or less is better for "
                    f"{monitor!r}; pass rule='greater' or rule='less'"
                )
        if rule not in ("greater", "less"):
            raise ValueError(
                f"EarlyStoppingHook: unknown rule {rule!r}; valid rules are ['greater', 'less'] "
                "or None (inferred from the metric name)"
            )
        check_int_arg(patience, "patience", "EarlyStoppingHook")
        if min_delta < 0:
            raise ValueError(f"EarlyStoppingHook: min_delta must be >= 0, got {min_delta}")
        self.monitor = monitor
        self.rule = rule
        self.patience = patience
        self.min_delta = min_delta
        self.stopping_threshold = stopping_threshold
        self.best_score = -math.inf if rule == "greater" else math.inf
        self.wait_count = 0
        self._seen: dict[int, int] = {}  # id(eval hook) -> eval_count already processed

    # Stages -------------------------------------------------------------------------------------

    def before_run(self, runner: RunnerLike) -> None:
        """Remember how many evaluations each eval hook had already done."""
        self._seen = {id(h): h.eval_count for h in self._eval_hooks(runner)}

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Check the results of an iteration-based evaluation."""
        self._check_eval_hooks(runner)

    def after_train_epoch(self, runner: RunnerLike) -> None:
        """Check the results of an epoch-based evaluation."""
        self._check_eval_hooks(runner)

    def after_val_epoch(self, runner: RunnerLike) -> None:
        """Without eval hooks, monitor the average of a val workflow epoch."""
        if self._eval_hooks(runner):
            return
        buf = runner.log_buffer
        if self.monitor not in buf.val_history:
            raise MissingMetricError(
                f"EarlyStoppingHook: monitor={self.monitor!r} is not logged by the val epoch "
                f"(logged: {list(buf.val_history)}) and no EvalHook is registered"
            )
        values = torch.as_tensor(buf.val_history[self.monitor], dtype=torch.float64)
        counts = torch.as_tensor(buf.n_history[self.monitor], dtype=torch.float64)
        self._update(runner, float((values * counts).sum() / counts.sum()))

    # Logic --------------------------------------------------------------------------------------

    @staticmethod
    def _eval_hooks(runner: RunnerLike) -> list:
        return [h for h in runner.hooks if isinstance(h, EvalHook)]

    def _check_eval_hooks(self, runner: RunnerLike) -> None:
        for hook in self._eval_hooks(runner):
            if hook.eval_count == self._seen.get(id(hook), 0):
                continue
            self._seen[id(hook)] = hook.eval_count
            score = None
            if runner.rank == 0:
                results = hook.last_eval_res or {}
                if self.monitor not in results:
                    raise MissingMetricError(
                        f"EarlyStoppingHook: monitor={self.monitor!r} is not among the metrics "
                        f"returned by {type(hook.dataloader.dataset).__name__}.evaluate: "
                        f"{list(results)}; set monitor to one of them"
                    )
                score = float(results[self.monitor])
            self._update(runner, score)

    def _improved(self, score: float) -> bool:
        if self.rule == "greater":
            return score > self.best_score + self.min_delta
        return score < self.best_score - self.min_delta

    def _reached_threshold(self, score: float) -> bool:
        if self.stopping_threshold is None:
            return False
        if self.rule == "greater":
            return score >= self.stopping_threshold
        return score <= self.stopping_threshold

    def _update(self, runner: RunnerLike, score: float | None) -> None:
        """Count one evaluation on rank 0 and share the stop decision with all ranks."""
        reason = None
        if runner.rank == 0 and score is not None:
            if math.isfinite(score) and self._improved(score):
                self.best_score = score
                self.wait_count = 0
            else:
                self.wait_count += 1
            if math.isfinite(score) and self._reached_threshold(score):
                reason = (
                    f"{self.monitor} = {score:.6g} reached stopping_threshold "
                    f"{self.stopping_threshold}"
                )
            elif self.wait_count >= self.patience:
                reason = (
                    f"{self.monitor} did not improve by more than {self.min_delta} over the "
                    f"last {self.wait_count} evaluations (best {self.best_score:.6g}, latest "
                    f"{score:.6g}, rule {self.rule!r})"
                )
        if _broadcast_flag(reason is not None):
            runner.should_stop = True
            if runner.rank == 0:
                runner.logger.info(f"Early stopping: {reason}")

    # Resumable state ----------------------------------------------------------------------------

    def state_dict(self) -> dict:
        """Best score and the number of evaluations without improvement."""
        return {"best_score": self.best_score, "wait_count": self.wait_count}

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict`."""
        if state:
            self.best_score = float(state["best_score"])
            self.wait_count = int(state["wait_count"])


def _broadcast_flag(flag: bool) -> bool:
    """Return rank 0's ``flag`` on every rank (just ``flag`` when not distributed)."""
    return bool(broadcast_object(bool(flag), src=0))
