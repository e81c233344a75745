"""Check mmpar's CUDA paths on a machine with GPUs: ``bash scripts/gpu_check.sh``.

CI has no GPU, so the CUDA paths are checked here, in one command, on a machine that has one:

``cuda-tests``
    the test suite's tests marked ``cuda`` (``pytest -m cuda``; with 2+ GPUs the 2-GPU ones too).
``fp16-digits``
    a short Digits training with ``fp16`` (autocast + GradScaler) on GPU 0; it must learn.
``exact-resume``
    a Digits run on GPU 0 SIGKILLed in its second epoch, continued with ``--auto-resume``, must
    end with the weights of an uninterrupted run, bit for bit (``--deterministic``).
``ddp-nccl-resume`` (2+ GPUs)
    the same under torchrun, 2 processes, nccl.
``data-parallel-2gpu`` (2+ GPUs)
    a Digits training with ``MMDataParallel`` over GPUs 0 and 1 (``--gpu-ids 0 1``).

One line per check (``PASS``/``FAIL``/``SKIP``, seconds, what it found), then a summary line.
Exit code 0 when every check that could run passed, 1 when one failed, and 3 without a CUDA
device (one line, nothing checked). Meant to finish within 10 minutes on one GPU.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

REPO = Path(__file__).resolve().parents[1]
DIGITS = "configs/digits_lenet.py"
# The digits config with the test suite's fault-injection plugin (inert unless armed).
KILL_CONFIG = "tests/reliability/kill_digits_config.py"
EXIT_FAILED = 1
EXIT_NO_GPU = 3
TIMEOUT = 600  # seconds for one process
# 3 short epochs of 23 iterations (1,438 images, batch 64), one checkpoint per epoch.
DIGITS_OPTIONS = [
    "runner.max_epochs=3",
    "optimizer.lr=0.2",
    "data.samples_per_gpu=64",
    "data.workers_per_gpu=0",
    "checkpoint_config.interval=1",
    "log_config.interval=10",
]
KILL_AT = "hook:after_train_iter:iter=30"  # in the second epoch, after the first checkpoint
MIN_ACCURACY = 80.0  # val top-1 (%) a few epochs reach on Digits; chance is 10 %


class CheckFailed(Exception):
    """A check ran and found something wrong; the message says what, on one line."""


@dataclass(frozen=True)
class Context:
    """What the checks share: where to work and with what."""

    repo: Path
    tmp: Path
    gpus: int
    python: str = sys.executable


@dataclass(frozen=True)
class Check:
    """One check: ``run(context)`` returns a short finding or raises (``CheckFailed``)."""

    name: str
    run: Callable[[Context], str]
    gpus: int = 1  # GPUs it needs


@dataclass(frozen=True)
class Result:
    """How one check ended: ``status`` is ``'PASS'``, ``'FAIL'`` or ``'SKIP'``."""

    name: str
    status: str
    seconds: float
    detail: str

    def line(self) -> str:
        """The check's one line of output."""
        return f"{self.status}  {self.name:<20} {self.seconds:6.1f} s  {self.detail}"


def run_checks(
    checks: Sequence[Check], context: Context, out: Callable[[str], None] = print
) -> list[Result]:
    """Run every check the GPUs allow, in order; print one line each as it ends.

    A check that raises fails with the exception's first line (a ``CheckFailed`` message as
    written, anything else prefixed with its type); the next check still runs.
    """
    results = []
    for check in checks:
        if context.gpus < check.gpus:
            result = Result(
                check.name, "SKIP", 0.0, f"needs {check.gpus} GPUs, {context.gpus} found"
            )
        else:
            start = time.monotonic()
            try:
                status, detail = "PASS", check.run(context)
            except CheckFailed as err:
                status, detail = "FAIL", str(err)
            except Exception as err:  # noqa: BLE001 (any error of a check is its failure)
                status, detail = "FAIL", f"{type(err).__name__}: {err}"
            detail = (detail.strip().splitlines() or [""])[0]
            result = Result(check.name, status, time.monotonic() - start, detail)
        out(result.line())
        results.append(result)
    return results


def summary(results: Sequence[Result], seconds: float, machine: str) -> str:
    """The last line: counts, the machine, the time."""
    counts = {s: sum(r.status == s for r in results) for s in ("PASS", "FAIL", "SKIP")}
    return (
        f"gpu_check: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped "
        f"in {seconds:.0f} s ({machine})"
    )


