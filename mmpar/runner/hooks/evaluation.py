"""EvalHook / DistEvalHook: evaluate during training, log the metrics, keep the best checkpoint."""

from __future__ import annotations

import functools
import os.path as osp
import warnings
from typing import Any, Callable, Sequence, Union

import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader

from mmpar.engine import multi_device_test, single_device_test

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.fileio import FileClient as FileClient
from mmpar.utils import is_seq_of as is_seq_of
from mmpar.utils.compat_errors import MessageKeyError
from mmpar.utils.dist import broadcast_object, is_distributed

from ..checkpointing.checkpointer import checkpointer_of
from ..runner_protocol import RunnerLike
from ..utils import get_rng_state, set_rng_state
from .best_checkpoint import (
    DEFAULT_GREATER_KEYS,
    DEFAULT_LESS_KEYS,
    BestCheckpoint,
    BestCheckpointAttribute,
    infer_rule,
)
from .evaluation_args import check_eval_hook_args, check_eval_kwargs, with_keyword_args_before
from .hook import HOOKS, Hook
from .logger.base import LoggerHook

__all__ = ["DistEvalHook", "EvalHook", "MissingMetricError", "infer_rule"]

# Public BatchNorm classes whose running stats DistEvalHook syncs from rank 0.
_BN_TYPES = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)

# The default test functions: the engine's loops without their progress bars.
_default_single_test = functools.partial(single_device_test, progress=False)
_default_multi_test = functools.partial(multi_device_test, progress=False)


class MissingMetricError(MessageKeyError):
    """A metric asked for by name is not among those an evaluation returned.

    A ``KeyError`` (for ``except KeyError`` callers) whose message prints as written.
    """


