"""Keep the checkpoint with the best evaluation score (the ``save_best`` part of EvalHook)."""

from __future__ import annotations

import math
import os.path as osp
from typing import Any, Callable, Sequence, Union

from mmpar.utils.compat_errors import CheckTypeError, MessageKeyError

from ..checkpointing.checkpointer import Checkpointer, checkpointer_of
from ..checkpointing.work_dir_paths import resolve_recorded, to_recorded
from ..runner_protocol import RunnerLike

# Metric-name substrings for which a greater (or a smaller) value is better, as in mmcv.
DEFAULT_GREATER_KEYS = (
    "acc",
    "top",
    "AR@",
    "auc",
    "precision",
    "mAP",
    "mDice",
    "mIoU",
    "mAcc",
    "aAcc",
)
DEFAULT_LESS_KEYS = ("loss",)


def infer_rule(key: str, greater_keys: Sequence[str], less_keys: Sequence[str]) -> str | None:
    """Return ``'greater'``/``'less'`` for a metric name, or ``None`` if it cannot be inferred.

    An exact (case-insensitive) match wins over a substring match; greater keys are checked
    before less keys at each stage.
    """
    key_lc = key.lower()
    greater = [k.lower() for k in greater_keys]
    less = [k.lower() for k in less_keys]
    if key_lc in greater:
        return "greater"
    if key_lc in less:
        return "less"
    if any(k in key_lc for k in greater):
        return "greater"
    if any(k in key_lc for k in less):
        return "less"
    return None


class UnknownRuleError(MessageKeyError, ValueError):
    """``rule`` is not 'greater'/'less'/None: a KeyError as in mmcv 1.x, and a ValueError."""


