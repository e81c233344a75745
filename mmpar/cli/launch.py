"""``--launcher``: join the process group of a distributed job, or report why it cannot."""

from __future__ import annotations

import logging
import socket

from mmpar.runner.dist_utils import default_backend, destroy_dist, init_dist
from mmpar.runner.work_dir_guard import WorkDirLock, on_rank_zero, read_holder
from mmpar.utils import get_logger

from .errors import UsageError

__all__ = ["check_shared_work_dir", "init_launcher", "on_rank_zero"]


def init_launcher(launcher: str, dist_params: dict, model_wrapper: dict | None = None) -> bool:
    """Initialise the process group for ``launcher`` (unless ``'none'``).

    Args:
        launcher: ``'none'``, ``'pytorch'``, ``'slurm'`` or ``'mpi'`` (the ``--launcher`` flag).
        dist_params: Keyword arguments of :func:`~mmpar.runner.init_dist` (``cfg.dist_params``).
        model_wrapper: The config's ``model_wrapper``: with ``cpu_offload=True`` an nccl backend
            (the default with CUDA) becomes ``'cpu:gloo,cuda:nccl'``, since the offloaded
            shards and gradients are CPU tensors that nccl cannot reduce (gradient clipping's
            norm, pytorch#148532).

    Returns:
        Whether the run is distributed.

    Raises:
        UsageError: The launcher's environment is missing (e.g. ``--launcher pytorch`` outside
            torchrun); the message says which variables and how to launch.
    """
    if launcher == "none":
        return False
    dist_params = dict(dist_params)
    if (model_wrapper or {}).get("cpu_offload"):
        backend = dist_params.get("backend") or default_backend()
        if backend == "nccl":
            dist_params["backend"] = "cpu:gloo,cuda:nccl"
            get_logger("mmpar").info(
                "cpu_offload=True: using backend 'cpu:gloo,cuda:nccl' (gloo for the CPU shards)"
            )
    try:
        init_dist(launcher, **dist_params)
    except RuntimeError as err:
        raise UsageError(f"--launcher {launcher}: {err}") from err
    return True


def check_shared_work_dir(
    lock: WorkDirLock, auto_resume: bool, logger: logging.Logger | None = None
) -> None:
    """Check that every rank sees the work dir of rank 0 (one filesystem shared by all nodes).

    Rank 0 holds ``lock`` (its identity is in the lock file); each rank reads the lock file at
    its own path of the work dir. A rank that does not find rank 0's identity there has a work
    dir of its own, e.g. on a node-local disk. Training still works then (only rank 0 writes),
    and so does ``--resume-from FILE`` with a FILE every node has, but auto-resume does not:
    every rank picks the checkpoint to continue from in its own work dir, and a rank that finds
    none would start afresh while the others continue (different weights, counters and
    iteration counts: a silent divergence or a hang). Call it on every rank after rank 0 took
    the lock. Does nothing without a process group, or when rank 0 could not lock (filesystem
    without ``flock``: no lock file to compare).

    Args:
        lock: The work dir's lock (held on rank 0 only).
        auto_resume: Whether the run auto-resumes (``--auto-resume``, ``--resume-from auto``).
        logger: Receives the warning of a non-shared work dir when not auto-resuming (rank 0;
            default: the ``mmpar`` logger).

    Raises:
        UsageError: ``auto_resume`` and some rank does not see rank 0's work dir (on every rank,
            after leaving the process group together).
    """
    from mmpar.utils.dist import broadcast_object, collect_results, get_dist_info

    rank, world_size = get_dist_info()
    if world_size == 1:
        return
    identity = broadcast_object(read_holder(lock.path) if rank == 0 and lock.held else None)
    if identity is None:
        return
    sees = read_holder(lock.path) == identity
    views = collect_results([(rank, socket.gethostname(), sees)], world_size)  # rank 0 only
    blind = [f"{r} (host {host})" for r, host, ok in views or [] if not ok]
    where = None
    if blind:
        where = (
            f'work_dir "{lock.work_dir}" is not shared by all ranks: rank(s) {", ".join(blind)} '
            f"do not see rank 0's lock file {lock.path} there"
        )
    where = broadcast_object(where)  # rank 0's finding, in rank 0's words
    if where is None:
        return
    if not auto_resume:
        (logger or get_logger("mmpar")).warning(
            f"{where}; checkpoints and logs are written on rank 0's node only, and auto-resume "
            "needs a work dir on a filesystem all nodes share (same path)"
        )
        return
    destroy_dist()  # every rank got here and raises the same error
    raise UsageError(
        f"{where}. Auto-resume needs it: every rank picks the checkpoint to continue from in "
        "its work dir. Put the work dir on a filesystem all nodes mount at the same path (NFS, "
        "Lustre, ...), or pass --resume-from FILE with a checkpoint every node can read"
    )
