"""allreduce_params, allreduce_grads and SyncBuffersHook across 2 real processes (torchrun)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

WORKER = Path(__file__).with_name("_allreduce_worker.py")
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_allreduce_and_sync_buffers_average_over_two_ranks(tmp_path):
    cmd = [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
        "--master_port=0", "--rdzv_backend=c10d", "--rdzv_endpoint=localhost:0",
        str(WORKER), str(tmp_path),
    ]  # fmt: skip
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]

    # params: float means (1, 2 -> 1.5; 10, 20 -> 15), int64 floor mean (7, 8 -> 7), bool kept
    for case in ("params_coalesced", "params_each", "params_small_buckets"):
        for rank, result in enumerate(ranks):
            assert result[case] == [[1.5], [15.0], [7], [rank == 0], [300_000]], case

    # grads: the mean of the two ranks' gradients, on both ranks; skipped ones untouched
    for case in ("grads_coalesced", "grads_each", "grads_small_buckets"):
        before = [r[case]["before"] for r in ranks]
        assert sorted(before[0]) == ["0.weight", "1.weight"]  # bias 0: None, bias 1: frozen
        assert before[0] != before[1]
        for result in ranks:
            assert sorted(result[case]["after"]) == ["0.weight", "1.weight"]
            for name, grad in result[case]["after"].items():
                expected = (torch.tensor(before[0][name]) + torch.tensor(before[1][name])) / 2
                torch.testing.assert_close(torch.tensor(grad), expected, msg=str((case, name)))

    # SyncBuffersHook: after the epoch both ranks hold the mean of their running statistics
    local = [r["sync_buffers"]["local"] for r in ranks]
    assert local[0]["bn.running_mean"] != local[1]["bn.running_mean"]
    for result in ranks:
        synced = result["sync_buffers"]["synced"]
        for name in ("bn.running_mean", "bn.running_var"):
            mean = [(a + b) / 2 for a, b in zip(local[0][name], local[1][name])]
            assert synced[name] == pytest.approx(mean), name
        assert synced["bn.num_batches_tracked"] == local[0]["bn.num_batches_tracked"] == 2