class BestCheckpoint:
    """Which score of one metric is best so far, and the checkpoint file that holds it.

    A new best checkpoint is written before the previous one is deleted, so a crash or a
    failed write leaves the previous best on disk. Its state (:meth:`state_dict`) goes into
    the owning hook's resume state; ``runner.meta['hook_msgs']`` also records ``best_score``
    and ``best_ckpt``, as in mmcv.

    Args:
        key_indicator: The metric; ``'auto'``: the first one of the first evaluation
            (:meth:`set_metric`); ``None``: keep no checkpoint (``rule`` is only checked).
        rule: ``'greater'`` or ``'less'``; inferred from the metric name when ``None``.
        greater_keys: Metric-name substrings for which greater is better; given, they
            replace ``default_greater_keys`` (as in mmcv).
        less_keys: Likewise, for which less is better.
        owner: Name used in error messages (the hook's class name).
        default_greater_keys: Used when ``greater_keys`` is None (the owning hook's
            ``_default_greater_keys``, which mmcv's hook subclasses override).
        default_less_keys: Likewise for ``less_keys``.

    Raises:
        ValueError: ``rule`` is unknown, or it is ``None`` and cannot be inferred.
    """

    rule_map = {"greater": lambda x, y: x > y, "less": lambda x, y: x < y}
    init_value_map = {"greater": -math.inf, "less": math.inf}

    def __init__(
        self,
        key_indicator: str | None,
        rule: str | None = None,
        greater_keys: Union[str, Sequence[str], None] = None,
        less_keys: Union[str, Sequence[str], None] = None,
        owner: str = "EvalHook",
        default_greater_keys: Sequence[str] = DEFAULT_GREATER_KEYS,
        default_less_keys: Sequence[str] = DEFAULT_LESS_KEYS,
    ) -> None:
        self.owner = owner
        self.greater_keys = _keys_or_default(default_greater_keys, greater_keys)
        self.less_keys = _keys_or_default(default_less_keys, less_keys)
        self.auto = key_indicator == "auto"
        self.best_score: float | None = None
        self.best_ckpt_path: str | None = None
        # The work dir ``best_ckpt_path`` is recorded relative to (see work_dir_paths).
        self.work_dir: str | None = None
        self.key_indicator: str | None = None
        self.rule: str | None = None
        if key_indicator is not None:
            self.set_metric(key_indicator, rule)
        else:
            self._check_rule(rule)
            self.rule = rule

    def _check_rule(self, rule: str | None) -> None:
        if rule is not None and rule not in self.rule_map:
            raise UnknownRuleError(
                f"{self.owner}: unknown rule {rule!r}; valid rules are "
                f"{sorted(self.rule_map)} or None (inferred from the metric name)"
            )

    def set_metric(self, key_indicator: str, rule: str | None) -> None:
        """Compare by ``key_indicator`` under ``rule`` (given, or inferred from the name)."""
        self._check_rule(rule)
        if rule is None and key_indicator != "auto":
            rule = infer_rule(key_indicator, self.greater_keys, self.less_keys)
            if rule is None:
                raise ValueError(
                    f"{self.owner}: cannot infer whether greater or less is better "
                    f"for {key_indicator!r} (greater keys: {list(self.greater_keys)}, less "
                    f"keys: {list(self.less_keys)}); pass rule='greater' or rule='less'"
                )
        self.rule = rule
        self.key_indicator = key_indicator

    @property
    def compare_func(self) -> Callable[[float, float], bool]:
        """``compare_func(new, best)`` is True when ``new`` is better under :attr:`rule`."""
        return self.rule_map[self.rule]

    def is_better(self, score: float) -> bool:
        """Whether ``score`` beats the best so far (any score beats none)."""
        best = self.best_score if self.best_score is not None else self.init_value_map[self.rule]
        return self.compare_func(score, best)

    def restore_from_meta(self, runner: RunnerLike) -> None:
        """Take the best score and checkpoint from ``runner.meta['hook_msgs']`` (mmcv resume).

        State restored by :meth:`load_state_dict` wins over the meta of the checkpoint. A
        recorded path relative to the work dir is taken as one in ``runner.work_dir``.
        """
        if runner.meta is None:
            runner.meta = {}
        msgs = runner.meta.setdefault("hook_msgs", {})
        self.work_dir = getattr(runner, "work_dir", None)
        if self.best_ckpt_path is None:
            self.best_ckpt_path = msgs.get("best_ckpt")
        self.best_ckpt_path = resolve_recorded(self.best_ckpt_path, self.work_dir)
        if self.best_score is None and "best_score" in msgs:
            self.best_score = msgs["best_score"]

    def update(
        self, runner: RunnerLike, score: float, out_dir: str, unit: str, number: int
    ) -> None:
        """If ``score`` is the best so far, save ``best_<metric>_<unit>_<number>.pth``.

        The previous best checkpoint is deleted only once the new one is on disk, and only
        if it lies in ``out_dir``: one recorded by a run in another work dir (this one is a
        copy, or was moved) is left alone. With a sharded (FSDP) model every rank calls this
        with the same score and joins the save; rank 0 deletes the previous file.

        Args:
            runner: Saves the checkpoint (through its Checkpointer) and logs; its ``meta``
                records the best score and path.
            score: The score of the evaluation that just ran.
            out_dir: Where the checkpoint goes.
            unit: ``'epoch'`` or ``'iter'``.
            number: The epoch/iteration (1-based) the checkpoint is named after.
        """
        if not self.is_better(score):
            return
        self.best_score = score
        self.work_dir = getattr(runner, "work_dir", None)
        runner.meta.setdefault("hook_msgs", {})["best_score"] = score
        previous = self.best_ckpt_path
        name = Checkpointer.best_name(self.key_indicator, unit, number)
        self.best_ckpt_path = osp.join(out_dir, name)
        runner.meta["hook_msgs"]["best_ckpt"] = self.best_ckpt_path
        # The previous best is deleted only once the new one is on disk: a crash or failed
        # write during the save leaves it in place.
        checkpointer_of(runner).save(
            out_dir, name, create_symlink=False, replaces=previous, every_rank=False
        )
        runner.logger.info(f"Now best checkpoint is saved as {name}.")
        runner.logger.info(f"Best {self.key_indicator} is {score:0.4f} at {number} {unit}.")

    def state_dict(self) -> dict:
        """The best score and checkpoint, and the metric and rule they were judged by.

        The checkpoint's path is relative to the work dir when it lies inside it.
        """
        return {
            "best_score": self.best_score,
            "best_ckpt": to_recorded(self.best_ckpt_path, self.work_dir),
            "key_indicator": self.key_indicator,
            "rule": self.rule,
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict`; with ``'auto'``, also the metric the saved run chose."""
        self.best_score = state.get("best_score")
        self.best_ckpt_path = state.get("best_ckpt")
        if self.auto and state.get("key_indicator") not in (None, "auto"):
            self.key_indicator = state["key_indicator"]
            self.rule = state.get("rule") or self.rule


class BestCheckpointAttribute:
    """An attribute of a hook (``rule``, ``best_ckpt_path``, ...) kept by its BestCheckpoint.

    Reading or assigning it on the hook reads or assigns the attribute of the same name on the
    hook's ``best_checkpoint``, so the hook keeps mmcv's attribute names.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, hook: Any, owner: type | None = None) -> Any:
        return self if hook is None else getattr(hook.best_checkpoint, self.name)

    def __set__(self, hook: Any, value: Any) -> None:
        setattr(hook.best_checkpoint, self.name, value)


def _keys_or_default(default: Sequence[str], keys: Union[str, Sequence[str], None]) -> tuple:
    """``keys`` given replace the defaults, as in mmcv (``less_keys=['acc']`` makes acc 'less')."""
    if keys is None:
        return tuple(default)
    if isinstance(keys, str):
        keys = (keys,)
    if not all(isinstance(k, str) for k in keys):
        raise CheckTypeError(f"metric keys must be strings, got {keys!r}")
    return tuple(keys)
