"""What ``runner.run`` does around every run, whoever calls it: lock, one run, preemption save.

mmpar's promises hold for any program that builds a runner and calls ``runner.run`` (a
project's own ``tools/train.py`` and ``apis/train.py`` as much as mmpar's), because the runner
keeps them itself. :class:`RunGuard` (``runner``'s, one per runner) is entered when ``run``
starts, before ``before_run``, and left when it ends:

1. **One run per work dir.** Rank 0 takes the work dir's lock
   (:class:`~mmpar.runner.work_dir_guard.lock.WorkDirLock`) for the run's length, unless this
   process holds it already (mmpar's ``tools/train.py`` takes it before it builds anything).
2. **No mixing.** A run on which ``runner.resume(...)`` was never called is a new run; in a
   work dir that holds checkpoints it is refused
   (:func:`~mmpar.runner.work_dir_guard.run_mixing.check_new_run_work_dir`) before it writes
   anything. Both refusals end the program with one line (:class:`RunRefusedError`).
3. **Preemption and Ctrl-C save.** Unless a :class:`~mmpar.runner.hooks.PreemptionHook` is
   registered, the guard runs one of its own for the run's length, outside ``runner.hooks``
   (the hook list stays mmcv's): ``call_hook`` calls it after every registered hook. It is on
   by default in the main thread; ``preemption = None`` in the program's config,
   ``MMPAR_PREEMPTION=0`` in the environment, or :func:`set_preemption` turn it off (see
   :func:`preemption_setting`).
"""

from __future__ import annotations

import functools
import os
import threading
from typing import Any, Callable, TypeVar

from mmpar.utils import dist as dist_info
from mmpar.utils.config.program import program_config

from .lock import WorkDirLock, WorkDirLockedError, held_here
from .run_mixing import WorkDirHasOtherRunError, check_new_run_work_dir

T = TypeVar("T")

#: Environment variable that turns the runner's own preemption handling off (``0``).
PREEMPTION_ENV = "MMPAR_PREEMPTION"
_OFF = ("0", "false", "off", "no", "none")
_UNSET = object()


class RunRefusedError(SystemExit):
    """``runner.run`` refused to start: the work dir is locked, or holds another run.

    A :class:`SystemExit` (as :class:`~mmpar.runner.hooks.preemption.TrainingPreempted` is):
    a program that does not catch it ends with its one ``error: <Type>: <message>`` line on
    stderr as the last line of output, no traceback, exit status 1, having written nothing
    into the work dir.

    Attributes:
        error: The refusal: a :class:`~mmpar.runner.work_dir_guard.lock.WorkDirLockedError`
            or a :class:`~mmpar.runner.work_dir_guard.run_mixing.WorkDirHasOtherRunError`.
    """

    def __init__(self, error: Exception) -> None:
        super().__init__(f"error: {type(error).__name__}: {error}")
        self.error = error


def on_rank_zero(func: Callable[[], T]) -> T:
    """Call ``func`` on rank 0 only and give its result, or its exception, to every rank.

    Without a process group this is ``func()``. Under torchrun the other ranks wait for rank 0
    and then return the same (picklable) result, or raise the same exception, so that a check
    made once on rank 0 (e.g. the work-dir lock) ends every rank the same way instead of
    leaving the others waiting in the next collective. Before raising, the ranks leave the
    process group together (:func:`~mmpar.runner.dist_utils.destroy_dist`: all of them are
    alive and agree): a rank that exits with the group open can abort in gloo's teardown.
    """
    from ..dist_utils import destroy_dist

    rank, world_size = dist_info.get_dist_info()
    if world_size == 1:
        return func()
    outcome: tuple[Any, BaseException | None] = (None, None)
    if rank == 0:
        try:
            outcome = (func(), None)
        except Exception as err:  # noqa: BLE001 - every rank re-raises it below
            outcome = (None, err)
    result, error = dist_info.broadcast_object(outcome)
    if error is not None:
        destroy_dist()
        raise error  # on rank 0 the original exception (broadcast leaves the source's object)
    return result


def set_preemption(runner: Any, preemption: dict | None) -> None:
    """Choose the runner's own preemption handling for its next runs.

    Args:
        runner: A :class:`~mmpar.runner.BaseRunner`.
        preemption: None turns it off; a dict gives :class:`PreemptionHook`'s arguments
            (``dict()``: its defaults). Overrides the environment and the program's config.
    """
    runner._run_guard.preemption = preemption


