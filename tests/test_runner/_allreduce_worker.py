"""Run under torchrun (2 processes, gloo): allreduce_params/grads and SyncBuffersHook.

Each rank writes ``rank<r>.json`` with what it saw into the directory given as argv[1]; the test
in ``test_dist_allreduce.py`` compares the ranks.
"""

import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from mmpar.runner import EpochBasedRunner, Hook, SyncBuffersHook, allreduce_grads
from mmpar.runner.dist_utils import allreduce_params


def params_case(rank, **kwargs):
    """Per-rank tensors whose means are known: floats, a >1 MiB float, and an int64."""
    tensors = [
        torch.full((3,), float(rank + 1)),
        torch.full((300_000,), 10.0 * (rank + 1)),
        torch.full((2, 2), 7 + rank, dtype=torch.int64),
        torch.tensor([rank == 0]),  # bool: left as it is
    ]
    allreduce_params(iter(tensors), **kwargs)
    return [t.unique().tolist() for t in tensors] + [list(tensors[1].shape)]


def grads_case(rank, **kwargs):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    model[1].bias.requires_grad_(False)
    (model(torch.ones(1, 3) * (rank + 1)).sum()).backward()
    model[0].bias.grad = None  # no gradient on any rank: skipped
    before = {n: p.grad.clone().tolist() for n, p in model.named_parameters() if p.grad is not None}
    allreduce_grads(model.parameters(), **kwargs)
    after = {n: p.grad.tolist() for n, p in model.named_parameters() if p.grad is not None}
    return {"before": before, "after": after}


class BnModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(2)

    def train_step(self, data_batch, optimizer, **kwargs):
        (x,) = data_batch
        out = self.bn(x)
        return {"loss": out.sum() * 0, "log_vars": {}, "num_samples": len(x)}


class RecordBuffers(Hook):
    """Runs before SyncBuffersHook in after_train_epoch: the rank's own statistics."""

    def __init__(self):
        self.seen = []

    def after_train_epoch(self, runner):
        self.seen.append({n: b.tolist() for n, b in runner.model.named_buffers()})


def sync_buffers_case(rank, out_dir):
    torch.manual_seed(rank)
    data = torch.randn(8, 2) * (rank + 1) + 3 * rank  # statistics differ per rank
    loader = DataLoader(TensorDataset(data), batch_size=4)
    model = BnModel()
    runner = EpochBasedRunner(model, work_dir=os.path.join(out_dir, f"work{rank}"), max_epochs=1)
    recorder = RecordBuffers()
    runner.register_hook(recorder, priority="HIGH")
    runner.register_hook_from_cfg(dict(type="SyncBuffersHook"))
    assert any(isinstance(h, SyncBuffersHook) for h in runner.hooks)
    runner.run([loader], [("train", 1)])
    synced = {n: b.tolist() for n, b in model.named_buffers()}
    return {"local": recorder.seen[0], "synced": synced}


def main():
    out_dir = sys.argv[1]
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    result = {
        "params_coalesced": params_case(rank),
        "params_each": params_case(rank, coalesce=False),
        "params_small_buckets": params_case(rank, bucket_size_mb=0.0001),
        "grads_coalesced": grads_case(rank),
        "grads_each": grads_case(rank, coalesce=False),
        "grads_small_buckets": grads_case(rank, bucket_size_mb=0.00001),
        "sync_buffers": sync_buffers_case(rank, out_dir),
    }
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
