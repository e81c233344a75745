"""BaseRunner: the loop core shared by the epoch and iteration runners (mmcv 1.x API).

Construction, the counters, the hook list and ``call_hook``, one step (``run_iter``) and the
run around the workflow's phases. The phases' steps (``train``/``val``) live in
``epoch_based_runner.py`` and ``iter_based_runner.py``; checkpoint files in the runner's
:class:`~mmpar.runner.checkpointing.checkpointer.Checkpointer` (``runner.checkpointer``, to
which ``save_checkpoint``/``load_checkpoint``/``resume`` delegate); the runner's own state for
exact resume in ``resume/runner_state.py``; the hook list and building hooks from configs in
``hook_registration.py``.
"""

from __future__ import annotations

import contextlib
import logging
from abc import ABCMeta, abstractmethod
from operator import attrgetter
from typing import Any, Callable, Union

import torch
from torch.optim import Optimizer

from mmpar.parallel import is_module_wrapper as is_module_wrapper  # mmcv's module has it
from mmpar.parallel.utils import unwrap_model
from mmpar.utils.logging import get_logger

from .arg_checks import (
    check_runner_args,
    check_workflow,
    prepare_work_dir,
    resolve_run_limit,
    run_limit,
)
from .checkpoint import load_checkpoint as load_checkpoint  # mmcv's module imports it too
from .checkpointing.checkpointer import Checkpointer
from .dist_utils import get_dist_info
from .hook_registration import HookRegistrationMixin
from .hooks import HOOKS as HOOKS  # mmcv's module imports it too
from .hooks import Hook
from .hooks.hook import StepContextHook
from .log_buffer import LogBuffer
from .optimizer.param_groups import group_lr, group_momentum_or_zero, param_group_values
from .priority import Priority as Priority  # mmcv's module imports it too
from .priority import get_priority as get_priority  # mmcv's module imports it too
from .resume.pending import ResumeState
from .resume.runner_state import RunnerStateMixin
from .utils import get_time_str
from .work_dir_guard.guard import RunGuard, guarded_run


