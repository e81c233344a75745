"""Child process for test_resume.py: a tiny, fully seeded training run that can be killed.

Prints ``ITER <n>`` (flushed) after every iteration, once that iteration's checkpoint is on
disk. ``--kill-during-save N`` makes the N-th checkpoint save write half a file and SIGKILL
the process, to test that saves are atomic.
"""

import argparse
import os
import random
import signal
import sys

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from mmpar.datasets.builder import die_with_parent
from mmpar.datasets.samplers import DistributedSampler, InfiniteSampler
from mmpar.runner import EpochBasedRunner, Hook, IterBasedRunner, set_random_seed


class PerSampleDataset(Dataset):
    """Deterministic per index: no global RNG, so workers cannot change the data."""

    def __init__(self, n=22, dim=6):
        g = torch.Generator().manual_seed(123)
        self.x = torch.randn(n, dim, generator=g)
        self.y = self.x @ torch.randn(dim, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class NoisyModel(nn.Module):
    """Uses the torch (dropout), numpy and python RNGs in every step: all must be restored."""

    def __init__(self, dim=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 1))

    def train_step(self, data_batch, optimizer, **kwargs):
        x, y = data_batch
        scale = 1.0 + 0.1 * random.random() + 0.1 * float(np.random.rand())
        loss = ((self.net(x).squeeze(-1) - y) ** 2).mean() * scale
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(x)}


def end_with_parent(worker_id):
    # Workers of the SIGKILLed run must not outlive it (torch's own check can deadlock).
    die_with_parent()


class Marker(Hook):
    def after_train_iter(self, runner):
        print(f"ITER {runner.iter + 1}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runner", choices=["epoch", "iter"], required=True)
    parser.add_argument("--sampler", choices=["dist", "infinite"], default="dist")
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--kill-during-save", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    set_random_seed(0)

    if args.kill_during_save:
        real_save, calls = torch.save, [0]

        def half_save_then_die(obj, f, *a, **k):
            calls[0] += 1
            if calls[0] < args.kill_during_save:
                return real_save(obj, f, *a, **k)
            real_save(obj, f, *a, **k)
            f.truncate(f.tell() // 2)
            f.flush()
            os.fsync(f.fileno())
            os.kill(os.getpid(), signal.SIGKILL)

        torch.save = half_save_then_die

    dataset = PerSampleDataset()
    if args.sampler == "dist":
        sampler = DistributedSampler(dataset, num_replicas=1, rank=0, shuffle=True, seed=7)
    else:
        sampler = InfiniteSampler(dataset, shuffle=True, seed=7, num_replicas=1, rank=0)
    loader = DataLoader(
        dataset,
        batch_size=4,
        sampler=sampler,
        num_workers=args.workers,
        persistent_workers=False,
        worker_init_fn=end_with_parent,
    )
    model = NoisyModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    if args.runner == "epoch":
        runner = EpochBasedRunner(model, optimizer=optimizer, work_dir=args.work_dir, max_epochs=3)
    else:
        runner = IterBasedRunner(model, optimizer=optimizer, work_dir=args.work_dir, max_iters=16)
    runner.register_training_hooks(
        lr_config=None,
        optimizer_config={},
        checkpoint_config=dict(by_epoch=False, interval=1),
        custom_hooks_config=[dict(type="DistSamplerSeedHook")],
    )
    runner.register_hook(Marker(), "LOWEST")
    if args.resume:
        runner.resume("auto")
    runner.run([loader], [("train", 1)])
    torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "iter": runner.iter},
        args.out,
    )
    print("DONE", flush=True)


if __name__ == "__main__":
    sys.exit(main())
