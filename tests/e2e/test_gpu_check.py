"""scripts/gpu_check.sh: what it does without a GPU, and how it runs and reports its checks.

The checks themselves need CUDA; here the script runs with the GPUs hidden, and the runner of
the checks gets a list of fake checks.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("mmpar_gpu_check", REPO / "scripts/gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gpu_check = _module()


def test_without_a_gpu_the_script_says_so_in_one_line_and_exits_3(tmp_path):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", MMPAR_PYTHON=sys.executable)
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "gpu_check.sh")],
        cwd=tmp_path,  # the script finds the repository itself
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == gpu_check.EXIT_NO_GPU == 3, proc.stderr
    assert proc.stdout == (
        "gpu_check: skipped: no CUDA device (torch.cuda.is_available() is False)\n"
    )
    assert proc.stderr == ""


def _ok(ctx):
    return "fine"


def _bad(ctx):
    raise gpu_check.CheckFailed("weights differ\nsecond line is dropped")


def _crash(ctx):
    return {}["missing"]


def test_checks_run_in_order_one_line_each_and_failures_do_not_stop_the_rest(tmp_path):
    checks = [
        gpu_check.Check("ok", _ok),
        gpu_check.Check("bad", _bad),
        gpu_check.Check("two-gpus", _ok, gpus=2),
        gpu_check.Check("crash", _crash),
        gpu_check.Check("ok-again", _ok),
    ]
    lines = []
    ctx = gpu_check.Context(REPO, tmp_path, gpus=1)
    results = gpu_check.run_checks(checks, ctx, lines.append)
    assert [(r.name, r.status) for r in results] == [
        ("ok", "PASS"),
        ("bad", "FAIL"),
        ("two-gpus", "SKIP"),
        ("crash", "FAIL"),
        ("ok-again", "PASS"),
    ]
    assert len(lines) == 5 and all("\n" not in line for line in lines)
    assert lines[0].startswith("PASS  ok ") and lines[0].endswith(" s  fine")
    assert lines[1].endswith(" s  weights differ")
    assert lines[2].endswith("needs 2 GPUs, 1 found")
    assert lines[3].endswith("KeyError: 'missing'")
    assert gpu_check.exit_code(results) == 1
    assert gpu_check.summary(results, 61.2, "1 x Fake GPU") == (
        "gpu_check: 2 passed, 2 failed, 1 skipped in 61 s (1 x Fake GPU)"
    )


def test_skips_for_want_of_gpus_do_not_fail_the_run(tmp_path):
    checks = [gpu_check.Check("ok", _ok), gpu_check.Check("two-gpus", _bad, gpus=2)]
    results = gpu_check.run_checks(checks, gpu_check.Context(REPO, tmp_path, 1), lambda _: None)
    assert gpu_check.exit_code(results) == 0
    results = gpu_check.run_checks(checks, gpu_check.Context(REPO, tmp_path, 2), lambda _: None)
    assert gpu_check.exit_code(results) == 1  # with 2 GPUs it runs, and fails


def test_the_check_list_covers_the_gpu_paths():
    by_name = {c.name: c.gpus for c in gpu_check.CHECKS}
    assert by_name == {
        "cuda-tests": 1,
        "fp16-digits": 1,
        "exact-resume": 1,
        "ddp-nccl-resume": 2,
        "data-parallel-2gpu": 2,
    }


@pytest.mark.parametrize("nproc", [1, 2])
def test_training_commands(tmp_path, nproc):
    ctx = gpu_check.Context(REPO, tmp_path, gpus=2, python="python")
    work = tmp_path / "w"
    argv = gpu_check._train_argv(ctx, work, gpu_check.DIGITS, "--auto-resume", nproc=nproc)
    assert "tools/train.py" in argv and "--auto-resume" in argv
    assert (REPO / gpu_check.DIGITS).is_file() and (REPO / gpu_check.KILL_CONFIG).is_file()
    if nproc == 2:
        assert argv[1:5] == ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
        assert argv[argv.index("--launcher") + 1] == "pytorch"
        assert argv[-1] == "dist_params.backend=nccl"
    else:
        assert "--launcher" not in argv