class BaseRunner(HookRegistrationMixin, RunnerStateMixin, metaclass=ABCMeta):
    """State, hooks, checkpointing and resume shared by all runners (mmcv 1.x API).

    Every ``run`` (the runners' own, and that of any subclass a project writes) is guarded
    (:mod:`mmpar.runner.work_dir_guard`): rank 0 holds the work dir's lock while it runs, a new
    run (no ``resume()`` before it) is refused in a work dir that holds checkpoints, and
    SIGTERM/SIGUSR1/Ctrl-C save a checkpoint and stop, unless turned off (``preemption =
    None`` in the program's config, ``MMPAR_PREEMPTION=0``); ``hooks`` stays mmcv's list.

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
        TypeError: Wrong model/optimizer/meta/batch_processor/logger types.
        RuntimeError: ``batch_processor`` is given and the model has ``train_step``/``val_step``.
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
        check_runner_args(model, batch_processor, optimizer, meta, max_iters, max_epochs, logger)
        inner = unwrap_model(model)
        self.model = model
        self.batch_processor = batch_processor
        self.optimizer = optimizer
        self.meta = meta
        self.logger = logger if logger is not None else get_logger("mmpar")
        self.work_dir = prepare_work_dir(work_dir)
        self._model_name = type(inner).__name__
        self._rank, self._world_size = get_dist_info()
        self.timestamp = get_time_str()
        self.mode: str | None = None
        self._hooks: list[Hook] = []
        self._step_context_hooks: list[StepContextHook] = []
        self._epoch = 0
        self._iter = 0
        self._inner_iter = 0
        self._max_epochs = run_limit("max_epochs", max_epochs)
        self._max_iters = run_limit("max_iters", max_iters)
        self.log_buffer = LogBuffer()
        self.outputs: dict = {}
        self.data_loader: Any = None
        self.data_batch: Any = None
        self.should_stop = False
        # Position of the next batch to run; what a checkpoint saved now resumes from.
        self._next_position = {"epoch": 0, "iter": 0, "inner_iter": 0}
        self._train_loader: Any = None  # the torch DataLoader whose sampler state is saved
        self._resume = ResumeState()  # what resume() read and the run has yet to apply
        # Every rank's RNG states for the checkpoints of one position, on rank 0:
        # (position, states) from gather_rank_rng_states().
        self._rank_rng_states: tuple[dict, list] | None = None
        # Names, writes, rotates and reads checkpoints; keeps the run's identity.
        self.checkpointer = Checkpointer(self)
        # Lock, new-run check and preemption handler around every run() (see work_dir_guard).
        self._run_guard = RunGuard(self)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Guard every ``run`` a subclass defines (re-entrant: ``super().run()`` is one run)."""
        super().__init_subclass__(**kwargs)
        run = cls.__dict__.get("run")
        if run is not None and not getattr(run, "__isabstractmethod__", False):
            if not getattr(run, "__mmpar_guarded__", False):
                # Wrapping a subclass's own run at class creation is the point here.
                cls.run = guarded_run(run)  # type: ignore[method-assign]

    # ------------------------------------------------------------------------- properties
    # Read-only views of the private state; attrgetter keeps them as cheap as an attribute.
    model_name = property(attrgetter("_model_name"), doc="Class name of the (unwrapped) model.")
    rank = property(attrgetter("_rank"), doc="Rank of this process (0 when not distributed).")
    world_size = property(
        attrgetter("_world_size"), doc="Number of processes (1 when not distributed)."
    )
    hooks = property(attrgetter("_hooks"), doc="Registered hooks in the order they are called.")
    epoch = property(attrgetter("_epoch"), doc="Current epoch (0-based).")
    iter = property(attrgetter("_iter"), doc="Current global iteration (0-based).")
    inner_iter = property(
        attrgetter("_inner_iter"), doc="Current iteration in the epoch (0-based)."
    )
    max_epochs = property(attrgetter("_max_epochs"), doc="Maximum training epochs (or None).")
    max_iters = property(attrgetter("_max_iters"), doc="Maximum training iterations (or None).")

    @property
    def progress(self) -> dict[str, int]:
        """Training done so far, as a checkpoint saved now records it.

        ``{'epoch': epochs completed, 'iter': iterations completed, 'inner_iter': batches of
        the unfinished epoch already trained}`` (for IterBasedRunner, ``inner_iter`` counts the
        batches of the train loader's current pass). Unlike :attr:`epoch`/:attr:`iter`, which
        index the epoch/iteration being run, this is exact also after a run stopped mid-epoch.
        """
        return dict(self._next_position)

    run_id = property(
        attrgetter("checkpointer.run_id"),
        doc="Identity of the run (32 hex digits), recorded as ``meta['run_id']`` in every "
        "checkpoint the runner writes. New for each runner; ``resume()`` adopts the resumed "
        "checkpoint's, so a resumed run keeps its identity. Auto-resume continues only the "
        "run named in ``work_dir/last_run.json`` (see docs/resume.md).",
    )

    # ----------------------------------------------------------------- abstract interface
    @abstractmethod
    def train(self, data_loader: Any, **kwargs: Any) -> None:
        """Run one training epoch (or iteration, for iteration-based runners)."""

    @abstractmethod
    def val(self, data_loader: Any, **kwargs: Any) -> None:
        """Run one validation epoch (or iteration)."""

    @abstractmethod
    def run(self, data_loaders: list, workflow: list, **kwargs: Any) -> None:
        """Run the workflow until the maximum epochs/iterations are reached.

        Args:
            data_loaders: One loader per workflow phase.
            workflow: ``[(mode, count), ...]``, e.g. ``[('train', 2), ('val', 1)]``: each
                phase runs ``count`` epochs (EpochBasedRunner) or iterations (IterBasedRunner).
            **kwargs: Passed to ``train_step``/``val_step``.
        """

    # ----------------------------------------------------------------- checkpoints (mmcv)
    @abstractmethod
    def save_checkpoint(
        self,
        out_dir: str,
        filename_tmpl: str,
        save_optimizer: bool = True,
        meta: dict | None = None,
        create_symlink: bool = True,
    ) -> str:
        """Save a checkpoint into ``out_dir`` (the runners number it by epoch or iteration)."""

    def load_checkpoint(
        self,
        filename: str,
        map_location: Any = "cpu",
        strict: bool = False,
        revise_keys: Any = ((r"^module\.", ""),),
        weights_only: bool = True,
    ) -> dict:
        """Load weights into the model (see :func:`mmpar.runner.load_checkpoint`)."""
        load_args = dict(map_location=map_location, strict=strict, revise_keys=revise_keys)
        return self.checkpointer.load(filename, weights_only=weights_only, **load_args)

    def resume(
        self,
        checkpoint: str,
        resume_optimizer: bool = True,
        map_location: Any = "cpu",
        weights_only: bool = True,
    ) -> dict | None:
        """Restore model, optimizer, counters, RNG, sampler and hook states from a checkpoint.

        ``checkpoint``: a path, or ``'auto'`` (None is returned when there is nothing to
        resume); see :meth:`Checkpointer.resume
        <mmpar.runner.checkpointing.checkpointer.Checkpointer.resume>`.
        """
        load_args = dict(map_location=map_location, weights_only=weights_only)
        # Asked to continue a run: the next run() is not a new run (even if 'auto' finds none).
        self._run_guard.resumed = True
        return self.checkpointer.resume(checkpoint, resume_optimizer, **load_args)

    # ------------------------------------------------------------------------- optimizer
    def current_lr(self) -> Union[list, dict]:
        """Learning rate of every param group (a dict of lists for a dict of optimizers)."""
        return param_group_values(self.optimizer, group_lr, "lr")

    def current_momentum(self) -> Union[list, dict]:
        """Momentum (or Adam's beta1) of every param group; 0 when the optimizer has none."""
        return param_group_values(self.optimizer, group_momentum_or_zero, "momentum")

    # ----------------------------------------------------------------------------- hooks
    def call_hook(self, fn_name: str) -> None:
        """Call stage ``fn_name`` (e.g. ``'after_train_iter'``) on every hook in order.

        mmcv's loop: the list is read as it is at each step, so a hook a stage adds after the
        current one is called in the same stage, and a method assigned on an instance counts.
        During ``run`` the runner's own preemption handler (not in ``hooks``) comes last.
        """
        for hook in self._hooks:
            getattr(hook, fn_name)(self)
        for hook in self._run_guard.hooks:
            getattr(hook, fn_name)(self)

    def _train_step_context(self) -> contextlib.AbstractContextManager:
        """Contexts hooks ask to wrap ``train_step`` in (``Hook.train_step_context(runner)``)."""
        if not self._step_context_hooks:
            return contextlib.nullcontext()
        stack = contextlib.ExitStack()
        for hook in self._step_context_hooks:
            stack.enter_context(hook.train_step_context(self))
        return stack

    # ----------------------------------------------------------------------- iteration
    def run_iter(self, data_batch: Any, train_mode: bool, **kwargs: Any) -> None:
        """Run ``train_step``/``val_step`` on one batch; store ``outputs``; log ``log_vars``.

        As in mmcv, a train step need not return a ``loss``: a model that steps its own
        optimizers inside ``train_step`` (a GAN) returns only ``log_vars`` and ``num_samples``,
        and what mmpar does with a loss (the optimizer hooks, the NaN guard) applies only where
        there is one.

        Raises:
            TypeError: The step did not return a dict.
            KeyError: ``log_vars`` without ``num_samples`` (mmcv's ``KeyError`` too).
        """
        if self.batch_processor is not None:
            outputs = self.batch_processor(self.model, data_batch, train_mode=train_mode, **kwargs)
        elif not train_mode:
            outputs = self._val_step(data_batch, kwargs)
        else:
            with self._train_step_context():
                outputs = self.model.train_step(data_batch, self.optimizer, **kwargs)
        if not isinstance(outputs, dict):
            raise TypeError(
                f"{self.model_name}.{self._step_name(train_mode)}() must return a dict (loss, "
                f"log_vars, num_samples), but returned {type(outputs).__name__}"
            )
        if "log_vars" in outputs:
            if "num_samples" not in outputs:
                raise KeyError(
                    f"{self.model_name}.{self._step_name(train_mode)}() returned log_vars but "
                    f'no "num_samples" (the batch size used to weight them); its keys are '
                    f"{sorted(outputs)}"
                )
            self.log_buffer.update(outputs["log_vars"], outputs["num_samples"])
        self.outputs = outputs

    def _val_step(self, data_batch: Any, kwargs: dict) -> Any:
        """``model.val_step``, called as mmcv's EpochBasedRunner calls it (with the optimizer)."""
        return self.model.val_step(data_batch, self.optimizer, **kwargs)

    @staticmethod
    def _step_name(train_mode: bool) -> str:
        return "train_step" if train_mode else "val_step"

    # ----------------------------------------------------------------------------- the run
    def _run_workflow(
        self, data_loaders: list, workflow: list, limit_name: str, limit: int | None, kwargs: dict
    ) -> None:
        """The run, top to bottom, for both runners (their ``run()`` names the limit).

        ``before_run`` → repeat the workflow's phases until ``limit_name`` is reached or a hook
        sets ``should_stop`` → ``after_run`` (always, also on errors). A phase ``(mode, n)``
        calls ``self.train``/``self.val`` n times: n epochs or n iterations, by runner.
        """
        check_workflow(data_loaders, workflow)
        limit = resolve_run_limit(self, limit_name, limit)
        self.logger.info("workflow: %s, max: %d %s", workflow, limit, limit_name[len("max_") :])
        self.logger.info(
            "Start running, work_dir: %s, hooks:\n%s", self.work_dir, self.get_hook_info()
        )
        self.should_stop = False
        self.checkpointer.record_run_start()
        self._restore_hook_states(final=True)  # hooks registered after resume() get theirs
        loaders = self._phase_loaders(data_loaders, workflow)
        self.call_hook("before_run")
        try:
            self._run_phases(loaders, workflow, kwargs)
        finally:
            self.call_hook("after_run")

    def _run_phases(self, loaders: list, workflow: list, kwargs: dict) -> None:
        while self._train_steps_left() > 0 and not self.should_stop:
            for (mode, count), loader in zip(workflow, loaders):
                self._begin_phase()
                self._update_step_context_hooks()  # the list may have changed since
                step = getattr(self, mode)
                if mode == "train":  # each train step is one epoch / iteration of the limit
                    count = min(count, self._train_steps_left())
                for _ in range(count):
                    if self.should_stop:
                        break
                    step(loader, **kwargs)

    def _phase_loaders(self, data_loaders: list, workflow: list) -> list:
        """The loaders the phases' steps get (called once per run, before ``before_run``)."""
        return data_loaders

    def _train_steps_left(self) -> int:
        """Train steps (epochs or iterations) left before the limit (for ``_run_workflow``)."""
        raise NotImplementedError  # not abstract: mmcv-style subclasses with their own run()

    def _begin_phase(self) -> None:
        """Called when a workflow phase begins."""


__all__ = ["BaseRunner"]
