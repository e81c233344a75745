"""``--launcher``: join the process group of a distributed job, or report why it cannot."""

from __future__ import annotations

from mmpar.runner.dist_utils import init_dist

from .errors import UsageError


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
