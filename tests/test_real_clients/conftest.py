"""Fixtures of the real-client tests: released mmcv 1.x projects, downloaded and run unchanged.

The packages come from the registry inside the test session (``pip download --no-deps`` into
pytest's temporary directory, unpacked there) and are never copied into this repository. They
run in subprocesses through the zero-edit mode (``python -m mmpar.as_mmcv``), with the unpacked
package first on ``PYTHONPATH``. pytest runs with ``--import-mode=importlib``, so test modules
get the helpers through the ``clients`` fixture instead of importing this file.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import import_path, tool_env, torchrun_args

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def _load_helper(name):
    return import_path(HERE / "helpers" / f"{name}.py", f"real_clients_{name}")


cifar_digits = _load_helper("cifar_digits")
coco_digits = _load_helper("coco_digits")

# The last mmcv-1.x release of each project. Their wheels carry the tools and configs too
# (under ``<package>/.mim/``), so no sdist is needed.
RELEASES = {
    "mmcls": ("mmcls", "0.25.0"),
    "mmaction2": ("mmaction", "0.24.1"),
    "mmpose": ("mmpose", "0.29.0"),
    "mmdet": ("mmdet", "2.28.2"),
    "mmsegmentation": ("mmseg", "0.30.0"),
}


def client_env(*pythonpath, **extra):
    """Environment of a client process: its package dirs first, one math thread, no colours."""
    return tool_env(*pythonpath, PYTHONDONTWRITEBYTECODE="1", **extra)


def _check(proc):
    """``proc`` (a CompletedProcess); raise with the tail of its output if it failed."""
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, proc.args))}\nexited {proc.returncode}\n"
            f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
        )
    return proc


def run(cmd, *, env, cwd, timeout=300):
    """Run ``cmd``; on failure raise with the tail of its output (the test's evidence)."""
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    return _check(proc)


def _stop(proc):
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def run_together(jobs, timeout=300):
    """Run ``[(cmd, env, cwd), ...]`` at the same time, each as :func:`run` would.

    Single-process clients use one core each (one math thread), and the suite's machine has two:
    independent runs side by side halve their wall time. Output goes to temporary files, not
    pipes (a pipe nobody reads blocks a chatty process). Returns the CompletedProcesses in order;
    on a failure or the timeout the others are stopped and the first failure is raised.
    """
    with contextlib.ExitStack() as stack:
        started = []
        for cmd, env, cwd in jobs:
            out, err = (stack.enter_context(tempfile.TemporaryFile("w+")) for _ in "oe")
            args = [str(c) for c in cmd]
            proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
            stack.callback(_stop, proc)
            started.append((proc, out, err))
        deadline = time.monotonic() + timeout
        done = []
        for proc, out, err in started:
            code = proc.wait(timeout=max(deadline - time.monotonic(), 0))
            out.seek(0)
            err.seek(0)
            done.append(
                _check(subprocess.CompletedProcess(proc.args, code, out.read(), err.read()))
            )
        return done


def torchrun(nproc, *args):
    """``python -m torch.distributed.run`` arguments for ``nproc`` local processes."""
    return [sys.executable, *torchrun_args(nproc, *args)]


def as_mmcv(*args):
    """Arguments running ``args`` (a script or ``-m module``) through the zero-edit mode."""
    return ["-m", "mmpar.as_mmcv", *args]


@pytest.fixture(scope="session")
def downloads(tmp_path_factory):
    """``{project: unpacked wheel dir}``: one ``pip download --no-deps`` per project per session."""
    cache = tmp_path_factory.mktemp("client_packages")
    specs = [f"{name}=={version}" for name, (_, version) in RELEASES.items()]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:"]
    cmd += ["--disable-pip-version-check", "--dest", cache, *specs]
    run(cmd, env=dict(os.environ), cwd=cache, timeout=600)
    unpacked = {}
    for name, (package, version) in RELEASES.items():
        (wheel,) = cache.glob(f"{name}-{version}-*.whl")
        target = cache / f"{name}-{version}"
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(target)
        assert (target / package / "__init__.py").is_file()
        unpacked[name] = target
    return unpacked


def read_log(work_dir):
    """The training's JSON log: (train entries, val entries)."""
    (log,) = Path(work_dir).glob("*.log.json")
    entries = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    return (
        [e for e in entries if e.get("mode") == "train"],
        [e for e in entries if e.get("mode") == "val"],
    )


@pytest.fixture(scope="session")
def clients():
    """The helpers above, for test modules (which cannot import this conftest)."""
    return SimpleNamespace(
        REPO=REPO,
        HELPERS=HERE / "helpers",
        client_env=client_env,
        run=run,
        run_together=run_together,
        torchrun=torchrun,
        as_mmcv=as_mmcv,
        write_cifar_digits=cifar_digits.write_cifar_digits,
        write_mmcls_config=cifar_digits.write_mmcls_config,
        coco_digits=coco_digits,
        read_log=read_log,
    )
