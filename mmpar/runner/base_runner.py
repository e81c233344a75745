"""BaseRunner: state, hooks, checkpoints and resume shared by the epoch and iteration runners.

The training loops themselves live in ``epoch_based_runner.py`` and ``iter_based_runner.py``.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import logging
import os
import warnings
from abc import ABCMeta, abstractmethod
from collections.abc import Iterator
from typing import Any, Callable, Union

import torch
from torch.optim import Optimizer

from mmpar.parallel import is_module_wrapper
from mmpar.utils.logging import get_logger
from mmpar.utils.registry import config_error_context

from .checkpoint import find_latest_checkpoint, load_checkpoint, save_checkpoint, update_latest_link
from .dist_utils import get_dist_info
from .hooks import HOOKS, Hook
from .log_buffer import LogBuffer
from .priority import Priority, get_priority
from .utils import get_rng_state, get_time_str, set_rng_state

RESUME_STATE_VERSION = 1


def _check_positive_int(name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int or None, but got {value!r}")


def find_resumable_sampler(data_loader: Any) -> tuple[Any, bool]:
    """Return ``(sampler, counts_batches)`` for the loader's sampler that has ``state_dict``.

    A batch sampler implementing the resume protocol wins over the index sampler; torch's
    default ``BatchSampler`` has no ``state_dict`` and is passed over. ``(None, False)`` when
    neither implements it.
    """
    batch_sampler = getattr(data_loader, "batch_sampler", None)
    if batch_sampler is not None and hasattr(batch_sampler, "state_dict"):
        return batch_sampler, True
    sampler = getattr(data_loader, "sampler", None)
    if sampler is not None and hasattr(sampler, "state_dict"):
        return sampler, False
    return None, False


def set_loader_epoch(data_loader: Any, epoch: int) -> None:
    """Call ``set_epoch(epoch)`` on the loader's sampler, batch sampler or its inner sampler."""
    for obj in (
        getattr(data_loader, "sampler", None),
        getattr(data_loader, "batch_sampler", None),
        getattr(getattr(data_loader, "batch_sampler", None), "sampler", None),
    ):
        if obj is not None and hasattr(obj, "set_epoch"):
            obj.set_epoch(epoch)
            return


def start_loader_iter(
    data_loader: Any,
    start_batch: int = 0,
    sampler_state: dict | None = None,
    logger: logging.Logger | None = None,
) -> Iterator:
    """Create the loader's iterator positioned at batch ``start_batch`` of the current epoch.

    With a sampler that implements the resume protocol (``docs/internals.md``), its state is
    restored and ``set_start_index`` is called *before* the iterator exists, so the skipped
    samples are never loaded. Other samplers get a warning and the batches are skipped by
    reading them.
    """
    sampler, counts_batches = find_resumable_sampler(data_loader)
    if start_batch <= 0:
        # At an epoch boundary the saved state is the finished epoch's; the sampler already
        # got the new epoch from set_epoch (DistSamplerSeedHook), which must not be undone.
        return iter(data_loader)
    if sampler is not None and sampler_state and hasattr(sampler, "load_state_dict"):
        sampler.load_state_dict(sampler_state)
    if sampler is not None and hasattr(sampler, "set_start_index"):
        if counts_batches:
            sampler.set_start_index(start_batch)
        else:
            batch_size = getattr(data_loader, "batch_size", None)
            if batch_size is None:
                batch_size = data_loader.batch_sampler.batch_size
            start = start_batch * batch_size
            try:
                sampler.set_start_index(start)
            except ValueError:
                # Saved after the epoch's last (partial) batch of a finite sampler: the whole
                # epoch is consumed, which is fewer samples than batches * batch_size.
                if start_batch < len(data_loader):
                    raise
                sampler.set_start_index(len(sampler))
        return iter(data_loader)
    (logger or logging.getLogger("mmpar")).warning(
        f"The train sampler ({type(getattr(data_loader, 'sampler', None)).__name__}) does not "
        "implement set_start_index/state_dict; skipping %d batches by loading them. Resume is "
        "exact only if its order is deterministic. Use mmpar.datasets.samplers for exact resume.",
        start_batch,
    )
    data_iter = iter(data_loader)
    for _ in range(start_batch):
        next(data_iter, None)
    return data_iter


