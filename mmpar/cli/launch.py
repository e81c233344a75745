"""``--launcher``: join the process group of a distributed job, or report why it cannot."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from mmpar.runner.dist_utils import destroy_dist, init_dist

from .errors import UsageError

T = TypeVar("T")


def init_launcher(launcher: str, dist_params: dict) -> bool:
    """Initialise the process group for ``launcher`` (unless ``'none'``).

    Args:
        launcher: ``'none'``, ``'pytorch'``, ``'slurm'`` or ``'mpi'`` (the ``--launcher`` flag).
        dist_params: Keyword arguments of :func:`~mmpar.runner.init_dist` (``cfg.dist_params``).

    Returns:
        Whether the run is distributed.

    Raises:
        UsageError: The launcher's environment is missing (e.g. ``--launcher pytorch`` outside
            torchrun); the message says which variables and how to launch.
    """
    if launcher == "none":
        return False
    try:
        init_dist(launcher, **dist_params)
    except RuntimeError as err:
        raise UsageError(f"--launcher {launcher}: {err}") from err
    return True


def on_rank_zero(func: Callable[[], T]) -> T:
    """Call ``func`` on rank 0 only and give its result, or its exception, to every rank.

    Without a process group this is ``func()``. Under torchrun the other ranks wait for rank 0
    and then return the same (picklable) result, or raise the same exception, so that a check
    made once on rank 0 (e.g. the work-dir lock) ends every rank the same way instead of
    leaving the others waiting in the next collective. Before raising, the ranks leave the
    process group together (:func:`~mmpar.runner.dist_utils.destroy_dist`: all of them are
    alive and agree): a rank that exits with the group open can abort in gloo's teardown.
    """
    from mmpar.utils.dist import broadcast_object, get_dist_info

    rank, world_size = get_dist_info()
    if world_size == 1:
        return func()
    outcome: tuple[Any, BaseException | None] = (None, None)
    if rank == 0:
        try:
            outcome = (func(), None)
        except Exception as err:  # noqa: BLE001 - every rank re-raises it below
            outcome = (None, err)
    result, error = broadcast_object(outcome)
    if error is not None:
        destroy_dist()
        raise error  # on rank 0 the original exception (broadcast leaves the source's object)
    return result