def exit_code(results: Sequence[Result]) -> int:
    """0 when nothing failed (skips for want of GPUs included), else 1."""
    return EXIT_FAILED if any(r.status == "FAIL" for r in results) else 0


# --------------------------------------------------------------------------------- helpers
def _run(
    ctx: Context, argv: Sequence[str], fault: str = "", **env: str
) -> subprocess.CompletedProcess:
    """Run ``argv`` from the repository root (one CPU thread, the fault plugin importable)."""
    full_env = dict(os.environ)
    plugin = str(ctx.repo / "tests" / "reliability")
    full_env.update(
        OMP_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
        NO_COLOR="1",
        MMPAR_TEST_FAULT=fault,
        PYTHONPATH=os.pathsep.join(filter(None, [plugin, os.environ.get("PYTHONPATH")])),
        **env,
    )
    return subprocess.run(
        list(argv), cwd=ctx.repo, env=full_env, capture_output=True, text=True, timeout=TIMEOUT
    )


def _tail(proc: subprocess.CompletedProcess) -> str:
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return lines[-1] if lines else "(no output)"


def _expect_ok(proc: subprocess.CompletedProcess, what: str) -> None:
    if proc.returncode != 0:
        raise CheckFailed(f"{what} exited with {proc.returncode}: {_tail(proc)}")


def _train_argv(ctx: Context, work_dir: Path, config: str, *flags: str, nproc: int = 1) -> list:
    options = ["--cfg-options", *DIGITS_OPTIONS]
    if nproc == 1:
        return [ctx.python, "tools/train.py", config, "--work-dir", str(work_dir), *flags, *options]
    torchrun = [ctx.python, "-m", "torch.distributed.run", "--standalone"]
    return [
        *torchrun,
        f"--nproc_per_node={nproc}",
        "tools/train.py",
        config,
        "--work-dir",
        str(work_dir),
        "--launcher",
        "pytorch",
        *flags,
        *options,
        "dist_params.backend=nccl",
    ]


def _records(work_dir: Path) -> list[dict]:
    entries = []
    for path in sorted(glob.glob(str(work_dir / "*.log.json"))):
        with open(path) as f:
            entries += [json.loads(line) for line in f if line.strip()]
    return [e for e in entries if "mode" in e]


def _last_accuracy(work_dir: Path) -> float:
    val = [e["accuracy_top-1"] for e in _records(work_dir) if e["mode"] == "val"]
    if not val:
        raise CheckFailed(f"no val record in {work_dir}")
    return float(val[-1])


def _weights(path: Path) -> dict:
    import torch

    return torch.load(path, map_location="cpu", weights_only=True)["state_dict"]


def _compare(reference: Path, resumed: Path) -> str:
    import torch

    ref, res = _weights(reference), _weights(resumed)
    if ref.keys() != res.keys():
        raise CheckFailed(f"{resumed} has other tensors than {reference}")
    diff = {k: (ref[k].float() - res[k].float()).abs().max().item() for k in ref}
    worst = max(diff, key=diff.get)
    if any(not torch.equal(ref[k], res[k]) for k in ref):
        raise CheckFailed(f"resumed weights differ: {worst} by up to {diff[worst]:.3g}")
    return f"{len(ref)} tensors identical"


# ---------------------------------------------------------------------------------- checks
def check_cuda_tests(ctx: Context) -> str:
    """The suite's ``cuda``-marked tests."""
    proc = _run(ctx, [ctx.python, "-m", "pytest", "-m", "cuda", "-q", "-p", "no:cacheprovider"])
    if proc.returncode == 5:
        raise CheckFailed("no test marked cuda was collected")
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else _tail(proc)
    if proc.returncode != 0:
        raise CheckFailed(f"pytest -m cuda: {last}")
    return last.strip("= ")


def check_fp16_digits(ctx: Context) -> str:
    """A short fp16 training on GPU 0 learns, with CUDA tensors and a GradScaler."""
    work = ctx.tmp / "fp16"
    argv = _train_argv(ctx, work, DIGITS, "--gpu-ids", "0")
    proc = _run(ctx, [*argv, "fp16.loss_scale=dynamic"])  # one more --cfg-options item
    _expect_ok(proc, "tools/train.py with fp16")
    log = "\n".join(Path(p).read_text() for p in glob.glob(str(work / "*.log")))
    if "Fp16OptimizerHook" not in log:
        raise CheckFailed("the run did not use Fp16OptimizerHook")
    train = [e for e in _records(work) if e["mode"] == "train"]
    if not train or "memory" not in train[-1]:
        raise CheckFailed("the train records have no CUDA memory figure: not on the GPU?")
    accuracy = _last_accuracy(work)
    if accuracy < MIN_ACCURACY:
        raise CheckFailed(f"val top-1 {accuracy:.1f}% after 3 epochs (expected >= {MIN_ACCURACY})")
    return f"val top-1 {accuracy:.1f}%, peak memory {train[-1]['memory']} MiB"