@HOOKS.register_module()
class EvalHook(Hook):
    """Evaluate the model every ``interval`` epochs (or iterations) during training.

    The model is run over ``dataloader`` with ``test_fn`` (default: a single-process loop calling
    ``model(return_loss=False, **data)`` under ``torch.no_grad()``), the results go to
    ``dataloader.dataset.evaluate(results, logger=runner.logger, **eval_kwargs)``, and the
    returned metrics are written to ``runner.log_buffer.output`` (``ready`` set), so logger hooks
    log them as a val record. With ``save_best`` the best checkpoint is kept as
    ``best_<metric>_epoch_<n>.pth`` (``_iter_<n>`` when evaluating by iteration) by a
    :class:`~mmpar.runner.hooks.best_checkpoint.BestCheckpoint` (:attr:`best_checkpoint`),
    the previous best file deleted, and ``best_score``/``best_ckpt`` recorded in
    ``runner.meta['hook_msgs']``. The model's train/eval mode and the RNG states are restored
    after testing, so evaluating never changes training. If a run is resumed from a checkpoint
    saved before an evaluation that was due (the checkpoint hook runs first; a crash came in
    between), that evaluation runs before training continues.

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
        greater_keys: Metric-name substrings for which greater is better; given, they replace
            the class's ``_default_greater_keys``, as in mmcv.
        less_keys: Likewise, for which less is better (replacing ``_default_less_keys``).
        out_dir: Where best checkpoints go (default ``runner.work_dir``).
        file_client_args: Only ``None`` or ``dict(backend='disk')`` (local files) is supported.
        **eval_kwargs: Passed to ``dataset.evaluate``. Unless ``evaluate`` takes ``**kwargs``,
            each must be one of its parameters: a typo (``intervl=1``) raises
            :class:`~mmpar.utils.registry.ConfigArgumentError` here, not at the first
            evaluation.
    """

    rule_map = BestCheckpoint.rule_map
    init_value_map = BestCheckpoint.init_value_map
    _default_greater_keys = DEFAULT_GREATER_KEYS
    _default_less_keys = DEFAULT_LESS_KEYS
    _default_test_fn = staticmethod(_default_single_test)

    # mmcv's attributes of the best-checkpoint bookkeeping.
    rule = BestCheckpointAttribute()
    key_indicator = BestCheckpointAttribute()
    greater_keys = BestCheckpointAttribute()
    less_keys = BestCheckpointAttribute()
    best_score = BestCheckpointAttribute()
    best_ckpt_path = BestCheckpointAttribute()

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
        check_eval_hook_args(
            name, dataloader, start, interval, by_epoch, save_best, file_client_args
        )
        if type(self).evaluate is EvalHook.evaluate:
            # Only where they reach dataset.evaluate: a subclass that scores results itself
            # (its own evaluate) may take arguments of its own, as mmcv lets it.
            check_eval_kwargs(
                type(self), dataloader.dataset, eval_kwargs, also_valid_for=DistEvalHook
            )
        self.dataloader = dataloader
        self.interval = interval
        self.start = start
        self.by_epoch = by_epoch
        self.save_best = save_best
        self.eval_kwargs = eval_kwargs
        self.initial_flag = True
        self.test_fn = test_fn if test_fn is not None else self._default_test_fn
        self.out_dir = out_dir
        self.best_checkpoint = BestCheckpoint(
            save_best,
            rule,
            greater_keys,
            less_keys,
            name,
            # A subclass's own defaults count, as in mmcv (projects' hooks set them).
            default_greater_keys=type(self)._default_greater_keys,
            default_less_keys=type(self)._default_less_keys,
        )
        # Bumped after every evaluation; EarlyStoppingHook uses it to spot fresh results.
        self.eval_count = 0
        self.last_eval_res: dict | None = None
        # Epoch/iteration (1-based) of the last evaluation; None: unknown (resumed from a
        # checkpoint without this hook's state), 0: none yet.
        self.evaluated_at: int | None = None

    @property
    def compare_func(self) -> Callable[[float, float], bool]:
        """``compare_func(new, best)`` is True when ``new`` is better under :attr:`rule`."""
        return self.best_checkpoint.compare_func

    # Stages -------------------------------------------------------------------------------------

    def before_run(self, runner: RunnerLike) -> None:
        """Resolve ``out_dir``, pick up the best checkpoint and catch up on a missed evaluation.

        A run resumed from a checkpoint saved before an evaluation that was due (the crash
        came between the two) evaluates now, also when no training is left to do.
        """
        if not self.out_dir:
            self.out_dir = runner.work_dir
        if self.evaluated_at is None and runner.iter == 0:
            self.evaluated_at = 0  # a fresh run: a checkpoint saved before the first evaluation
        if self.save_best is not None:
            self.best_checkpoint.restore_from_meta(runner)
        if self._missed(runner.epoch if self.by_epoch else runner.iter):
            self._evaluate_now(runner)
            self.initial_flag = False  # that was the evaluation before resumed training

    def before_train_iter(self, runner: RunnerLike) -> None:
        """When resuming by iteration at or after ``start``, evaluate once first."""
        if self.by_epoch or not self.initial_flag:
            return
        if self.start is not None and runner.iter >= self.start:
            self._evaluate_now(runner)
        self.initial_flag = False

    def before_train_epoch(self, runner: RunnerLike) -> None:
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

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Evaluate by iteration (loggers log the result as a separate val record).

        As in mmcv, the loggers first write this iteration's train record and the buffer is
        emptied: subclasses' ``_do_evaluate`` may clear the buffer (mmseg's does), which would
        otherwise drop the train values the loggers have not averaged yet.
        """
        if not self.by_epoch and self._should_evaluate(runner):
            for hook in runner.hooks:
                if isinstance(hook, LoggerHook):
                    hook.after_train_iter(runner)
            runner.log_buffer.clear()
            self.evaluated_at = runner.iter + 1  # before: a best checkpoint saved records it
            self._do_evaluate(runner)

    def after_train_epoch(self, runner: RunnerLike) -> None:
        """Evaluate by epoch."""
        if self.by_epoch and self._should_evaluate(runner):
            self.evaluated_at = runner.epoch + 1
            self._do_evaluate(runner)

    def _should_evaluate(self, runner: RunnerLike) -> bool:
        """Whether the epoch/iteration that just ran is an evaluation point."""
        return self._is_eval_point((runner.epoch if self.by_epoch else runner.iter) + 1)

    def _is_eval_point(self, number: int) -> bool:
        """Whether evaluation is due after epoch/iteration ``number`` (1-based)."""
        if self.start is None:
            return number % self.interval == 0
        if number < self.start:
            return False
        return (number - self.start) % self.interval == 0

    def _evaluate_now(self, runner: RunnerLike) -> None:
        self.evaluated_at = runner.epoch if self.by_epoch else runner.iter
        self._do_evaluate(runner, initial=True)
        if self.last_eval_res is not None and runner.rank == 0:
            # Loggers clear the buffer at the start of the epoch, so say it here.
            metrics = ", ".join(f"{k}: {v}" for k, v in self.last_eval_res.items())
            runner.logger.info(f"Evaluation before resumed training: {metrics}")

    def _do_evaluate(self, runner: RunnerLike, initial: bool = False) -> None:
        """Test, evaluate, log and maybe save the best checkpoint."""
        results = self._run_test(runner.model, lambda m: self.test_fn(m, self.dataloader))
        self._score(runner, results, initial)

    def _score(self, runner: RunnerLike, results: list, initial: bool) -> None:
        """Evaluate ``results``, log the metrics and keep the best checkpoint."""
        key_score = self._log_metrics(runner, results)
        if self.save_best is not None and key_score is not None:
            self._save_ckpt(runner, key_score, initial)

    def _log_metrics(self, runner: RunnerLike, results: list) -> float | None:
        """Evaluate ``results`` into the log buffer; return the ``save_best`` score."""
        runner.log_buffer.output["eval_iter_num"] = len(self.dataloader)
        return self.evaluate(runner, results)

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

    def evaluate(self, runner: RunnerLike, results: list) -> float | None:
        """Score ``results``, put the metrics in the log buffer, return the ``save_best`` score.

        Raises:
            TypeError: The dataset has no ``evaluate`` (checked here, not when the hook is
                built: mmcv lets a subclass or a test replace this method).
            MissingMetricError: ``save_best`` names a metric that ``evaluate`` did not return.
        """
        dataset = self.dataloader.dataset
        if not hasattr(dataset, "evaluate"):
            raise TypeError(
                f"{type(self).__name__}: the dataset {type(dataset).__name__} has no "
                "evaluate(results, logger=None, **kwargs) method, so results cannot be scored"
            )
        eval_res = dataset.evaluate(results, logger=runner.logger, **self.eval_kwargs)
        if not hasattr(eval_res, "items"):  # a mapping of metrics (mmcv reads only .items())
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
            # mmcv's words exactly: code (and mmcv's tests) look for this warning by text.
            warnings.warn(
                "Since `eval_res` is an empty dict, the behavior to save the best checkpoint "
                "will be skipped in this evaluation.",
                stacklevel=2,
            )
            return None
        if self.key_indicator == "auto":
            self.best_checkpoint.set_metric(next(iter(eval_res)), self.rule)
        if self.key_indicator not in eval_res:
            raise MissingMetricError(
                f"{type(self).__name__}: save_best={self.key_indicator!r} is not among the "
                f"metrics returned by {type(self.dataloader.dataset).__name__}.evaluate: "
                f'{list(eval_res)}; set save_best to one of them or "auto"'
            )
        return float(eval_res[self.key_indicator])

    def _save_ckpt(self, runner: RunnerLike, key_score: float, initial: bool = False) -> None:
        """Save a new best checkpoint (and delete the old one) when ``key_score`` is better."""
        # At an initial evaluation the counters name the last completed epoch/iteration.
        offset = 0 if initial else 1
        unit, number = ("epoch", runner.epoch) if self.by_epoch else ("iter", runner.iter)
        self.best_checkpoint.update(runner, key_score, self.out_dir, unit, number + offset)

    # Resumable state ----------------------------------------------------------------------------

    def state_dict(self) -> dict:
        """The last evaluated epoch/iteration; with ``save_best``, the best score and checkpoint.

        ``evaluated_at`` lets a resumed run catch up on an evaluation the crash prevented.
        """
        state: dict[str, Any] = {"evaluated_at": self.evaluated_at}
        if self.save_best is not None:
            state.update(self.best_checkpoint.state_dict())
        return state

    def load_state_dict(self, state: dict) -> None:
        """Restore the state returned by :meth:`state_dict`."""
        if not state:
            return
        self.evaluated_at = state.get("evaluated_at")  # absent in older checkpoints
        if self.save_best is not None:
            self.best_checkpoint.load_state_dict(state)


def _dist_eval_hook_args(
    *, broadcast_bn_buffer: bool = True, tmpdir: str | None = None, gpu_collect: bool = False
) -> None:
    """DistEvalHook's own arguments, their types and defaults (a signature, never called)."""


