"""Worker for the real multi-process tests; run with torchrun (gloo on CPU).

``--mode train``: trains two tiny models (one with an unused parameter) with
MMDistributedDataParallel on per-rank data, exercises the dist_utils collectives, and writes
``rank{r}.pt`` into ``--out``. ``--mode fail``: rank 1 raises while rank 0 waits in a barrier.

The test process imports this file for ``Net``, ``make_samples`` and ``reference_params`` to
compute the single-process reference.
"""

import argparse
import os

import torch
from torch import nn
from torch.utils.data import DistributedSampler

from mmpar.parallel import DataContainer, MMDistributedDataParallel, collate
from mmpar.parallel.collate import merge_chunks
from mmpar.runner.dist_utils import (
    all_reduce_dict,
    barrier,
    broadcast_object,
    collect_results,
    get_dist_info,
    init_dist,
)

GLOBAL_BATCH = 8
STEPS = 3
LR = 0.5


class Net(nn.Module):
    """Sums each padded image per channel (padding adds 0) and classifies it."""

    def __init__(self, with_unused: bool = False):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(3, 2)
        self.unused = nn.Linear(2, 2) if with_unused else None

    def forward(self, img, label):
        logits = self.fc(img.sum(dim=(2, 3)) / 16.0)
        return nn.functional.cross_entropy(logits, label)

    def train_step(self, data_batch, optimizer=None):
        loss = self(data_batch["img"], data_batch["label"])
        return {
            "loss": loss,
            "log_vars": {"loss": loss.item()},
            "num_samples": len(data_batch["img_metas"]),
        }


def make_samples(step: int) -> list:
    """The global batch of one step: variable-size images, metadata, integer labels."""
    g = torch.Generator().manual_seed(100 + step)
    samples = []
    for i in range(GLOBAL_BATCH):
        h, w = (int(x) for x in torch.randint(2, 6, (2,), generator=g))
        samples.append(
            {
                "img": DataContainer(torch.rand(3, h, w, generator=g), stack=True),
                "img_metas": DataContainer({"idx": i}, cpu_only=True),
                "label": int(torch.randint(0, 2, (1,), generator=g)),
            }
        )
    return samples


def train(model: nn.Module, step_fn, rank: int, world_size: int) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    for step in range(STEPS):
        local = make_samples(step)[rank::world_size]  # DistributedSampler's interleaving
        # Two chunks per rank exercises merging chunks back into the local batch.
        batch = collate(local, samples_per_gpu=max(1, len(local) // 2))
        outputs = step_fn(batch, opt)
        opt.zero_grad()
        outputs["loss"].backward()
        opt.step()


def reference_params(with_unused: bool) -> dict:
    """Single-process training on the full global batch."""
    model = Net(with_unused)
    train(model, lambda batch, opt: model.train_step(_unwrap(batch), opt), 0, 1)
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _unwrap(batch: dict) -> dict:
    """The collated global batch as plain tensors/lists (what a wrapper would pass on)."""
    return {
        k: v.data[0] if isinstance(v, DataContainer) else v for k, v in merge_chunks(batch).items()
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--mode", choices=["train", "fail"], default="train")
    args = parser.parse_args()

    init_dist("pytorch", backend="gloo")
    rank, world_size = get_dist_info()
    if args.mode == "fail":
        if rank == 1:
            raise RuntimeError("rank 1 failed on purpose")
        barrier()  # never completes: rank 1 is gone; torchrun must end this process
        return

    result = {}
    for with_unused in (False, True):
        model = MMDistributedDataParallel(
            Net(with_unused), device_ids=None, find_unused_parameters=with_unused
        )
        train(model, model.train_step, rank, world_size)
        result[f"params_unused={with_unused}"] = {
            k: v.detach().clone() for k, v in model.module.state_dict().items()
        }

    dataset_size = 7  # not divisible by world size: the sampler pads rank 1 with index 0
    sampler = DistributedSampler(range(dataset_size), world_size, rank, shuffle=False)
    result["collected"] = collect_results([f"res{i}" for i in sampler], dataset_size)
    result["reduced"] = all_reduce_dict({"a": torch.tensor(float(rank)), "b": rank * 2})
    result["broadcast"] = broadcast_object({"from": rank})
    torch.save(result, os.path.join(args.out, f"rank{rank}.pt"))
    barrier()


if __name__ == "__main__":
    main()
