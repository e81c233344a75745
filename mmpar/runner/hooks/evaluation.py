"""EvalHook / DistEvalHook: evaluate during training, log the metrics, keep the best checkpoint."""

from __future__ import annotations

import inspect
import math
import os
import os.path as osp
import warnings
from typing import Any, Callable, Sequence, Union

import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader

from mmpar.utils.dist import is_distributed
from mmpar.utils.registry import ConfigArgumentError, unexpected_argument_error

from ..utils import get_rng_state, set_rng_state
from .hook import HOOKS, Hook

# Public BatchNorm classes whose running stats DistEvalHook syncs from rank 0.
_BN_TYPES = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)


class MissingMetricError(KeyError):
    """A metric asked for by name is not among those an evaluation returned.

    A ``KeyError`` (for ``except KeyError`` callers) whose message prints as written.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _default_single_test(model: nn.Module, data_loader: DataLoader) -> list:
    from mmpar.apis.test import single_device_test  # lazy: apis imports the runner

    return single_device_test(model, data_loader, progress=False)


def _default_multi_test(
    model: nn.Module, data_loader: DataLoader, tmpdir: str | None = None, gpu_collect=False
) -> list | None:
    from mmpar.apis.test import multi_device_test  # lazy: apis imports the runner

    return multi_device_test(model, data_loader, tmpdir, gpu_collect, progress=False)


@HOOKS.register_module()
class EvalHook(Hook):
    """Evaluate the model every ``interval`` epochs (or iterations) during training.

    The model is run over ``dataloader`` with ``test_fn`` (default: a single-process loop calling
    ``model(return_loss=False, **data)`` under ``torch.no_grad()``), the results go to
    ``dataloader.dataset.evaluate(results, logger=runner.logger, **eval_kwargs)``, and the
    returned metrics are written to ``runner.log_buffer.output`` (``ready`` set), so logger hooks
    log them as a val record. With ``save_best`` the best checkpoint is kept as
    ``best_<metric>_epoch_<n>.pth`` (``_iter_<n>`` when evaluating by iteration), the previous
    best file deleted, and ``best_score``/``best_ckpt`` recorded in ``runner.meta['hook_msgs']``.
    The model's train/eval mode and the RNG states are restored after testing, so evaluating
    never changes training. If a run is resumed from a checkpoint saved before an evaluation
    that was due (the checkpoint hook runs first; a crash came in between), that evaluation
    runs before training continues.

    Register it at ``LOW`` priority (after the checkpoint hook, before the loggers), as
    ``train_model`` does.

    Args:
        dataloader: The evaluation loader (its dataset must implement ``evaluate``).
        start: First epoch/iteration (1-based) to evaluate at; then every ``interval`` after
            it. ``None``: at multiples of ``interval``. If training resumes at or after
            ``start``, the model is also evaluated once before training continues.
        interval: Evaluate every ``interval`` epochs/iterations (> 0).
        by_epoch: Count epochs (``True``) or iterations.
        save_best: Metric whose best value selects the checkpoint to keep; ``'auto'`` uses the
            first metric returned by ``evaluate``; ``None`` keeps none.
        rule: ``'greater'`` or ``'less'``; inferred from the metric name when ``None``.
        test_fn: ``test_fn(model, dataloader) -> results``.
        greater_keys: Extra metric-name substrings for which greater is better (added to
            the defaults, as in mmcv).
        less_keys: Extra metric-name substrings for which less is better.
        out_dir: Where best checkpoints go (default ``runner.work_dir``).
        file_client_args: Only ``None`` or ``dict(backend='disk')`` (local files) is supported.
        **eval_kwargs: Passed to ``dataset.evaluate``. Unless ``evaluate`` takes ``**kwargs``,
            each must be one of its parameters: a typo (``intervl=1``) raises
            :class:`~mmpar.utils.registry.ConfigArgumentError` here, not at the first
            evaluation.
    """

    rule_map = {"greater": lambda x, y: x > y, "less": lambda x, y: x < y}
    init_value_map = {"greater": -math.inf, "less": math.inf}
    _default_greater_keys = (
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
    _default_less_keys = ("loss",)

    def __init__(
        self,
        dataloader: DataLoader,
        start: int | None = None,
        interval: int = 1,
        by_epoch: bool = True,
        save_best: str | None = None,
        rule: str | None = None,
        test_fn: Callable | None = None,
        greater_keys: Union[str, Sequence[str], None] = None,
        less_keys: Union[str, Sequence[str], None] = None,
        out_dir: str | None = None,
        file_client_args: dict | None = None,
        **eval_kwargs: Any,
    ) -> None:
        name = type(self).__name__
        if not isinstance(dataloader, DataLoader):
            raise TypeError(
                f"{name}: dataloader must be a torch.utils.data.DataLoader, "
                f"but got {type(dataloader).__name__}"
            )
        if not hasattr(dataloader.dataset, "evaluate"):
            raise TypeError(
                f"{name}: the dataset {type(dataloader.dataset).__name__} has no "
                "evaluate(results, logger=None, **kwargs) method, so results cannot be scored"
            )
        if not isinstance(interval, int) or interval <= 0:
            raise ValueError(f"{name}: interval must be a positive int, but got {interval!r}")
        if not isinstance(by_epoch, bool):
            raise TypeError(f"{name}: by_epoch must be a bool, but got {by_epoch!r}")
        if start is not None and start < 0:
            raise ValueError(f"{name}: start must be None or >= 0, but got {start}")
        if save_best is not None and not isinstance(save_best, str):
            raise TypeError(
                f'{name}: save_best must be a metric name, "auto" or None, but got {save_best!r}'
            )
        if file_client_args not in (None, {}) and file_client_args.get("backend") != "disk":
            raise ValueError(
                f"{name}: only local files are supported, got file_client_args="
                f'{file_client_args!r}; remove it or use dict(backend="disk")'
            )
        self._check_eval_kwargs(dataloader.dataset, eval_kwargs)
        self.dataloader = dataloader
        self.interval = interval
        self.start = start
        self.by_epoch = by_epoch
        self.save_best = save_best
        self.eval_kwargs = eval_kwargs
        self.initial_flag = True
        self.test_fn = test_fn if test_fn is not None else _default_single_test
        self.greater_keys = _as_tuple(greater_keys, self._default_greater_keys)
        self.less_keys = _as_tuple(less_keys, self._default_less_keys)
        self.out_dir = out_dir
        self.best_ckpt_path: str | None = None
        self.best_score: float | None = None
        # Bumped after every evaluation; EarlyStoppingHook uses it to spot fresh results.
        self.eval_count = 0
        self.last_eval_res: dict | None = None
        # Epoch/iteration (1-based) of the last evaluation; None: unknown (resumed from a
        # checkpoint without this hook's state), 0: none yet.
        self.evaluated_at: int | None = None
        self.rule: str | None = None
        self.key_indicator: str | None = None
        if save_best is not None:
            self._init_rule(rule, save_best)
        elif rule is not None:
            self._check_rule(rule)
            self.rule = rule

    def _check_eval_kwargs(self, dataset: Any, eval_kwargs: dict) -> None:
        """Raise ConfigArgumentError for an argument neither this hook nor ``evaluate`` takes.

        ``dataset.evaluate(results, logger=..., **eval_kwargs)`` would reject it only at the
        first evaluation, maybe hours into training. An ``evaluate`` with ``**kwargs`` (or
        without a readable signature) may accept anything, so nothing is checked then.
        """
        if not eval_kwargs:
            return
        try:
            params = list(inspect.signature(dataset.evaluate).parameters.values())
        except (TypeError, ValueError):
            return
        kind = inspect.Parameter
        if any(p.kind == kind.VAR_KEYWORD for p in params):
            return
        # The first parameter receives the results and ``logger`` the runner's logger, both
        # from this hook.
        by_name = (kind.POSITIONAL_OR_KEYWORD, kind.KEYWORD_ONLY)
        evaluate_args = [p.name for p in params[1:] if p.kind in by_name and p.name != "logger"]
        unknown = [key for key in eval_kwargs if key not in evaluate_args]
        if not unknown:
            return
        name = type(self).__name__
        hook_args = [a for a in _named_args(type(self)) if a != "dataloader"]
        evaluate_name = f"{type(dataset).__name__}.evaluate"
        listed = (
            f"{name}: {', '.join(hook_args)}; {evaluate_name} (gets the others): "
            f"{', '.join(evaluate_args) or 'none'}"
        )
        key = unknown[0]
        err = unexpected_argument_error(name, key, hook_args + evaluate_args, listed)
        if key in _named_args(DistEvalHook) and key not in hook_args:
            raise ConfigArgumentError(
                f"{err}. ({key} is an argument of DistEvalHook, which distributed runs use.)"
            )
        raise err

    # Rule handling ------------------------------------------------------------------------------

    def _check_rule(self, rule: str | None) -> None:
        if rule is not None and rule not in self.rule_map:
            raise ValueError(
                f"{type(self).__name__}: unknown rule {rule!r}; valid rules are "
                f"{sorted(self.rule_map)} or None (inferred from the metric name)"
            )

    def _init_rule(self, rule: str | None, key_indicator: str) -> None:
        """Set the comparison rule for ``key_indicator`` (given, or inferred from its name)."""
        self._check_rule(rule)
        if rule is None and key_indicator != "auto":
            rule = infer_rule(key_indicator, self.greater_keys, self.less_keys)
            if rule is None:
                raise ValueError(
                    f"{type(self).__name__}: cannot infer whether greater or less is better "
                    f"for {key_indicator!r} (greater keys: {list(self.greater_keys)}, less "
                    f"keys: {list(self.less_keys)}); pass rule='greater' or rule='less'"
                )
        self.rule = rule
        self.key_indicator = key_indicator

    @property
    def compare_func(self) -> Callable[[float, float], bool]:
        """``compare_func(new, best)`` is True when ``new`` is better under :attr:`rule`."""
        return self.rule_map[self.rule]

    # Stages -------------------------------------------------------------------------------------

    def before_run(self, runner: Any) -> None:
        """Resolve ``out_dir``, pick up the best checkpoint and catch up on a missed evaluation.

        A run resumed from a checkpoint saved before an evaluation that was due (the crash
        came between the two) evaluates now, also when no training is left to do.
        """
        if not self.out_dir:
            self.out_dir = runner.work_dir
        if self.evaluated_at is None and runner.iter == 0:
            self.evaluated_at = 0  # a fresh run: a checkpoint saved before the first evaluation
        if self.save_best is not None:
            if runner.meta is None:
                runner.meta = {}
            msgs = runner.meta.setdefault("hook_msgs", {})
            # State restored by load_state_dict wins over the meta of the checkpoint.
            if self.best_ckpt_path is None:
                self.best_ckpt_path = msgs.get("best_ckpt")
            if self.best_score is None and "best_score" in msgs:
                self.best_score = msgs["best_score"]
        if self._missed(runner.epoch if self.by_epoch else runner.iter):
            self._evaluate_now(runner)
            self.initial_flag = False  # that was the evaluation before resumed training

    def before_train_iter(self, runner: Any) -> None:
        """When resuming by iteration at or after ``start``, evaluate once first."""
        if self.by_epoch or not self.initial_flag:
            return
        if self.start is not None and runner.iter >= self.start:
            self._evaluate_now(runner)
        self.initial_flag = False

    def before_train_epoch(self, runner: Any) -> None:
        """When resuming by epoch at or after ``start``, evaluate once first."""
        if not (self.by_epoch and self.initial_flag):
            return
        if self.start is not None and runner.epoch >= self.start:
            self._evaluate_now(runner)
        self.initial_flag = False

    def _missed(self, completed: int) -> bool:
        """Whether the evaluation due after ``completed`` epochs/iterations never ran."""
        return (
            completed > 0
            and self.evaluated_at is not None
            and self.evaluated_at < completed
            and self._is_eval_point(completed)
        )

    def after_train_iter(self, runner: Any) -> None:
        """Evaluate by iteration (loggers log the result as a separate val record)."""
        if not self.by_epoch and self._should_evaluate(runner):
            self.evaluated_at = runner.iter + 1  # before: a best checkpoint saved records it
            self._do_evaluate(runner)

    def after_train_epoch(self, runner: Any) -> None:
        """Evaluate by epoch."""
        if self.by_epoch and self._should_evaluate(runner):
            self.evaluated_at = runner.epoch + 1
            self._do_evaluate(runner)

    def _should_evaluate(self, runner: Any) -> bool:
        """Whether the epoch/iteration that just ran is an evaluation point."""
        return self._is_eval_point((runner.epoch if self.by_epoch else runner.iter) + 1)

    def _is_eval_point(self, number: int) -> bool:
        """Whether evaluation is due after epoch/iteration ``number`` (1-based)."""
        if self.start is None:
            return number % self.interval == 0
        if number < self.start:
            return False
        return (number - self.start) % self.interval == 0

    def _evaluate_now(self, runner: Any) -> None:
        self.evaluated_at = runner.epoch if self.by_epoch else runner.iter
        self._do_evaluate(runner, initial=True)
        if self.last_eval_res is not None and runner.rank == 0:
            # Loggers clear the buffer at the start of the epoch, so say it here.
            metrics = ", ".join(f"{k}: {v}" for k, v in self.last_eval_res.items())
            runner.logger.info(f"Evaluation before resumed training: {metrics}")

    def _do_evaluate(self, runner: Any, initial: bool = False) -> None:
        """Test, evaluate, log and maybe save the best checkpoint."""
        results = self._run_test(runner.model, lambda m: self.test_fn(m, self.dataloader))
        runner.log_buffer.output["eval_iter_num"] = len(self.dataloader)
        key_score = self.evaluate(runner, results)
        if self.save_best is not None and key_score is not None:
            self._save_ckpt(runner, key_score, initial)

    @staticmethod
    def _run_test(model: nn.Module, run: Callable[[nn.Module], Any]) -> Any:
        # The test function switches to eval mode; an iteration-based evaluation inside an
        # epoch must hand the model back in the mode training left it in. The RNG states are
        # put back too: creating the loader's iterator draws from torch's RNG, and training
        # must not depend on whether (and how often) it was evaluated. Otherwise a run resumed
        # from a checkpoint saved before an evaluation would draw different random numbers.
        was_training = model.training
        rng_state = get_rng_state()
        try:
            return run(model)
        finally:
            model.train(was_training)
            set_rng_state(rng_state)

    def evaluate(self, runner: Any, results: list) -> float | None:
        """Score ``results``, put the metrics in the log buffer, return the ``save_best`` score.

        Raises:
            MissingMetricError: ``save_best`` names a metric that ``evaluate`` did not return.
        """
        eval_res = self.dataloader.dataset.evaluate(
            results, logger=runner.logger, **self.eval_kwargs
        )
        if not isinstance(eval_res, dict):
            raise TypeError(
                f"{type(self.dataloader.dataset).__name__}.evaluate must return a dict of "
                f"metrics, but returned {type(eval_res).__name__}"
            )
        for name, val in eval_res.items():
            runner.log_buffer.output[name] = val
        runner.log_buffer.ready = True
        self.last_eval_res = dict(eval_res)
        self.eval_count += 1
        if self.save_best is None:
            return None
        if not eval_res:
            warnings.warn(
                f"{type(self).__name__}: evaluate returned no metrics, so no best checkpoint is "
                "saved this time",
                stacklevel=2,
            )
            return None
        if self.key_indicator == "auto":
            self._init_rule(self.rule, next(iter(eval_res)))
        if self.key_indicator not in eval_res:
            raise MissingMetricError(
                f"{type(self).__name__}: save_best={self.key_indicator!r} is not among the "
                f"metrics returned by {type(self.dataloader.dataset).__name__}.evaluate: "
                f'{list(eval_res)}; set save_best to one of them or "auto"'
            )
        return float(eval_res[self.key_indicator])

    def _save_ckpt(self, runner: Any, key_score: float, initial: bool = False) -> None:
        """Save a new best checkpoint (and delete the old one) when ``key_score`` is better."""
        # At an initial evaluation the counters name the last completed epoch/iteration.
        offset = 0 if initial else 1
        if self.by_epoch:
            cur_type, cur_time = "epoch", runner.epoch + offset
        else:
            cur_type, cur_time = "iter", runner.iter + offset
        best = self.best_score if self.best_score is not None else self.init_value_map[self.rule]
        if not self.compare_func(key_score, best):
            return
        self.best_score = key_score
        runner.meta.setdefault("hook_msgs", {})["best_score"] = key_score
        previous = self.best_ckpt_path
        name = f"best_{self.key_indicator}_{cur_type}_{cur_time}.pth"
        self.best_ckpt_path = osp.join(self.out_dir, name)
        runner.meta["hook_msgs"]["best_ckpt"] = self.best_ckpt_path
        runner.save_checkpoint(self.out_dir, filename_tmpl=name, create_symlink=False)
        runner.logger.info(f"Now best checkpoint is saved as {name}.")
        # Only once the new one is on disk: a crash or failed write during the save must
        # leave the previous best checkpoint in place.
        if previous and previous != self.best_ckpt_path and osp.isfile(previous):
            os.remove(previous)
            runner.logger.info(f"The previous best checkpoint {previous} was removed")
        runner.logger.info(
            f"Best {self.key_indicator} is {key_score:0.4f} at {cur_time} {cur_type}."
        )

    # Resumable state ----------------------------------------------------------------------------

    def state_dict(self) -> dict:
        """The last evaluated epoch/iteration; with ``save_best``, the best score and checkpoint.

        ``evaluated_at`` lets a resumed run catch up on an evaluation the crash prevented.
        """
        state: dict[str, Any] = {"evaluated_at": self.evaluated_at}
        if self.save_best is None:
            return state
        state.update(
            best_score=self.best_score,
            best_ckpt=self.best_ckpt_path,
            key_indicator=self.key_indicator,
            rule=self.rule,
        )
        return state

    def load_state_dict(self, state: dict) -> None:
        """Restore the state returned by :meth:`state_dict`."""
        if not state:
            return
        self.evaluated_at = state.get("evaluated_at")  # absent in older checkpoints
        if self.save_best is None:
            return
        self.best_score = state.get("best_score")
        self.best_ckpt_path = state.get("best_ckpt")
        if self.save_best == "auto" and state.get("key_indicator") not in (None, "auto"):
            self.key_indicator = state["key_indicator"]
            self.rule = state.get("rule") or self.rule


@HOOKS.register_module()
class DistEvalHook(EvalHook):
    """Distributed :class:`EvalHook`: every rank tests its shard, rank 0 evaluates.

    The loader should use a ``DistributedSampler`` without shuffling; the default ``test_fn``
    gathers the shards in dataset order with ``collect_results``. Only rank 0 gets metrics,
    writes them to its log buffer and saves the best checkpoint.

    Args:
        dataloader: This rank's evaluation loader.
        start: See :class:`EvalHook`.
        interval: See :class:`EvalHook`.
        by_epoch: See :class:`EvalHook`.
        save_best: See :class:`EvalHook`.
        rule: See :class:`EvalHook`.
        test_fn: ``test_fn(model, dataloader, tmpdir=..., gpu_collect=...)``; returns all
            results on rank 0 (anything on other ranks).
        greater_keys: See :class:`EvalHook`.
        less_keys: See :class:`EvalHook`.
        broadcast_bn_buffer: Copy BatchNorm running stats from rank 0 to all ranks before
            testing (DDP does not sync them, so ranks would test different models).
        tmpdir: Passed to ``test_fn`` (default ``<work_dir>/.eval_hook``).
        gpu_collect: Passed to ``test_fn``.
        out_dir: See :class:`EvalHook`.
        file_client_args: See :class:`EvalHook`.
        **eval_kwargs: Passed to ``dataset.evaluate``.
    """

    def __init__(
        self,
        dataloader: DataLoader,
        start: int | None = None,
        interval: int = 1,
        by_epoch: bool = True,
        save_best: str | None = None,
        rule: str | None = None,
        test_fn: Callable | None = None,
        greater_keys: Union[str, Sequence[str], None] = None,
        less_keys: Union[str, Sequence[str], None] = None,
        broadcast_bn_buffer: bool = True,
        tmpdir: str | None = None,
        gpu_collect: bool = False,
        out_dir: str | None = None,
        file_client_args: dict | None = None,
        **eval_kwargs: Any,
    ) -> None:
        super().__init__(
            dataloader,
            start=start,
            interval=interval,
            by_epoch=by_epoch,
            save_best=save_best,
            rule=rule,
            test_fn=test_fn if test_fn is not None else _default_multi_test,
            greater_keys=greater_keys,
            less_keys=less_keys,
            out_dir=out_dir,
            file_client_args=file_client_args,
            **eval_kwargs,
        )
        self.broadcast_bn_buffer = broadcast_bn_buffer
        self.tmpdir = tmpdir
        self.gpu_collect = gpu_collect

    def _broadcast_bn_buffers(self, model: nn.Module) -> None:
        if not is_distributed():
            return
        for module in model.modules():
            if isinstance(module, _BN_TYPES) and module.track_running_stats:
                dist.broadcast(module.running_var, 0)
                dist.broadcast(module.running_mean, 0)

    def _do_evaluate(self, runner: Any, initial: bool = False) -> None:
        """Test on every rank; evaluate, log and save the best checkpoint on rank 0."""
        if self.broadcast_bn_buffer:
            self._broadcast_bn_buffers(runner.model)
        tmpdir = self.tmpdir if self.tmpdir is not None else osp.join(runner.work_dir, ".eval_hook")
        results = self._run_test(
            runner.model,
            lambda m: self.test_fn(m, self.dataloader, tmpdir=tmpdir, gpu_collect=self.gpu_collect),
        )
        if runner.rank == 0:
            runner.log_buffer.output["eval_iter_num"] = len(self.dataloader)
            key_score = self.evaluate(runner, results)
            if self.save_best is not None and key_score is not None:
                self._save_ckpt(runner, key_score, initial)
        else:
            # Other ranks have no metrics, but they took part in this evaluation.
            self.eval_count += 1


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


def _named_args(cls: type) -> list[str]:
    """The arguments of ``cls(...)`` that can be passed by name, in order."""
    by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [n for n, p in inspect.signature(cls).parameters.items() if p.kind in by_name]


def _as_tuple(keys: Union[str, Sequence[str], None], default: Sequence[str]) -> tuple:
    if keys is None:
        return tuple(default)
    if isinstance(keys, str):
        keys = (keys,)
    return tuple(default) + tuple(keys)