# mmcv's DistEvalHook signature: EvalHook's, with the three own arguments before out_dir.
_DIST_EVAL_SIGNATURE = with_keyword_args_before(EvalHook.__init__, _dist_eval_hook_args, "out_dir")


@HOOKS.register_module()
class DistEvalHook(EvalHook):
    """Distributed :class:`EvalHook`: every rank tests its shard, rank 0 evaluates.

    The loader should use a ``DistributedSampler`` without shuffling; the default ``test_fn``
    gathers the shards in dataset order with ``collect_results``. Only rank 0 gets metrics,
    writes them to its log buffer and saves the best checkpoint; with a sharded (FSDP) model
    rank 0 broadcasts the score and every rank joins that save.

    The signature is mmcv's: ``DistEvalHook(dataloader, start=None, interval=1, by_epoch=True,
    save_best=None, rule=None, test_fn=None, greater_keys=None, less_keys=None,
    broadcast_bn_buffer=True, tmpdir=None, gpu_collect=False, out_dir=None,
    file_client_args=None, **eval_kwargs)`` (``inspect.signature`` shows it), so positional
    calls bind as in mmcv.

    Args:
        *args: :class:`EvalHook`'s arguments (``dataloader`` is this rank's loader), then,
            positionally in mmcv's order, this class's three, ``out_dir``, ``file_client_args``.
        broadcast_bn_buffer: Copy BatchNorm running stats from rank 0 to all ranks before
            testing (DDP does not sync them, so ranks would test different models).
        tmpdir: Passed to ``test_fn`` (default ``<work_dir>/.eval_hook``).
        gpu_collect: Passed to ``test_fn``.
        **kwargs: :class:`EvalHook`'s arguments by name and ``dataset.evaluate``'s options.
            Here ``test_fn(model, dataloader, tmpdir=..., gpu_collect=...)`` returns all
            results on rank 0 (anything on other ranks); the default is
            :func:`mmpar.engine.multi_device_test`.
    """

    _default_test_fn = staticmethod(_default_multi_test)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Bound against mmcv's full signature, so positional and keyword calls mean what they
        # mean in mmcv, and a value given twice is a TypeError.
        try:
            bound = _DIST_EVAL_SIGNATURE.bind(self, *args, **kwargs)
        except TypeError as err:
            raise TypeError(f"DistEvalHook: {err}") from None
        bound.apply_defaults()
        call = dict(bound.arguments)
        del call["self"]
        self.broadcast_bn_buffer = call.pop("broadcast_bn_buffer")
        self.tmpdir = call.pop("tmpdir")
        self.gpu_collect = call.pop("gpu_collect")
        super().__init__(**call.pop("eval_kwargs"), **call)

    def _broadcast_bn_buffers(self, model: nn.Module) -> None:
        if not is_distributed():
            return
        for module in model.modules():
            if isinstance(module, _BN_TYPES) and module.track_running_stats:
                dist.broadcast(module.running_var, 0)
                dist.broadcast(module.running_mean, 0)

    def _do_evaluate(self, runner: RunnerLike, initial: bool = False) -> None:
        """Test on every rank; evaluate, log and save the best checkpoint on rank 0."""
        if self.broadcast_bn_buffer:
            self._broadcast_bn_buffers(runner.model)
        tmpdir = self.tmpdir if self.tmpdir is not None else osp.join(runner.work_dir, ".eval_hook")
        results = self._run_test(
            runner.model,
            lambda m: self.test_fn(m, self.dataloader, tmpdir=tmpdir, gpu_collect=self.gpu_collect),
        )
        key_score = None
        if runner.rank == 0:
            key_score = self._log_metrics(runner, results)
        else:
            # Other ranks have no metrics, but they took part in this evaluation.
            self.eval_count += 1
        if self.save_best is None:
            return
        if checkpointer_of(runner).collective:
            # Sharded model: saving the best checkpoint needs every rank. Rank 0 scored; the
            # others learn the score (and the metric 'auto' chose) and join the save.
            decision = (key_score, self.key_indicator, self.rule)
            key_score, key_indicator, rule = broadcast_object(decision)
            if key_score is not None:
                self.best_checkpoint.set_metric(key_indicator, rule)
        if key_score is not None:
            self._save_ckpt(runner, key_score, initial)


# inspect, help() and argument checks read it. attr-defined: typeshed's functions declare no
# __signature__, which inspect.signature honours on any callable.
DistEvalHook.__init__.__signature__ = _DIST_EVAL_SIGNATURE  # type: ignore[attr-defined]
