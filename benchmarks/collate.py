"""Benchmark collate + scatter against the memory-copy limit, in the same run.

Usage:
    python benchmarks/collate.py [--batch-size 32] [--samples-per-gpu 32] [--repeats 31]

Each batch holds variable-size 3x(200-400)^2 float images (converted from uint8 before
timing) as ``DataContainer(img, stack=True)``, per-image metadata (``cpu_only``) and a list of
gt boxes. ``collate`` + ``scatter`` (CPU target) is compared with the copy limit: one
preallocated zeros tensor per chunk plus one ``copy_`` per sample. The ratio should be <= 1.1.

Other sections (e.g. ``--sampler``) can be added next to ``bench_collate`` in ``main()``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from mmpar.parallel import DataContainer, collate, scatter


def make_samples(batch_size: int, seed: int = 0) -> list[dict]:
    """Build one batch of samples like a detection pipeline's output."""
    g = torch.Generator().manual_seed(seed)
    samples = []
    for i in range(batch_size):
        h, w = (int(x) for x in torch.randint(200, 401, (2,), generator=g))
        img = torch.randint(0, 256, (3, h, w), dtype=torch.uint8, generator=g).float()
        boxes = torch.rand(int(torch.randint(1, 10, (1,), generator=g)), 4, generator=g)
        samples.append(
            {
                "img": DataContainer(img, stack=True),
                "img_metas": DataContainer({"idx": i, "shape": (h, w)}, cpu_only=True),
                "gt_bboxes": DataContainer(boxes),
            }
        )
    return samples


def copy_limit(samples: list[dict], samples_per_gpu: int) -> list[torch.Tensor]:
    """The least work any padded batching can do: allocate once, copy each image once."""
    out = []
    for start in range(0, len(samples), samples_per_gpu):
        imgs = [s["img"].data for s in samples[start : start + samples_per_gpu]]
        h = max(t.shape[1] for t in imgs)
        w = max(t.shape[2] for t in imgs)
        batch = torch.zeros((len(imgs), imgs[0].shape[0], h, w), dtype=imgs[0].dtype)
        for i, t in enumerate(imgs):
            batch[i, :, : t.shape[1], : t.shape[2]].copy_(t)
        out.append(batch)
    return out


def ours(samples: list[dict], samples_per_gpu: int) -> list:
    """Collate, then scatter to the CPU (every chunk kept)."""
    return scatter(collate(samples, samples_per_gpu), [-1])


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def bench_collate(batch_size: int, samples_per_gpu: int, repeats: int) -> dict:
    """Time ours vs the copy limit (interleaved rounds) and print a table; return the figures."""
    samples = make_samples(batch_size)
    ref = copy_limit(samples, samples_per_gpu)
    got = ours(samples, samples_per_gpu)
    assert all(torch.equal(r, g["img"]) for r, g in zip(ref, got)), "outputs differ"
    mbytes = sum(s["img"].data.numel() * s["img"].data.element_size() for s in samples) / 2**20

    copy_limit(samples, samples_per_gpu)  # warm-up both (allocator, first-call overhead)
    ours(samples, samples_per_gpu)
    limit_runs, ours_runs = [], []
    for _ in range(repeats):  # alternate so machine-load drift hits both alike
        limit_runs.append(_timed(lambda: copy_limit(samples, samples_per_gpu)))
        ours_runs.append(_timed(lambda: ours(samples, samples_per_gpu)))
    limit_ms, ours_ms = statistics.median(limit_runs), statistics.median(ours_runs)
    ratio = ours_ms / limit_ms

    print(
        f"## collate: {batch_size} images, samples_per_gpu={samples_per_gpu}, "
        f"{mbytes:.1f} MiB of float images, {torch.get_num_threads()} thread(s)"
    )
    print(f"{'method':<28}{'median ms':>12}{'GiB/s':>10}")
    for name, ms in (("copy limit (zeros + copy_)", limit_ms), ("collate + scatter", ours_ms)):
        print(f"{name:<28}{ms:>12.2f}{mbytes / 1024 / (ms / 1e3):>10.2f}")
    print(f"ratio collate/limit: {ratio:.3f} (target <= 1.1)")
    return {"limit_ms": limit_ms, "ours_ms": ours_ms, "ratio": ratio}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--samples-per-gpu", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    bench_collate(args.batch_size, args.samples_per_gpu, args.repeats)


if __name__ == "__main__":
    main()
