"""Per-rank memory of parameters + gradients + optimizer state, and throughput: FSDP vs DDP.

The model is a stack of ``--depth`` residual MLP blocks (``Linear(width, width)`` + GELU, each
block an FSDP unit via ``wrap_modules=['Block']``) and a linear head: 20.5 M parameters with the
defaults (width 1600, depth 8). It is trained with AdamW on random data, ``--batch`` samples per
process, wrapped in ``MMDistributedDataParallel`` and in ``MMFullyShardedDataParallel`` in the
same torchrun run (gloo, CPU, one intra-op thread per process).

A third variant is FSDP with ``reshard_after_forward=False`` (parameters kept gathered from
forward to backward). Bytes are measured after a real training step from the tensors each rank
actually holds: its parameters, their ``.grad`` and every tensor in ``optimizer.state`` (for FSDP
the ``DTensor``'s local shard). They leave out what is transient or internal (FSDP's gathered
parameters during forward/backward, DDP's gradient buckets, activations). Throughput: the
wrappers are timed alternately, ``--iters`` steps each per round, ``--rounds`` rounds (the
slowest rank's time of each round); "it/s vs DDP" is the median over rounds of the ratio to the
DDP steps of the same round.

The script launches torchrun itself, once with 1 process and once with ``--nproc`` processes:

    python benchmarks/fsdp.py --rounds 7 --iters 5   # defaults: --nproc 2 --rounds 3 --iters 5

Under torchrun directly (one setting): ``torchrun --standalone --nproc_per_node=2
benchmarks/fsdp.py --worker --out results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import os.path as osp
import statistics
import subprocess
import sys
import tempfile
import time

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
MIB = 2**20


def build_model(width: int, depth: int):
    """The benchmark's model (seeded, so every rank and wrapper starts from the same weights)."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(width, width)

        def forward(self, x):
            return x + nn.functional.gelu(self.fc(x))

    class StackedMLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.Sequential(*(Block() for _ in range(depth)))
            self.head = nn.Linear(width, 10)

        def forward(self, x, label):
            return nn.functional.cross_entropy(self.head(self.blocks(x)), label)

        def train_step(self, data_batch, optimizer=None):
            loss = self(data_batch["x"], data_batch["label"])
            return dict(loss=loss, log_vars={"loss": loss.item()}, num_samples=len(data_batch["x"]))

    torch.manual_seed(0)
    return StackedMLP()


def _local(t):
    return t.to_local() if hasattr(t, "to_local") else t


def held_bytes(model, optimizer) -> dict:
    """Bytes of the parameters, gradients and optimizer state this rank holds."""
    params = list(model.parameters())
    nbytes = lambda ts: sum(_local(t).numel() * _local(t).element_size() for t in ts)  # noqa: E731
    return {
        "params": nbytes(params),
        "grads": nbytes(p.grad for p in params if p.grad is not None),
        "optimizer": nbytes(
            v for s in optimizer.state.values() for v in s.values() if hasattr(v, "numel")
        ),
    }


