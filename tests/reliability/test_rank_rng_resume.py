"""Exact resume when the ranks' random number generators differ (2-process torchrun, gloo, CPU).

Under ``--diff-seed`` each rank seeds its global generators differently, and the model draws
dropout masks from torch's global generator in every step. A run SIGKILLed (every rank) in the
middle of its first epoch, then continued with ``--auto-resume``, must end with the weights of
an uninterrupted run on both ranks: each rank has to get its own RNG states back from the
checkpoint, not those of the rank that wrote it.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from helpers import free_port

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the sibling modules whose helpers are reused (importlib mode)
from test_dist_faults import DIST_OPTIONS, GLOO_ABORT, _env  # noqa: E402

REPO = HERE.parents[1]
CONFIG = HERE / "rank_rng_config.py"
TIMEOUT = 180  # seconds for one torchrun job
KILL_ITER = 15  # after the checkpoint of iteration 10, before the epoch ends (23 iterations)


def _torchrun(work_dir: Path, fault: str = "") -> SimpleNamespace:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--nnodes=1"]
    cmd += ["--master_addr=127.0.0.1", f"--master_port={free_port()}", "tools/train.py"]
    cmd += [str(CONFIG), "--launcher", "pytorch", "--work-dir", str(work_dir)]
    cmd += ["--auto-resume", "--diff-seed", "--no-validate", "--cfg-options", *DIST_OPTIONS]
    cmd += ["runner.max_epochs=1"]  # the kill and the resume both fall inside epoch 1
    env = dict(_env(), MMPAR_TEST_FAULT=fault)
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        out += f"\n(test: still running after {TIMEOUT} s, killed)"
    return SimpleNamespace(returncode=proc.returncode, out=out)


def _finished(work_dir: Path) -> SimpleNamespace:
    """A run that must finish; once more if a rank died of gloo's exit race after training."""
    run = _torchrun(work_dir)
    if run.returncode != 0 and GLOO_ABORT in run.out:
        run = _torchrun(work_dir)  # --auto-resume: the finished checkpoints are found
    return run


def _weights(work_dir: Path, rank: int) -> dict:
    return torch.load(work_dir / f"rank{rank}_weights.pth", weights_only=True)


@pytest.mark.slow
def test_diff_seed_run_resumes_with_each_ranks_own_rng_states(tmp_path):
    with ThreadPoolExecutor(max_workers=1) as pool:
        reference = pool.submit(_finished, tmp_path / "reference")
        killed = _torchrun(tmp_path / "killed", fault=f"hook:after_train_iter:iter={KILL_ITER}")
        assert killed.returncode != 0 and "FAULT hook:" in killed.out, killed.out[-6000:]
        resumed = _finished(tmp_path / "killed")
        ref = reference.result()
    assert ref.returncode == 0, ref.out[-6000:]
    assert resumed.returncode == 0, resumed.out[-6000:]
    assert "resumed from" in resumed.out and "iter_10.pth" in resumed.out, resumed.out[-6000:]
    for rank in (0, 1):
        want, got = _weights(tmp_path / "reference", rank), _weights(tmp_path / "killed", rank)
        for key, value in want.items():
            assert torch.equal(got[key], value), f"rank {rank}: {key} differs after resume"