class BaseRunner(metaclass=ABCMeta):
    """State, hooks, checkpointing and resume shared by all runners (mmcv 1.x API).

    Args:
        model: The model; it (or the module it wraps) must define ``train_step`` and
            ``val_step`` unless ``batch_processor`` is given.
        batch_processor: Legacy ``fn(model, data_batch, train_mode, **kw) -> dict``.
        optimizer: An optimizer, a dict of optimizers, or None.
        work_dir: Output directory, created if missing.
        logger: Logger for progress messages (default: the ``mmpar`` logger).
        meta: Metadata saved in every checkpoint (e.g. config text, seed).
        max_iters: Total training iterations (iteration-based training).
        max_epochs: Total training epochs (epoch-based training).

    Raises:
        TypeError: Wrong model/optimizer/meta/batch_processor types.
        ValueError: Both or non-positive ``max_epochs``/``max_iters``.
        PermissionError: ``work_dir`` cannot be created or written.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        batch_processor: Callable | None = None,
        optimizer: Union[Optimizer, dict, None] = None,
        work_dir: str | None = None,
        logger: logging.Logger | None = None,
        meta: dict | None = None,
        max_iters: int | None = None,
        max_epochs: int | None = None,
    ) -> None:
        inner = model.module if is_module_wrapper(model) else model
        if batch_processor is not None:
            if not callable(batch_processor):
                raise TypeError(
                    f"batch_processor must be callable, but got {type(batch_processor).__name__}"
                )
            warnings.warn(
                "batch_processor is deprecated; implement model.train_step/val_step instead",
                DeprecationWarning,
                stacklevel=2,
            )
        elif not hasattr(inner, "train_step"):
            raise TypeError(
                f"model {type(inner).__name__} has no train_step(data_batch, optimizer) method; "
                "define train_step/val_step on the model or pass a batch_processor"
            )
        self._check_optimizer(optimizer)
        if meta is not None and not isinstance(meta, dict):
            raise TypeError(f"meta must be a dict or None, but got {type(meta).__name__}")
        if max_epochs is not None and max_iters is not None:
            raise ValueError(
                "Only one of max_epochs and max_iters can be set "
                f"(got max_epochs={max_epochs}, max_iters={max_iters})"
            )
        _check_positive_int("max_epochs", max_epochs)
        _check_positive_int("max_iters", max_iters)

        self.model = model
        self.batch_processor = batch_processor
        self.optimizer = optimizer
        self.meta = meta
        self.logger = logger if logger is not None else get_logger("mmpar")
        self.work_dir = self._prepare_work_dir(work_dir)
        self._model_name = type(inner).__name__
        self._rank, self._world_size = get_dist_info()
        self.timestamp = get_time_str()
        self.mode: str | None = None
        self._hooks: list[Hook] = []
        self._step_context_hooks: list[Hook] = []
        self._stage_hooks: dict[str, list[Hook]] = {}
        self._stage_cache_key = -1  # len(self._hooks) the per-stage lists were built for
        self._epoch = 0
        self._iter = 0
        self._inner_iter = 0
        self._max_epochs = max_epochs
        self._max_iters = max_iters
        self.log_buffer = LogBuffer()
        self.outputs: dict = {}
        self.data_loader: Any = None
        self.data_batch: Any = None
        self.should_stop = False
        # Position of the next batch to run; what a checkpoint saved now resumes from.
        self._next_position = {"epoch": 0, "iter": 0, "inner_iter": 0}
        self._train_loader: Any = None  # the torch DataLoader whose sampler state is saved
        self._pending_resume: dict | None = None  # hook/sampler/RNG state from resume()

    # ----------------------------------------------------------------- validation helpers
    @staticmethod
    def _check_optimizer(optimizer: Any) -> None:
        if optimizer is None or isinstance(optimizer, Optimizer):
            return
        if isinstance(optimizer, dict):
            for name, optim in optimizer.items():
                if not isinstance(optim, Optimizer):
                    raise TypeError(
                        f'optimizer["{name}"] must be a torch Optimizer, '
                        f"but got {type(optim).__name__}"
                    )
            return
        raise TypeError(
            "optimizer must be a torch Optimizer, a dict of them or None, "
            f"but got {type(optimizer).__name__}"
        )

    @staticmethod
    def _prepare_work_dir(work_dir: str | None) -> str | None:
        if work_dir is None:
            return None
        if not isinstance(work_dir, (str, os.PathLike)):
            raise TypeError(f"work_dir must be a str or None, but got {type(work_dir).__name__}")
        path = os.path.abspath(os.fspath(work_dir))
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as err:
            raise PermissionError(
                f'cannot create work_dir "{path}": {err.strerror}; choose a writable directory'
            ) from err
        if not os.access(path, os.W_OK | os.X_OK):
            raise PermissionError(f'work_dir "{path}" is not writable; choose another directory')
        return path

    # ------------------------------------------------------------------------- properties
    @property
    def model_name(self) -> str:
        """Class name of the (unwrapped) model."""
        return self._model_name

    @property
    def rank(self) -> int:
        """Rank of this process (0 when not distributed)."""
        return self._rank

    @property
    def world_size(self) -> int:
        """Number of processes (1 when not distributed)."""
        return self._world_size

    @property
    def hooks(self) -> list[Hook]:
        """Registered hooks in the order they are called."""
        return self._hooks

    @property
    def epoch(self) -> int:
        """Current epoch (0-based)."""
        return self._epoch

    @property
    def iter(self) -> int:
        """Current global iteration (0-based)."""
        return self._iter

    @property
    def inner_iter(self) -> int:
        """Current iteration within the epoch (0-based)."""
        return self._inner_iter

    @property
    def max_epochs(self) -> int | None:
        """Maximum training epochs."""
        return self._max_epochs

    @property
    def max_iters(self) -> int | None:
        """Maximum training iterations."""
        return self._max_iters

    def _run_limit(self, name: str, value: int | None) -> int:
        """Apply the deprecated ``run(max_epochs/max_iters=...)`` argument; return the limit.

        Raises:
            ValueError: The limit is set neither here nor in the constructor.
        """
        if value is not None:
            warnings.warn(
                f"setting {name} in run() is deprecated; pass it to the runner constructor",
                DeprecationWarning,
                stacklevel=3,
            )
            setattr(self, f"_{name}", value)
        limit = getattr(self, f"_{name}")
        if limit is None:
            raise ValueError(f"{name} must be set (in the runner constructor) to run")
        return limit

    # ----------------------------------------------------------------- abstract interface
    @abstractmethod
    def train(self, data_loader: Any, **kwargs: Any) -> None:
        """Run one training epoch (or iteration, for iteration-based runners)."""

    @abstractmethod
    def val(self, data_loader: Any, **kwargs: Any) -> None:
        """Run one validation epoch (or iteration)."""

    @abstractmethod
    def run(self, data_loaders: list, workflow: list, **kwargs: Any) -> None:
        """Run the workflow until the maximum epochs/iterations are reached."""

    @abstractmethod
    def save_checkpoint(
        self,
        out_dir: str,
        filename_tmpl: str,
        save_optimizer: bool = True,
        meta: dict | None = None,
        create_symlink: bool = True,
    ) -> None:
        """Save a checkpoint into ``out_dir``."""

    # ------------------------------------------------------------------------- optimizer
    def _param_group_values(self, fn: Callable[[dict], float], what: str) -> Union[list, dict]:
        if self.optimizer is None:
            raise RuntimeError(f"{what} is not applicable because the runner has no optimizer")
        if isinstance(self.optimizer, Optimizer):
            return [fn(group) for group in self.optimizer.param_groups]
        return {
            name: [fn(group) for group in optim.param_groups]
            for name, optim in self.optimizer.items()
        }

    def current_lr(self) -> Union[list, dict]:
        """Learning rate of every param group (a dict of lists for a dict of optimizers)."""
        return self._param_group_values(lambda g: g["lr"], "lr")

    def current_momentum(self) -> Union[list, dict]:
        """Momentum (or Adam's beta1) of every param group; 0 when the optimizer has none."""

        def momentum(group: dict) -> float:
            if "momentum" in group:
                return group["momentum"]
            if "betas" in group:
                return group["betas"][0]
            return 0

        return self._param_group_values(momentum, "momentum")

    # ----------------------------------------------------------------------------- hooks
    def register_hook(self, hook: Hook, priority: Union[int, str, Priority] = "NORMAL") -> None:
        """Insert ``hook`` by priority; equal priorities keep their registration order.

        Raises:
            TypeError: ``hook`` is not a :class:`Hook`.
            ValueError: ``hook`` already has a ``priority`` (registered twice?).
        """
        if not isinstance(hook, Hook):
            raise TypeError(f"hook must be a Hook instance, but got {type(hook).__name__}")
        if hasattr(hook, "priority"):
            raise ValueError(
                f'{type(hook).__name__} already has a "priority" attribute: it is reserved for '
                "the runner (was this hook instance registered twice?)"
            )
        hook.priority = get_priority(priority)  # type: ignore[attr-defined]
        index = len(self._hooks)
        while index > 0 and self._hooks[index - 1].priority > hook.priority:  # type: ignore
            index -= 1
        self._hooks.insert(index, hook)
        self._stage_cache_key = -1
        self._step_context_hooks = [
            h for h in self._hooks if callable(getattr(h, "train_step_context", None))
        ]

    def register_hook_from_cfg(self, hook_cfg: dict) -> None:
        """Build a hook from a config dict (``priority`` key optional) and register it."""
        hook_cfg = copy.deepcopy(hook_cfg)
        priority = hook_cfg.pop("priority", "NORMAL")
        self.register_hook(HOOKS.build(hook_cfg), priority=priority)

    def call_hook(self, fn_name: str) -> None:
        """Call stage ``fn_name`` (e.g. ``'after_train_iter'``) on every hook in order.

        Hooks that do not override the stage are skipped (their base method does nothing);
        the per-stage lists are rebuilt whenever the hook list changes.
        """
        if self._stage_cache_key != len(self._hooks):
            self._rebuild_stage_cache()
        for hook in self._stage_hooks.get(fn_name, self._hooks):
            getattr(hook, fn_name)(self)

    def _rebuild_stage_cache(self) -> None:
        triggered = [(h, set(h.get_triggered_stages()) | set(vars(h))) for h in self._hooks]
        # ``vars(h)``: stage methods assigned on the instance count as overrides too.
        self._stage_hooks = {
            stage: [h for h, stages in triggered if stage in stages] for stage in Hook.stages
        }
        self._stage_cache_key = len(self._hooks)

    def get_hook_info(self) -> str:
        """Return a table of which hooks run at each stage, with their priorities."""
        stage_hooks: dict[str, list[str]] = {stage: [] for stage in Hook.stages}
        for hook in self._hooks:
            try:
                level = Priority(hook.priority).name  # type: ignore[attr-defined]
            except ValueError:
                level = str(hook.priority)  # type: ignore[attr-defined]
            for stage in hook.get_triggered_stages():
                stage_hooks[stage].append(f"({level:<12}) {type(hook).__name__:<35}")
        lines = []
        for stage, hooks in stage_hooks.items():
            if hooks:
                lines.append(f"{stage}:\n" + "\n".join(hooks) + "\n" + "-" * 50)
        return "\n".join(lines)

    def _hook_keys(self) -> list[tuple[str, Hook]]:
        """Hooks by checkpoint key: class name, with ``#1``, ``#2`` for repeats."""
        counts: dict[str, int] = {}
        keyed = []
        for hook in self._hooks:
            name = type(hook).__name__
            n = counts.get(name, 0)
            counts[name] = n + 1
            keyed.append((name if n == 0 else f"{name}#{n}", hook))
        return keyed

    def _train_step_context(self) -> contextlib.AbstractContextManager:
        """Contexts hooks ask to wrap ``train_step`` in (``Hook.train_step_context(runner)``)."""
        if not self._step_context_hooks:
            return contextlib.nullcontext()
        stack = contextlib.ExitStack()
        for hook in self._step_context_hooks:
            stack.enter_context(hook.train_step_context(self))  # type: ignore[attr-defined]
        return stack

    # ----------------------------------------------------------------------- iteration
    def run_iter(self, data_batch: Any, train_mode: bool, **kwargs: Any) -> None:
        """Run ``train_step``/``val_step`` on one batch; store ``outputs``; log ``log_vars``.

        Raises:
            TypeError: The step did not return a dict.
            KeyError: A train step returned no ``loss``, or ``log_vars`` without
                ``num_samples``.
        """
        if self.batch_processor is not None:
            outputs = self.batch_processor(self.model, data_batch, train_mode=train_mode, **kwargs)
        elif train_mode and self._step_context_hooks:
            with self._train_step_context():
                outputs = self.model.train_step(data_batch, self.optimizer, **kwargs)
        elif train_mode:  # no context to enter: the common, per-iteration-cheapest path
            outputs = self.model.train_step(data_batch, self.optimizer, **kwargs)
        else:
            outputs = self.model.val_step(data_batch, self.optimizer, **kwargs)
        step = "train_step" if train_mode else "val_step"
        if not isinstance(outputs, dict):
            raise TypeError(
                f"{self.model_name}.{step}() must return a dict (loss, log_vars, num_samples), "
                f"but returned {type(outputs).__name__}"
            )
        if train_mode and "loss" not in outputs:
            raise KeyError(
                f'{self.model_name}.train_step() returned no "loss"; its keys are '
                f"{sorted(outputs)}. Return dict(loss=..., log_vars=..., num_samples=...)"
            )
        if "log_vars" in outputs:
            if "num_samples" not in outputs:
                raise KeyError(
                    f'{self.model_name}.{step}() returned log_vars but no "num_samples" (the '
                    f"batch size used to weight them); its keys are {sorted(outputs)}"
                )
            self.log_buffer.update(outputs["log_vars"], outputs["num_samples"])
        self.outputs = outputs

    def _begin_run(self) -> None:
        """Log the start and give hooks registered after ``resume()`` their state."""
        self.logger.info(
            "Start running, work_dir: %s, hooks:\n%s", self.work_dir, self.get_hook_info()
        )
        self.should_stop = False
        self._restore_hook_states(final=True)

    def _train_iterator(self, data_loader: Any) -> Iterator:
        """Create the train loader's iterator, at the resumed position on the first epoch."""
        pending = self._pending_resume
        self._train_loader = data_loader
        if pending is None or "inner_iter" not in pending:
            return iter(data_loader)
        start = pending.pop("inner_iter")
        sampler_state = pending.pop("sampler", None)
        if start <= 0:
            # Saved at an epoch boundary, before the run created this epoch's iterator: restore
            # the RNG first, so that creating it draws what the uninterrupted run drew.
            self._restore_rng()
            return start_loader_iter(data_loader, 0, None, self.logger)
        data_iter = start_loader_iter(data_loader, start, sampler_state, self.logger)
        self._restore_rng()
        return data_iter

    def _restore_rng(self) -> None:
        # Mid-epoch, after the iterator exists: creating it draws from torch's RNG (worker base
        # seed), which the checkpointed run did before the saved point, too.
        if self._pending_resume is not None and self._pending_resume.get("rng") is not None:
            set_rng_state(self._pending_resume.pop("rng"))

    # --------------------------------------------------------------------- checkpoints
    def resume_state(self) -> dict:
        """Return the exact-resume state stored under ``mmpar_state`` in checkpoints.

        Saved after ``resume()`` but before training applied the resumed sampler and RNG
        states (e.g. a best checkpoint of an evaluation in ``before_run``), it holds those.
        """
        pending = self._pending_resume or {}
        sampler_state = None
        if "sampler" in pending:
            sampler_state = pending["sampler"]
        elif self._train_loader is not None:
            sampler, _ = find_resumable_sampler(self._train_loader)
            if sampler is not None:
                sampler_state = sampler.state_dict()
        hooks = {}
        for key, hook in self._hook_keys():
            state = hook.state_dict()
            if state:
                hooks[key] = state
        return {
            "version": RESUME_STATE_VERSION,
            **self._next_position,
            "rng": pending["rng"] if pending.get("rng") is not None else get_rng_state(),
            "sampler": sampler_state,
            "hooks": hooks,
        }

    def _save_checkpoint_file(
        self,
        out_dir: str,
        filename: str,
        save_optimizer: bool,
        meta: dict | None,
        create_symlink: bool,
    ) -> str:
        if meta is None:
            meta = {}
        elif not isinstance(meta, dict):
            raise TypeError(f"meta must be a dict or None, but got {type(meta).__name__}")
        meta = dict(meta)
        if self.meta is not None:
            meta.update(self.meta)
        # mmcv 1.x meaning: epochs and iterations completed.
        meta.update(epoch=self._next_position["epoch"], iter=self._next_position["iter"])
        filepath = os.path.join(out_dir, filename)
        optimizer = self.optimizer if save_optimizer else None
        save_checkpoint(self.model, filepath, optimizer, meta, extra_state=self.resume_state())
        if create_symlink:
            update_latest_link(out_dir, filename)
        return filepath

    def load_checkpoint(
        self,
        filename: str,
        map_location: Any = "cpu",
        strict: bool = False,
        revise_keys: Any = ((r"^module\.", ""),),
        weights_only: bool = True,
    ) -> dict:
        """Load weights into the model (see :func:`mmpar.runner.load_checkpoint`)."""
        self.logger.info("load checkpoint from %s", filename)
        return load_checkpoint(
            self.model, filename, map_location, strict, self.logger, revise_keys, weights_only
        )

    def resume(
        self,
        checkpoint: str,
        resume_optimizer: bool = True,
        map_location: Any = "cpu",
        weights_only: bool = True,
    ) -> dict | None:
        """Restore model, optimizer, counters, RNG, sampler and hook states from a checkpoint.

        Args:
            checkpoint: Path, or ``'auto'`` for the newest loadable checkpoint in ``work_dir``
                (training starts from scratch when there is none).
            resume_optimizer: Also restore the optimizer state(s).
            map_location: Passed to ``torch.load``.
            weights_only: See :func:`mmpar.runner.load_checkpoint`.

        Returns:
            The checkpoint dict, or None when ``'auto'`` found nothing.

        The weights must fit the model exactly (``strict``): resuming continues the same run.
        Hook states are handed to the registered hooks now and again when ``run()`` starts,
        so hooks registered after ``resume()`` get theirs too. Sampler and RNG states are
        applied when the first training epoch creates its iterator.
        """
        if checkpoint == "auto":
            found = (
                find_latest_checkpoint(self.work_dir, logger=self.logger) if self.work_dir else None
            )
            if found is None:
                self.logger.info("auto-resume: no checkpoint in %s, starting fresh", self.work_dir)
                return None
            checkpoint = found
        ckpt = self.load_checkpoint(
            checkpoint, map_location=map_location, strict=True, weights_only=weights_only
        )
        meta = ckpt.get("meta") or {}
        state = ckpt.get("mmpar_state")
        if state:
            position = {k: int(state[k]) for k in ("epoch", "iter", "inner_iter")}
            self._pending_resume = {
                "inner_iter": position["inner_iter"],
                "sampler": state.get("sampler"),
                "rng": state.get("rng"),
                "hooks": dict(state.get("hooks") or {}),
            }
        else:
            position = {"epoch": int(meta.get("epoch", 0)), "iter": int(meta.get("iter", 0))}
            position["inner_iter"] = 0
            self._pending_resume = None
            self.logger.warning(
                "%s has no mmpar_state (an mmcv 1.x checkpoint?): resuming at the start of epoch "
                "%d / iter %d without RNG, sampler or hook state",
                checkpoint,
                position["epoch"],
                position["iter"],
            )
        self._epoch, self._iter = position["epoch"], position["iter"]
        self._inner_iter = position["inner_iter"]
        self._next_position = dict(position)
        if self.meta is None:
            self.meta = {}
        self.meta.setdefault("hook_msgs", {})
        self.meta["hook_msgs"].update(meta.get("hook_msgs", {}))
        if resume_optimizer and "optimizer" in ckpt and self.optimizer is not None:
            self._load_optimizer_state(ckpt["optimizer"], checkpoint)
        self._restore_hook_states(final=False)
        self.logger.info(
            "resumed from %s at epoch %d, iter %d", checkpoint, self._epoch, self._iter
        )
        return ckpt

    def _load_optimizer_state(self, state: dict, source: str) -> None:
        if isinstance(self.optimizer, Optimizer):
            self.optimizer.load_state_dict(state)
            return
        missing = [k for k in self.optimizer if k not in state]  # type: ignore[union-attr]
        if missing:
            raise KeyError(f"{source} has no optimizer state for {missing}; it has {list(state)}")
        for name, optim in self.optimizer.items():  # type: ignore[union-attr]
            optim.load_state_dict(state[name])

    def _restore_hook_states(self, final: bool) -> None:
        if self._pending_resume is None or "hooks" not in self._pending_resume:
            return
        states = self._pending_resume["hooks"]
        keyed = dict(self._hook_keys())
        for key, state in states.items():
            if key in keyed:
                keyed[key].load_state_dict(state)
        if final:
            unused = sorted(set(states) - set(keyed))
            if unused:
                self.logger.warning(
                    "checkpoint has state for hooks that are not registered: %s", unused
                )
            del self._pending_resume["hooks"]

    # ------------------------------------------------------------------ training hooks
    def register_lr_hook(self, lr_config: Union[dict, Hook, None]) -> None:
        """Register the LR updater (``policy='step'`` → ``StepLrUpdaterHook``), VERY_HIGH."""
        self._register_policy_hook(lr_config, "LrUpdaterHook", "lr_config", "VERY_HIGH")

    def register_momentum_hook(self, momentum_config: Union[dict, Hook, None]) -> None:
        """Register the momentum updater (``policy`` → ``<Policy>MomentumUpdaterHook``), HIGH."""
        self._register_policy_hook(
            momentum_config, "MomentumUpdaterHook", "momentum_config", "HIGH"
        )

    def _register_policy_hook(
        self, cfg: Union[dict, Hook, None], suffix: str, cfg_name: str, priority: str
    ) -> None:
        if cfg is None:
            return
        if isinstance(cfg, dict):
            cfg = copy.deepcopy(cfg)
            if "policy" not in cfg:
                raise KeyError(
                    f'{cfg_name} needs a "policy" key (e.g. policy="step"), got keys {sorted(cfg)}'
                )
            policy = cfg.pop("policy")
            # mmcv: 'step' → 'Step'; names already in CamelCase ('CosineAnnealing') stay.
            name = (
                policy.title() if isinstance(policy, str) and policy == policy.lower() else policy
            )
            cfg["type"] = f"{name}{suffix}"
            if HOOKS.get(cfg["type"]) is None:
                policies = [n[: -len(suffix)] for n in HOOKS.module_dict if n.endswith(suffix)]
                close = difflib.get_close_matches(str(name), policies, n=3, cutoff=0.5)
                hint = f" Did you mean: {', '.join(close)}?" if close else ""
                raise KeyError(
                    f'unknown policy "{policy}" (no {cfg["type"]} in the hook registry).{hint} '
                    f"Known policies: {', '.join(sorted(policies))}"
                )
            hook = HOOKS.build(cfg)
        else:
            hook = cfg
        self.register_hook(hook, priority=priority)

    def _register_typed_hook(
        self, cfg: Union[dict, Hook, None], default_type: str, priority: str
    ) -> None:
        if cfg is None:
            return
        if isinstance(cfg, dict):
            cfg = copy.deepcopy(cfg)
            cfg.setdefault("type", default_type)
            hook = HOOKS.build(cfg)
        else:
            hook = cfg
        self.register_hook(hook, priority=priority)

    def register_optimizer_hook(self, optimizer_config: Union[dict, Hook, None]) -> None:
        """Register the optimizer hook (default type ``OptimizerHook``), ABOVE_NORMAL."""
        self._register_typed_hook(optimizer_config, "OptimizerHook", "ABOVE_NORMAL")

    def register_checkpoint_hook(self, checkpoint_config: Union[dict, Hook, None]) -> None:
        """Register the checkpoint hook (default type ``CheckpointHook``), NORMAL."""
        self._register_typed_hook(checkpoint_config, "CheckpointHook", "NORMAL")

    def register_timer_hook(self, timer_config: Union[dict, Hook, None]) -> None:
        """Register the iteration timer (default type ``IterTimerHook``), LOW."""
        self._register_typed_hook(timer_config, "IterTimerHook", "LOW")

    def register_nan_guard_hook(self, nan_guard_config: Union[dict, Hook, bool, None]) -> None:
        """Register the NaN guard (default type ``NanGuardHook``), VERY_HIGH; None/False: off."""
        if nan_guard_config is None or nan_guard_config is False:
            return
        if nan_guard_config is True:
            nan_guard_config = {}
        self._register_typed_hook(nan_guard_config, "NanGuardHook", "VERY_HIGH")

    def register_logger_hooks(self, log_config: dict | None) -> None:
        """Register ``log_config['hooks']`` with ``interval=log_config['interval']``, VERY_LOW."""
        if log_config is None:
            return
        if "interval" not in log_config or "hooks" not in log_config:
            raise KeyError(
                'log_config needs "interval" and "hooks", e.g. '
                f"dict(interval=50, hooks=[dict(type='TextLoggerHook')]); got {sorted(log_config)}"
            )
        for info in log_config["hooks"]:
            if isinstance(info, Hook):
                self.register_hook(info, priority="VERY_LOW")
                continue
            hook = HOOKS.build(
                copy.deepcopy(info), default_args={"interval": log_config["interval"]}
            )
            self.register_hook(hook, priority="VERY_LOW")

    def register_custom_hooks(self, custom_config: Union[list, dict, Hook, None]) -> None:
        """Register user hooks: dicts (with optional ``priority``) or Hook instances (NORMAL)."""
        if custom_config is None:
            return
        if not isinstance(custom_config, list):
            custom_config = [custom_config]
        for item in custom_config:
            if isinstance(item, dict):
                self.register_hook_from_cfg(item)
            else:
                self.register_hook(item, priority="NORMAL")

    def register_training_hooks(
        self,
        lr_config: Union[dict, Hook, None],
        optimizer_config: Union[dict, Hook, None] = None,
        checkpoint_config: Union[dict, Hook, None] = None,
        log_config: dict | None = None,
        momentum_config: Union[dict, Hook, None] = None,
        timer_config: Union[dict, Hook, None] = {"type": "IterTimerHook"},  # noqa: B006
        custom_hooks_config: Union[list, dict, Hook, None] = None,
        nan_guard_config: Union[dict, Hook, bool, None] = {"type": "NanGuardHook"},  # noqa: B006
    ) -> None:
        """Register the default training hooks from config dicts (mmcv 1.x keys).

        Priorities: LR VERY_HIGH, NaN guard VERY_HIGH, momentum HIGH, optimizer ABOVE_NORMAL,
        checkpoint NORMAL, timer LOW, loggers VERY_LOW; custom hooks as configured.
        Every config is also accepted as a Hook instance; None leaves that hook out (the
        defaults are copied, never mutated). ``nan_guard_config=None`` (or False) disables the
        NaN guard.

        Errors name the config key whose hook failed to build (``log_config: ...``).
        """
        for key, register, config in (
            ("lr_config", self.register_lr_hook, lr_config),
            ("nan_guard_config", self.register_nan_guard_hook, nan_guard_config),
            ("momentum_config", self.register_momentum_hook, momentum_config),
            ("optimizer_config", self.register_optimizer_hook, optimizer_config),
            ("checkpoint_config", self.register_checkpoint_hook, checkpoint_config),
            ("timer_config", self.register_timer_hook, timer_config),
            ("log_config", self.register_logger_hooks, log_config),
            ("custom_hooks", self.register_custom_hooks, custom_hooks_config),
        ):
            with config_error_context(key):
                register(config)
