"""Training throughput on CPU: 2-process torchrun (MMDistributedDataParallel, gloo) vs 1 process.

Runs ``tools/train.py`` both ways on the same config (same per-process batch, no validation),
alternating for several repeats, and reads the per-iteration ``time`` from the JSON logs
(median, each epoch's first logged interval skipped). Throughput = processes × batch / time.

    python benchmarks/ddp.py --nproc 2 --epochs 2 --repeats 2

With ``--preemption-cost`` it compares instead ``--nproc`` processes without preemption handling
(``preemption=None``), with it (``tools/train.py``'s default: the ranks exchange their flags with
an asynchronous gloo ``all_reduce`` about every 0.5 s) and with an exchange after every
iteration (``preemption.sync_interval=0``), alternating, and prints the s/iter ratios.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import os.path as osp
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(nproc: int, config: str, options: list[str], work_dir: str) -> tuple[float, float]:
    """Train once; return (median s/iter from the log, wall-clock seconds)."""
    train = [osp.join(REPO, "tools/train.py"), config, "--work-dir", work_dir, "--no-validate"]
    if nproc > 1:
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            f"--nproc_per_node={nproc}",
            f"--master_port={_free_port()}",
            *train,
            "--launcher",
            "pytorch",
        ]
    else:
        cmd = [sys.executable, *train]
    cmd += ["--cfg-options", *options]
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=REPO, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    (log,) = glob.glob(osp.join(work_dir, "*.log.json"))
    per_epoch: dict[int, list[float]] = {}
    with open(log) as f:
        for line in f:
            entry = json.loads(line)
            if entry.get("mode") == "train":
                per_epoch.setdefault(entry["epoch"], []).append(entry["time"])
    times = [t for v in per_epoch.values() for t in v[1:]]
    return statistics.median(times), wall


def preemption_cost(args: argparse.Namespace, options: list[str]) -> None:
    """Print s/iter of ``args.nproc`` processes without and with the PreemptionHook."""
    variants = {
        "off": ["preemption=None"],
        "on (default: exchange about every 0.5 s)": [],
        "on, exchange after every iteration": ["preemption.sync_interval=0"],
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            for v, (name, extra) in enumerate(variants.items()):
                work_dir = os.path.join(tmp, f"variant{v}_r{r}")
                results[name].append(run(args.nproc, args.config, options + extra, work_dir))
    print(f"| preemption handling ({args.nproc} processes) | s/iter (median) | runs |")
    print("| --- | --- | --- |")
    its = {}
    for name, runs in results.items():
        its[name] = statistics.median(t for t, _ in runs)
        print(f"| {name} | {its[name]:.4f} | {', '.join(f'{t:.4f}' for t, _ in runs)} |")
    for name in list(variants)[1:]:
        print(f"s/iter ratio {name} / off: {its[name] / its['off']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/digits_lenet.py")
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32, help="samples per process per step")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--preemption-cost",
        action="store_true",
        help="compare --nproc processes without and with preemption handling instead",
    )
    args = parser.parse_args()
    options = [
        f"runner.max_epochs={args.epochs}",
        f"data.samples_per_gpu={args.batch}",
        "data.workers_per_gpu=0",
        "log_config.interval=5",
        f"checkpoint_config.interval={args.epochs}",
    ]
    if args.preemption_cost:
        preemption_cost(args, options)
        return
    results: dict[int, list[tuple[float, float]]] = {1: [], args.nproc: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            for nproc in (1, args.nproc):
                work_dir = os.path.join(tmp, f"n{nproc}_r{r}")
                results[nproc].append(run(nproc, args.config, options, work_dir))
    print("| processes | batch/process | s/iter (median) | samples/s | wall-clock (s) |")
    print("| --- | --- | --- | --- | --- |")
    rate = {}
    for nproc, runs in results.items():
        it = statistics.median(t for t, _ in runs)
        wall = statistics.median(w for _, w in runs)
        rate[nproc] = nproc * args.batch / it
        print(f"| {nproc} | {args.batch} | {it:.4f} | {rate[nproc]:.0f} | {wall:.1f} |")
    print(f"speed-up of {args.nproc} processes: {rate[args.nproc] / rate[1]:.2f}×")


if __name__ == "__main__":
    main()