def worker(args: argparse.Namespace) -> None:
    """One torchrun process: build both wrappers, measure bytes, time them alternately."""
    import torch
    import torch.distributed as dist

    from mmpar.parallel import MMDistributedDataParallel, MMFullyShardedDataParallel
    from mmpar.runner.dist_utils import get_dist_info, init_dist

    torch.set_num_threads(1)
    init_dist("pytorch", backend="gloo")
    rank, world_size = get_dist_info()
    g = torch.Generator().manual_seed(rank)
    batch = {
        "x": torch.randn(args.batch, args.width, generator=g),
        "label": torch.randint(0, 10, (args.batch,), generator=g),
    }
    wrappers = {
        "DDP": lambda m: MMDistributedDataParallel(m, device_ids=None),
        "FSDP": lambda m: MMFullyShardedDataParallel(m, wrap_modules=["Block"]),
        "FSDP, reshard_after_forward=False": lambda m: MMFullyShardedDataParallel(
            m, wrap_modules=["Block"], reshard_after_forward=False
        ),
    }
    runs = {}
    for name, wrap in wrappers.items():
        model = wrap(build_model(args.width, args.depth))
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)  # after wrapping
        runs[name] = (model, optimizer)

    def step(name: str) -> None:
        model, optimizer = runs[name]
        optimizer.zero_grad(set_to_none=False)  # gradients stay allocated, as measured
        model.train_step(batch, optimizer)["loss"].backward()
        optimizer.step()

    result: dict = {"world_size": world_size, "bytes": {}, "s_per_iter": {n: [] for n in runs}}
    for name, (model, optimizer) in runs.items():
        step(name)  # warm-up; creates the gradients and the optimizer state
        result["bytes"][name] = held_bytes(model, optimizer)
    result["num_params"] = sum(p.numel() for p in build_model(args.width, args.depth).parameters())
    for _ in range(args.rounds):
        for name in runs:
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(args.iters):
                step(name)
            elapsed = torch.tensor((time.perf_counter() - t0) / args.iters)
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # the slowest rank sets the pace
            result["s_per_iter"][name].append(elapsed.item())
    per_rank = [None] * world_size
    dist.all_gather_object(per_rank, result["bytes"])
    result["bytes"] = per_rank
    if rank == 0:
        with open(args.out, "w") as f:
            json.dump(result, f)
    dist.barrier()
    dist.destroy_process_group()


def launch(nproc: int, args: argparse.Namespace, out: str) -> dict:
    """Run this script's worker under torchrun with ``nproc`` processes; return its results."""
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={nproc}",
        osp.abspath(__file__),
        "--worker",
        "--out",
        out,
        *(f"--{k}={getattr(args, k)}" for k in ("width", "depth", "batch", "rounds", "iters")),
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [REPO, env.get("PYTHONPATH")]))
    subprocess.run(cmd, cwd=REPO, check=True, env=env)
    with open(out) as f:
        return json.load(f)


def report(results: dict[int, dict], args: argparse.Namespace) -> None:
    """Print the memory and throughput tables (Markdown)."""
    first = next(iter(results.values()))
    print(
        f"model: {first['num_params'] / 1e6:.1f} M parameters (width {args.width}, depth "
        f"{args.depth}), AdamW, batch {args.batch} per process, gloo, CPU\n"
    )
    base = None
    print("| processes | wrapper | params MiB | grads MiB | optimizer MiB | total MiB | vs 1 DDP |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for nproc, res in results.items():
        for name in res["s_per_iter"]:
            worst = max(res["bytes"], key=lambda b: sum(b[name].values()))[name]  # largest rank
            total = sum(worst.values())
            base = base or total
            cells = " | ".join(f"{worst[k] / MIB:.1f}" for k in ("params", "grads", "optimizer"))
            print(f"| {nproc} | {name} | {cells} | {total / MIB:.1f} | {total / base:.3f} |")
    print("\n| processes | wrapper | s/iter | it/s | it/s vs DDP | per round |")
    print("| --- | --- | --- | --- | --- | --- |")
    for nproc, res in results.items():
        ddp = res["s_per_iter"]["DDP"]
        for name, times in res["s_per_iter"].items():
            # Each round times the wrappers back to back: their ratio drifts less than either.
            ratios = [d / t for d, t in zip(ddp, times)]
            med = statistics.median(times)
            print(
                f"| {nproc} | {name} | {med:.3f} | {1 / med:.2f} | {statistics.median(ratios):.2f} "
                f"| {', '.join(f'{x:.2f}' for x in ratios)} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--width", type=int, default=1600)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--batch", type=int, default=32, help="samples per process per step")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=5, help="steps per wrapper per round")
    parser.add_argument("--worker", action="store_true", help="(internal) run as a torchrun rank")
    parser.add_argument("--out", help="(with --worker) where rank 0 writes its JSON results")
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        results = {n: launch(n, args, osp.join(tmp, f"n{n}.json")) for n in (1, args.nproc)}
    report(results, args)


if __name__ == "__main__":
    main()
