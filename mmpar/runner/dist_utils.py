"""Process-group set-up for torchrun/slurm/mpi (mmcv's ``mmcv.runner.dist_utils`` path).

The rank helpers and collectives live in :mod:`mmpar.utils.dist` and are re-exported here.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import IS_MLU_AVAILABLE as IS_MLU_AVAILABLE
from mmpar.utils import IS_NPU_AVAILABLE as IS_NPU_AVAILABLE
from mmpar.utils import dist as _dist
from mmpar.utils.dist import (  # noqa: F401 (re-exported through __all__)
    all_reduce_dict,
    allreduce_grads,
    allreduce_params,
    barrier,
    broadcast_object,
    collect_results,
    get_dist_info,
    is_distributed,
    master_only,
)

# mmcv's dist_utils names: the helpers imported above (listed once, in mmpar.utils.dist, whose
# gather_object and is_distributed are mmpar's own) and the process-group set-up defined here.
__all__ = [
    *(name for name in _dist.__all__ if name not in ("gather_object", "is_distributed")),
    "destroy_dist",
    "init_dist",
]

LAUNCHERS = ("pytorch", "slurm", "mpi")
DEFAULT_PORT = 29500


def _require_env(launcher: str, names: tuple[str, ...], hint: str) -> dict[str, str]:
    missing = [n for n in names if n not in os.environ]
    if missing:
        raise RuntimeError(
            f"init_dist(launcher={launcher!r}): environment variable(s) {', '.join(missing)} "
            f"not set. {hint} To run without distributed training, use --launcher none."
        )
    return {n: os.environ[n] for n in names}


def default_backend() -> str:
    """The backend ``init_dist`` uses when none is given: nccl with CUDA, gloo without."""
    return "nccl" if torch.cuda.is_available() else "gloo"


#: nccl's own default is 10 minutes, too short while rank 0 evaluates or saves alone; gloo's
#: default is already this.
DEFAULT_TIMEOUT = timedelta(minutes=30)


def _with_timeout(backend: str, kwargs: dict) -> dict:
    """``kwargs`` with ``timeout`` as a timedelta.

    A number means seconds (configs are plain data); for an nccl backend a missing timeout
    becomes :data:`DEFAULT_TIMEOUT`.
    """
    timeout = kwargs.get("timeout")
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        return {**kwargs, "timeout": timedelta(seconds=timeout)}
    if timeout is None and "nccl" in backend:
        return {**kwargs, "timeout": DEFAULT_TIMEOUT}
    return kwargs


def _set_cuda_device(local_rank: int) -> None:
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank % torch.cuda.device_count())


def init_dist(launcher: str, backend: str | None = None, **kwargs: Any) -> None:
    """Initialize the default process group for a launcher.

    Args:
        launcher: ``'pytorch'`` (torchrun: RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR,
            MASTER_PORT), ``'slurm'`` (SLURM_PROCID, SLURM_NTASKS, SLURM_NODELIST; master
            address from ``scontrol show hostnames``) or ``'mpi'`` (OMPI_COMM_WORLD_RANK, _SIZE,
            _LOCAL_RANK plus MASTER_ADDR).
        backend: ``'nccl'``/``'gloo'``/...; default nccl with CUDA, gloo without.
        **kwargs: ``port`` (slurm/mpi: master port, overriding MASTER_PORT, default 29500;
            ignored under torchrun, whose ``--master_port`` decides); everything else goes to
            ``torch.distributed.init_process_group`` (e.g. ``timeout``: a ``timedelta`` or
            seconds; default 30 minutes, also for nccl, whose own default is 10).

    When torchrun restarts the workers of a single-node job (``--max-restarts``), each
    attempt's process group keeps its keys in torchrun's store under its own prefix, so a
    restarted worker never reads the addresses of the previous, dead attempt.

    Raises:
        ValueError: Unknown launcher, or backend nccl on a machine without CUDA.
        RuntimeError: Required environment variables are missing, ``scontrol`` is unavailable,
            or the default process group already exists.
    """
    if launcher not in LAUNCHERS:
        raise ValueError(
            f"init_dist: unknown launcher {launcher!r}; valid launchers are "
            f"{', '.join(LAUNCHERS)} (or run without distributed training: --launcher none)"
        )
    if is_distributed():
        raise RuntimeError("init_dist: the default process group is already initialized")
    backend = backend or default_backend()
    kwargs = _with_timeout(backend, kwargs)
    init = {"pytorch": _init_pytorch, "slurm": _init_slurm}.get(launcher, _init_mpi)
    try:
        init(backend, **kwargs)
    except ValueError as err:
        if backend != "nccl" or torch.cuda.is_available():
            raise
        # torch's own error ("no GPUs found") does not say that gloo runs on the CPU.
        raise ValueError(
            f"init_dist: backend 'nccl' needs CUDA GPUs and this machine has none ({err}); "
            "use gloo for CPU training: --cfg-options dist_params.backend=gloo (or "
            "backend='gloo' in the config's dist_params)"
        ) from err


def destroy_dist() -> None:
    """Tear the default process group down at the end of a run that finished normally.

    All ranks meet at a barrier first, so no rank closes its connections while another still
    expects a message; then ``destroy_process_group()`` releases the group as torch asks
    programs to do before they exit. Not for error paths: a barrier with a dead peer would wait
    for the backend's timeout. Does nothing when no process group exists.

    It does not cure a torch race at exit with gloo (see docs/distributed.md): a gloo worker
    thread that frees the last collective of a backward pass needs the GIL and aborts the
    process if the interpreter is already finalising.
    """
    if not is_distributed():
        return
    dist.barrier()
    dist.destroy_process_group()


def _init_pytorch(backend: str, port: int | None = None, **kwargs: Any) -> None:
    # ``port`` (kept in configs written for slurm) is ignored: torchrun's --master_port
    # already fixed MASTER_PORT for every rank, and changing it here would split the job.
    del port
    env = _require_env(
        "pytorch",
        ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"),
        "Launch with torchrun, e.g. `torchrun --nproc_per_node=2 tools/train.py CONFIG "
        "--launcher pytorch`.",
    )
    _set_cuda_device(int(env["LOCAL_RANK"]))
    if not {"init_method", "store"} & set(kwargs):
        restart_store = _elastic_restart_store(kwargs.get("timeout"))
        if restart_store is not None:
            kwargs.update(store=restart_store, rank=int(env["RANK"]))
            kwargs.update(world_size=int(env["WORLD_SIZE"]))
    dist.init_process_group(backend=backend, **kwargs)


def _elastic_restart_store(timeout: Any = None) -> dist.Store | None:
    """A store of this restart attempt when torchrun has restarted the workers of one node.

    torchrun keeps one TCPStore for the whole job and hands it to every attempt (the agent
    store); the keys the previous attempt's process group wrote (e.g. gloo's peer addresses)
    are still there, so restarted workers can read them and connect to dead peers (``Connection
    refused``/hang). Prefixing the keys with ``TORCHELASTIC_RESTART_COUNT`` isolates each
    attempt. Only for a single node (``GROUP_WORLD_SIZE=1``), where every worker has the same
    restart count; on several nodes the count is per node, so torch's behaviour is kept.

    Args:
        timeout: Store timeout (default: torch's default process-group timeout).

    Returns:
        The prefixed store, or None for a first attempt, without the agent store, or on
        several nodes.
    """
    env = os.environ
    attempt = int(env.get("TORCHELASTIC_RESTART_COUNT", "0") or 0)
    if (
        attempt == 0
        or env.get("TORCHELASTIC_USE_AGENT_STORE") != "True"
        or env.get("GROUP_WORLD_SIZE") != "1"
    ):
        return None
    from torch.distributed.constants import default_pg_timeout

    store = dist.TCPStore(
        env["MASTER_ADDR"],
        int(env["MASTER_PORT"]),
        int(env["WORLD_SIZE"]),
        is_master=False,  # the torchrun agent hosts it
        timeout=timeout or default_pg_timeout,
    )
    return dist.PrefixStore(f"mmpar/restart_{attempt}", store)


def _slurm_master_addr(node_list: str) -> str:
    # Through subprocess.getoutput, as mmcv 1.x asks scontrol (tests mock that function);
    # the node list is quoted, so a pattern such as "node[1-4]" is never globbed by the shell.
    out = subprocess.getoutput(f"scontrol show hostname {shlex.quote(node_list)} | head -n1")
    host = out.strip()
    if not host or len(host.split()) != 1:
        raise RuntimeError(
            f'init_dist(launcher="slurm"): `scontrol show hostname {node_list}` did not print '
            f"a host name (got {out!r}); run inside a slurm allocation (srun) or set "
            "MASTER_ADDR to the first node's address yourself"
        )
    return host


def _init_slurm(backend: str, port: int | None = None, **kwargs: Any) -> None:
    env = _require_env(
        "slurm",
        ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_NODELIST"),
        "Launch with srun (see tools/slurm_train.sh).",
    )
    rank = int(env["SLURM_PROCID"])
    num_gpus = torch.cuda.device_count() if torch.cuda.is_available() else 1
    local_rank = int(os.environ.get("SLURM_LOCALID", rank % max(num_gpus, 1)))
    if port is not None:
        os.environ["MASTER_PORT"] = str(port)
    os.environ.setdefault("MASTER_PORT", str(DEFAULT_PORT))
    if "MASTER_ADDR" not in os.environ:
        os.environ["MASTER_ADDR"] = _slurm_master_addr(env["SLURM_NODELIST"])
    os.environ["WORLD_SIZE"] = env["SLURM_NTASKS"]
    os.environ["RANK"] = str(rank)
    os.environ["LOCAL_RANK"] = str(local_rank)
    _set_cuda_device(local_rank)
    dist.init_process_group(backend=backend, **kwargs)


def _init_mpi(backend: str, port: int | None = None, **kwargs: Any) -> None:
    env = _require_env(
        "mpi",
        (
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK",
            "MASTER_ADDR",
        ),
        "Launch with mpirun (Open MPI) and export MASTER_ADDR (the rank-0 host).",
    )
    if port is not None:
        os.environ["MASTER_PORT"] = str(port)
    os.environ.setdefault("MASTER_PORT", str(DEFAULT_PORT))
    os.environ["RANK"] = env["OMPI_COMM_WORLD_RANK"]
    os.environ["WORLD_SIZE"] = env["OMPI_COMM_WORLD_SIZE"]
    os.environ["LOCAL_RANK"] = env["OMPI_COMM_WORLD_LOCAL_RANK"]
    _set_cuda_device(int(env["OMPI_COMM_WORLD_LOCAL_RANK"]))
    dist.init_process_group(backend=backend, **kwargs)