def preemption_setting(runner: Any) -> dict | None:
    """The runner's preemption handling for this run: ``PreemptionHook`` arguments, or None.

    The first that says something wins: :func:`set_preemption`; ``MMPAR_PREEMPTION`` (``0``,
    ``off``, ``false``, ``no``, ``none``: off; anything else: on); the ``preemption`` key of the
    program's config (the config file named on the command line, see
    :func:`mmpar.utils.config.program.program_config`: None is off, a dict the arguments);
    else on with the defaults (SIGTERM, SIGUSR1 and Ctrl-C).
    """
    chosen = runner._run_guard.preemption
    if chosen is not _UNSET:
        return chosen
    env = os.environ.get(PREEMPTION_ENV)
    if env is not None:
        return None if env.strip().lower() in _OFF else {}
    cfg = program_config()
    if cfg is not None and "preemption" in cfg:
        value = cfg.get("preemption")
        return None if value is None else dict(value)
    return {}


class RunGuard:
    """The runner's lock, new-run check and preemption handler for one ``run`` at a time.

    Args:
        runner: The runner it guards (it reads ``work_dir``, ``meta``, ``hooks``, ``rank``).

    Attributes:
        hooks: The guard's own hooks for the current run (empty outside ``run``); the runner's
            ``call_hook`` calls them after the registered ones.
        resumed: Whether the next run continues a run: ``runner.resume`` was called, or this
            runner ran before.
        preemption: What :func:`set_preemption` chose (unset by default).
    """

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self.hooks: tuple = ()
        self.resumed = False
        self.preemption: Any = _UNSET
        self._lock: WorkDirLock | None = None
        self._depth = 0  # a subclass's run() calling super().run() enters once

    def enter(self) -> None:
        """Start guarding a run (outermost ``run`` only).

        Raises:
            RunRefusedError: The work dir is locked by another run, or holds checkpoints of
                another run and this one does not resume; on every rank, nothing written.
        """
        self._depth += 1
        if self._depth > 1:
            return
        try:
            self._take_work_dir()
            # This runner's later runs continue this one (mmcv lets a runner run again).
            self.resumed = True
            self.hooks = self._own_hooks()
        except BaseException:
            self._depth = 0
            self._release(discard=True)
            raise

    def exit(self) -> None:
        """Stop guarding (outermost ``run`` only): drop the hooks and the lock."""
        self._depth -= 1
        if self._depth > 0:
            return
        self.hooks = ()
        self._release()

    def _take_work_dir(self) -> None:
        work_dir = self.runner.work_dir
        if not work_dir:
            return
        meta = self.runner.meta or {}
        config_text = meta.get("config") if isinstance(meta.get("config"), str) else None

        def check() -> None:
            if not held_here(work_dir):
                lock = WorkDirLock(work_dir)
                lock.acquire()
                self._lock = lock
            check_new_run_work_dir(work_dir, config_text, self.resumed)

        try:
            on_rank_zero(check)
        except (WorkDirLockedError, WorkDirHasOtherRunError) as err:
            raise RunRefusedError(err) from None

    def _own_hooks(self) -> tuple:
        # Here, not at the top: the hooks package imports this package's program_options.
        from ..hooks.preemption import PreemptionHook

        if any(isinstance(hook, PreemptionHook) for hook in self.runner.hooks):
            return ()  # registered by the program (apis/train.py, custom_hooks): it handles
        setting = preemption_setting(self.runner)
        # Signal handlers can only be installed from the main thread; a run elsewhere (a
        # notebook's or a server's worker thread) did not ask for them: no warning either.
        if setting is None or threading.current_thread() is not threading.main_thread():
            return ()
        return (PreemptionHook(**setting),)

    def _release(self, discard: bool = False) -> None:
        if self._lock is not None:
            lock, self._lock = self._lock, None
            lock.release(discard=discard)


def guarded_run(run: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a runner's ``run`` method in its :class:`RunGuard` (re-entrant)."""

    @functools.wraps(run)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        guard = self._run_guard
        guard.enter()
        try:
            return run(self, *args, **kwargs)
        finally:
            guard.exit()

    wrapper.__mmpar_guarded__ = True  # type: ignore[attr-defined]
    return wrapper


__all__ = [
    "PREEMPTION_ENV",
    "RunGuard",
    "RunRefusedError",
    "guarded_run",
    "on_rank_zero",
    "preemption_setting",
    "set_preemption",
]
