"""Training throughput with and without ``compile`` (torch.compile), in one process on CPU.

Builds the model of a config, wraps it in ``MMDataParallel`` as ``tools/train.py`` does, and
runs full training iterations (``train_step``, backward, SGD step) on a fixed synthetic batch:
eager, then compiled with :func:`mmpar.runner.model_setup.compile.compile_model`. The compiled run's
first iterations (the compilation) are timed apart from its steady state; a fresh inductor
cache is used unless ``--warm-cache``, so the compile time is a cold one.

    python benchmarks/compile.py --config configs/digits_lenet.py --batch 64 --iters 200
    python benchmarks/compile.py --config configs/cifar10_resnet.py --batch 32 --iters 20

Prints, per mode, the median seconds per iteration over ``--repeats`` timed blocks, samples/s,
the compiled/eager throughput ratio, and the compile time (the first ``--warmup`` compiled
iterations minus as many steady ones).
"""

from __future__ import annotations

import argparse
import os
import os.path as osp
import statistics
import sys
import tempfile
import time

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=osp.join(REPO, "configs", "digits_lenet.py"))
    parser.add_argument("--backend", default="inductor", help="torch.compile backend")
    parser.add_argument("--mode", default=None, help="torch.compile mode (default: None)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--iters", type=int, default=100, help="iterations per timed block")
    parser.add_argument("--repeats", type=int, default=3, help="timed blocks per mode")
    parser.add_argument("--warmup", type=int, default=3, help="untimed iterations first")
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    parser.add_argument("--warm-cache", action="store_true", help="keep the inductor cache")
    return parser.parse_args(argv)


def input_shape(cfg) -> tuple[int, int, int]:
    """(channels, height, width) of the config's model input."""
    backbone = cfg.model.backbone
    if backbone.type == "LeNet":
        size = backbone.get("input_size", 32)
        return backbone.get("in_channels", 1), size, size
    return 3, 32, 32  # the CIFAR configs


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.warm_cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor-bench-")
    sys.path.insert(0, REPO)
    import torch

    from mmpar import Config
    from mmpar.models import build_classifier
    from mmpar.parallel import MMDataParallel
    from mmpar.runner.model_setup.compile import compile_model

    torch.set_num_threads(args.threads)
    cfg = Config.fromfile(args.config)
    gen = torch.Generator().manual_seed(0)
    batch = dict(
        img=torch.randn(args.batch, *input_shape(cfg), generator=gen),
        gt_label=torch.randint(0, cfg.model.head.num_classes, (args.batch,), generator=gen),
    )

    def iterate(model, optimizer, n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            outputs = model.train_step(batch, optimizer)
            optimizer.zero_grad()
            outputs["loss"].backward()
            optimizer.step()
        return time.perf_counter() - start

    runs, warmup = {}, {}
    for mode in ("eager", "compiled"):
        torch.manual_seed(0)
        model = build_classifier(cfg.model)
        if mode == "compiled":
            compile_model(model, dict(backend=args.backend, mode=args.mode))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        runs[mode] = (MMDataParallel(model, device_ids=[-1]), optimizer)
        warmup[mode] = iterate(*runs[mode], args.warmup)
    # Alternate the timed blocks: on a shared machine the load changes over time.
    blocks = {mode: [] for mode in runs}
    for _ in range(args.repeats):
        for mode, run in runs.items():
            blocks[mode].append(iterate(*run, args.iters) / args.iters)
    results = {mode: statistics.median(times) for mode, times in blocks.items()}
    for mode, per_iter in results.items():
        compile_s = warmup[mode] - args.warmup * per_iter if mode == "compiled" else 0
        extra = f", compile {compile_s:.1f} s (first {args.warmup} iters)" if compile_s else ""
        listed = ", ".join(f"{b * 1e3:.2f}" for b in blocks[mode])
        print(
            f"{mode:8s} {per_iter * 1e3:8.2f} ms/iter  {args.batch / per_iter:9.1f} samples/s"
            f"  (blocks: {listed} ms){extra}"
        )
    print(
        f"compiled/eager throughput: {results['eager'] / results['compiled']:.2f}x "
        f"({osp.basename(args.config)}, batch {args.batch}, backend {args.backend}, "
        f"{args.threads} threads, torch {torch.__version__})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