def _kill_and_resume(ctx: Context, name: str, flags: Sequence[str], nproc: int) -> str:
    """Uninterrupted run vs. SIGKILL at ``KILL_AT`` + ``--auto-resume``: same final weights."""
    deterministic = {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}  # what --deterministic needs on CUDA
    ref, killed = ctx.tmp / f"{name}_ref", ctx.tmp / f"{name}_killed"
    common = [*flags, "--no-validate", "--deterministic"]
    proc = _run(ctx, _train_argv(ctx, ref, KILL_CONFIG, *common, nproc=nproc), **deterministic)
    _expect_ok(proc, "the uninterrupted run")
    argv = _train_argv(ctx, killed, KILL_CONFIG, *common, nproc=nproc)
    proc = _run(ctx, argv, fault=KILL_AT, **deterministic)
    if proc.returncode == 0 or f"FAULT {KILL_AT}" not in proc.stderr:
        raise CheckFailed(f"the run to kill was not killed at {KILL_AT}: {_tail(proc)}")
    argv = _train_argv(ctx, killed, KILL_CONFIG, *common, "--auto-resume", nproc=nproc)
    proc = _run(ctx, argv, **deterministic)
    _expect_ok(proc, "the --auto-resume run")
    found = _compare(ref / "latest.pth", killed / "latest.pth")
    return f"{found} after SIGKILL at iteration 30 and --auto-resume"


def check_exact_resume(ctx: Context) -> str:
    """Kill and ``--auto-resume`` on GPU 0 ends where an uninterrupted run ends."""
    return _kill_and_resume(ctx, "resume", ["--gpu-ids", "0"], nproc=1)


def check_ddp_nccl_resume(ctx: Context) -> str:
    """The same under torchrun with 2 processes and nccl."""
    return _kill_and_resume(ctx, "ddp", [], nproc=2)


def check_data_parallel_2gpu(ctx: Context) -> str:
    """MMDataParallel over GPUs 0 and 1 trains."""
    work = ctx.tmp / "dp2"
    proc = _run(ctx, _train_argv(ctx, work, DIGITS, "--gpu-ids", "0", "1"))
    _expect_ok(proc, "tools/train.py --gpu-ids 0 1")
    accuracy = _last_accuracy(work)
    if accuracy < MIN_ACCURACY:
        raise CheckFailed(f"val top-1 {accuracy:.1f}% after 3 epochs (expected >= {MIN_ACCURACY})")
    return f"val top-1 {accuracy:.1f}%"


CHECKS = (
    Check("cuda-tests", check_cuda_tests),
    Check("fp16-digits", check_fp16_digits),
    Check("exact-resume", check_exact_resume),
    Check("ddp-nccl-resume", check_ddp_nccl_resume, gpus=2),
    Check("data-parallel-2gpu", check_data_parallel_2gpu, gpus=2),
)


def gpu_count() -> int:
    """Visible CUDA devices (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the checks; return the exit code (0 passed, 1 a check failed, 3 no CUDA device)."""
    parser = argparse.ArgumentParser(description="Check mmpar's CUDA paths on this machine.")
    parser.add_argument(
        "--only", nargs="+", choices=[c.name for c in CHECKS], help="run these checks only"
    )
    parser.add_argument("--keep", action="store_true", help="keep the checks' work dirs")
    args = parser.parse_args(argv)
    gpus = gpu_count()
    if gpus == 0:
        print("gpu_check: skipped: no CUDA device (torch.cuda.is_available() is False)")
        return EXIT_NO_GPU
    import torch

    machine = f"{gpus} x {torch.cuda.get_device_name(0)}, torch {torch.__version__}"
    checks = [c for c in CHECKS if not args.only or c.name in args.only]
    start = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="mmpar_gpu_check_"))
    results = run_checks(checks, Context(REPO, tmp, gpus))
    print(summary(results, time.monotonic() - start, machine))
    if args.keep:
        print(f"gpu_check: work dirs kept in {tmp}")
    else:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return exit_code(results)


if __name__ == "__main__":
    sys.exit(main())
