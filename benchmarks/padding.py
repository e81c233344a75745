"""Padding made by collate: SizeBucketBatchSampler vs random batching.

collate pads every image of a batch to the batch's largest height and width. This script
measures the fraction of padded pixels over whole epochs for a dataset of random image sizes
(only the sizes are needed) with three batchings of the same batch size:

- random: torch's BatchSampler over a RandomSampler (the usual DataLoader shuffle);
- area: SizeBucketBatchSampler given the areas h*w as scalar sizes (sorting by area only);
- bucketed: SizeBucketBatchSampler given the (h, w) pairs (mmpar's default).

Run: .venv/bin/python benchmarks/padding.py
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.utils.data import BatchSampler, RandomSampler

from mmpar.datasets.samplers import SizeBucketBatchSampler


class SizesOnly:
    """A dataset that only knows its samples' (h, w); there are no pixels."""

    def __init__(self, sizes: list[tuple[int, int]]) -> None:
        self.sizes = sizes

    def __len__(self) -> int:
        return len(self.sizes)


def padded_fraction(batch_lists, sizes, channels: int = 3) -> float:
    """Fraction of the padded batch tensors' elements that are padding."""
    padded = total = 0
    for batch in batch_lists:
        hs = [sizes[i][0] for i in batch]
        ws = [sizes[i][1] for i in batch]
        area = channels * max(hs) * max(ws) * len(batch)
        total += area
        padded += area - channels * sum(h * w for h, w in zip(hs, ws))
    return padded / total


def measure(make_batches, sizes, epochs: int) -> tuple[float, float]:
    """Mean padded fraction and mean seconds per epoch to produce the batch order."""
    fractions, seconds = [], 0.0
    for epoch in range(epochs):
        start = time.perf_counter()
        batches = make_batches(epoch)
        seconds += time.perf_counter() - start
        fractions.append(padded_fraction(batches, sizes))
    return sum(fractions) / epochs, seconds / epochs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num-samples", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--min-side", type=int, default=200)
    parser.add_argument("--max-side", type=int, default=400)
    parser.add_argument("--bucket-size-multiplier", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    generator = torch.Generator().manual_seed(args.seed)
    sides = torch.randint(
        args.min_side, args.max_side + 1, (args.num_samples, 2), generator=generator
    )
    sizes = [tuple(pair) for pair in sides.tolist()]
    dataset = SizesOnly(sizes)

    def random_batches(epoch: int) -> list[list[int]]:
        sampler = RandomSampler(dataset, generator=torch.Generator().manual_seed(epoch))
        return list(BatchSampler(sampler, args.batch_size, drop_last=False))

    def bucket_batches(scalar_area: bool):
        sampler = SizeBucketBatchSampler(
            dataset,
            args.batch_size,
            sizes=[h * w for h, w in sizes] if scalar_area else None,
            bucket_size_multiplier=args.bucket_size_multiplier,
            seed=args.seed,
            num_replicas=1,
            rank=0,
        )

        def make(epoch: int) -> list[list[int]]:
            sampler.set_epoch(epoch)
            return list(sampler)

        return make

    results = {
        "random": measure(random_batches, sizes, args.epochs),
        "area": measure(bucket_batches(scalar_area=True), sizes, args.epochs),
        "bucketed": measure(bucket_batches(scalar_area=False), sizes, args.epochs),
    }
    print(
        f"{args.num_samples} samples of 3x({args.min_side}-{args.max_side})^2, "
        f"batch {args.batch_size}, bucket_size_multiplier {args.bucket_size_multiplier}, "
        f"mean of {args.epochs} epochs"
    )
    print("| batching | padded pixels | fewer than random | ms per epoch order |")
    print("|---|---|---|---|")
    baseline = results["random"][0]
    for name, (fraction, seconds) in results.items():
        print(f"| {name} | {fraction:.1%} | {baseline / fraction:.1f}x | {seconds * 1e3:.1f} |")


if __name__ == "__main__":
    main()
