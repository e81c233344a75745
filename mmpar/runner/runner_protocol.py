"""RunnerLike: what a hook may use of the runner it is called with (the hook contract).

Every hook stage gets the runner (``before_run(runner)``, ``after_train_iter(runner)``, ...).
:class:`RunnerLike` lists the attributes and methods of that runner a hook may rely on; it is
the annotation of ``runner`` in every hook method of mmpar, and a type checker holds the hooks
to it. :class:`~mmpar.runner.EpochBasedRunner` and :class:`~mmpar.runner.IterBasedRunner`
provide all of it; a runner of mmcv 1.x's duck type (a project's own runner, a test double)
works with the hooks that use only what it has.

It is a static contract: nothing checks it at run time, and a hook of user code may annotate
``runner`` with it, or not at all.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol, Union

if TYPE_CHECKING:  # only for the annotations: hooks import this module, it imports no hook
    import torch
    from torch.optim import Optimizer

    from .hooks.hook import Hook
    from .log_buffer import LogBuffer
    from .priority import Priority


class RunnerLike(Protocol):
    """The runner as a hook sees it (mmcv 1.x's ``BaseRunner`` attributes, plus mmpar's).

    Attributes a hook may read and set:

    - ``model``: the model, possibly wrapped (``MMDataParallel``, DDP, FSDP).
    - ``optimizer``: an optimizer, a dict of them (by name), or None.
    - ``meta``: run metadata saved in every checkpoint, or None; hooks add to it.
    - ``logger``: the run's logger.
    - ``work_dir``: the output directory, or None.
    - ``timestamp``: the run's start time (``YYYYMMDD_HHMMSS``), for file names.
    - ``mode``: ``'train'`` or ``'val'`` inside a phase, None before the first.
    - ``log_buffer``: values to average and log; loggers read and clear it.
    - ``outputs``: what the last ``train_step``/``val_step`` returned (``loss``,
      ``log_vars``, ``num_samples``).
    - ``data_loader``: the loader of the phase being run.
    - ``data_batch``: the batch being run.
    - ``should_stop``: set it True to end the run after the current epoch/iteration.

    Read-only properties and methods are documented on their own.
    """

    model: torch.nn.Module
    optimizer: Union[Optimizer, dict[str, Optimizer], None]
    meta: dict | None
    logger: logging.Logger
    work_dir: str | None
    timestamp: str
    mode: str | None
    log_buffer: LogBuffer
    outputs: dict
    data_loader: Any
    data_batch: Any
    should_stop: bool

    @property
    def model_name(self) -> str:
        """Class name of the (unwrapped) model."""

    @property
    def rank(self) -> int:
        """Rank of this process (0 when not distributed)."""

    @property
    def world_size(self) -> int:
        """Number of processes (1 when not distributed)."""

    @property
    def hooks(self) -> list[Hook]:
        """Registered hooks in the order they are called."""

    @property
    def epoch(self) -> int:
        """Current epoch (0-based)."""

    @property
    def iter(self) -> int:
        """Current global iteration (0-based)."""

    @property
    def inner_iter(self) -> int:
        """Current iteration in the epoch (0-based)."""

    @property
    def max_epochs(self) -> int | None:
        """Maximum training epochs; None for an iteration-based run."""

    @property
    def max_iters(self) -> int | None:
        """Maximum training iterations; an epoch-based run sets it at each train epoch."""

    @property
    def progress(self) -> dict[str, int]:
        """Training done so far (``epoch``, ``iter``, ``inner_iter``), as saved now."""

    def call_hook(self, fn_name: str) -> None:
        """Call stage ``fn_name`` on every hook, in order."""

    def register_hook(self, hook: Hook, priority: Union[int, str, Priority] = "NORMAL") -> None:
        """Insert ``hook`` into the hook list by priority."""

    def get_hook_info(self) -> str:
        """A table of which hooks run at each stage."""

    def current_lr(self) -> Union[list, dict]:
        """Learning rate of every param group (a dict of lists for a dict of optimizers)."""

    def current_momentum(self) -> Union[list, dict]:
        """Momentum (or Adam's beta1) of every param group."""

    def save_checkpoint(
        self,
        out_dir: str,
        filename_tmpl: str,
        save_optimizer: bool = True,
        meta: dict | None = None,
        create_symlink: bool = True,
    ) -> Any:
        """Save a checkpoint into ``out_dir``."""

    def resume(
        self,
        checkpoint: str,
        resume_optimizer: bool = True,
        map_location: Any = "cpu",
    ) -> dict | None:
        """Restore the model, optimizer, counters and hook states from ``checkpoint``."""


__all__ = ["RunnerLike"]
