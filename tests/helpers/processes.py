"""Running the repository's tools and distributed jobs from tests: ports, environments, imports."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it; nothing listens)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tool_env(*pythonpath: str | os.PathLike, **extra: str) -> dict[str, str]:
    """Environment of a child process: ``pythonpath`` and this checkout first on the path, one
    math thread (the machine is shared), unbuffered output, no colour codes; then ``extra``.
    """
    env = dict(os.environ)
    paths = [*map(str, pythonpath), str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p]
    env.update(
        PYTHONPATH=os.pathsep.join(paths),
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
        NO_COLOR="1",
    )
    env.update(extra)
    return env


def run_tool(*args, timeout: float = 120, env=None, check: bool = False, cwd=REPO):
    """``python *args`` (e.g. ``"tools/train.py", cfg, ...``) from the repository root.

    Returns the CompletedProcess (text output captured); with ``check`` a non-zero exit raises
    AssertionError carrying the tail of both streams, the evidence a failing test needs.
    """
    proc = subprocess.run(
        [sys.executable, *map(str, args)],
        cwd=cwd,
        env=tool_env() if env is None else env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{args} exited {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\n"
            f"stderr:\n{proc.stderr[-6000:]}"
        )
    return proc


def torchrun_args(nproc: int, *args) -> list[str]:
    """Interpreter arguments of ``torch.distributed.run`` starting ``nproc`` local processes of
    ``args`` (a script and its arguments) on a free port.
    """
    return [
        "-m",
        "torch.distributed.run",
        f"--nproc_per_node={nproc}",
        "--nnodes=1",
        "--master_addr=127.0.0.1",
        f"--master_port={free_port()}",
        *map(str, args),
    ]


def import_path(path: str | os.PathLike, name: str | None = None) -> ModuleType:
    """Execute the Python file ``path`` as a new module (not added to ``sys.modules``)."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(name or f"mmpar_test_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_tool(name: str) -> ModuleType:
    """``tools/<name>.py`` as a module, to call its ``main(argv)`` in this process."""
    return import_path(REPO / "tools" / f"{name}.py", f"mmpar_tool_{name}")


# Takes the work-dir lock of argv[1], says "held", and holds it until its stdin closes.
_LOCK_HOLDER = """
import sys
from mmpar.runner.work_dir_guard.lock import WorkDirLock
with WorkDirLock(sys.argv[1], argv=["holder"]):
    print("held", flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def work_dir_lock_holder(work_dir: str | os.PathLike) -> Iterator[subprocess.Popen]:
    """A real process that holds the work-dir lock of ``work_dir`` inside the ``with`` block.

    Yields once the child has the lock (its "held" line: no sleep). Closing its stdin releases
    the lock and ends it; on leaving the block that happens if the test has not ended it
    itself (e.g. with SIGKILL), and the child is waited for.
    """
    child = subprocess.Popen(
        [sys.executable, "-c", _LOCK_HOLDER, str(work_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=tool_env(),
    )
    try:
        assert child.stdout.readline() == "held\n"  # readiness: the lock is taken
        yield child
    finally:
        child.stdin.close()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=30)
