"""Runner overhead: a hand-written PyTorch loop vs EpochBasedRunner with the default hooks.

Same model, data, optimizer and steps in one process; the two are timed alternately several
times and the medians compared. Run:

    .venv/bin/python benchmarks/runner_overhead.py [--repeats 7] [--epochs 5] [--write-docs]
"""

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from mmpar.runner import EpochBasedRunner

DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


class MLP(nn.Module):
    def __init__(self, dim=64, hidden=256, classes=10):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, classes),
        )

    def train_step(self, data_batch, optimizer, **kwargs):
        x, y = data_batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(x)}


def make_setup(seed=0):
    torch.manual_seed(seed)
    x = torch.randn(256, 64)
    y = torch.randint(0, 10, (256,))
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=False)
    model = MLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, optimizer, loader


def hand_loop(epochs, work_dir):
    model, optimizer, loader = make_setup()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(epochs):
        for batch in loader:
            outputs = model.train_step(batch, optimizer)
            optimizer.zero_grad()
            outputs["loss"].backward()
            optimizer.step()
    torch.save(
        {"state_dict": model.state_dict(), "optimizer": optimizer.state_dict()},
        work_dir / "hand.pth",
    )
    n = epochs * len(loader)
    return (time.perf_counter() - start) / n, (time.process_time() - cpu) / n, model


def runner_loop(epochs, work_dir):
    model, optimizer, loader = make_setup()
    logger = logging.getLogger("runner_overhead")
    logger.setLevel(logging.WARNING)  # the text logger's lines are formatted, not printed
    runner = EpochBasedRunner(
        model, optimizer=optimizer, work_dir=str(work_dir), logger=logger, max_epochs=epochs
    )
    runner.register_training_hooks(
        lr_config=None,
        optimizer_config={},
        checkpoint_config=dict(interval=epochs),  # once, at the end
        log_config=dict(interval=50, hooks=[dict(type="TextLoggerHook")]),
    )
    start, cpu = time.perf_counter(), time.process_time()
    runner.run([loader], [("train", 1)])
    n = epochs * len(loader)
    return (time.perf_counter() - start) / n, (time.process_time() - cpu) / n, model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument(
        "--write-docs", action="store_true", help="append the result to docs/benchmarks.md"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    wall_ratios, cpu_ratios, hand_ms = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        hand_loop(1, tmp)  # warm-up both paths
        runner_loop(1, tmp / "warmup")
        for i in range(args.repeats):
            # Alternate which loop goes first; pair each runner measurement with its neighbour.
            if i % 2:
                r_wall, r_cpu, runner_model = runner_loop(args.epochs, tmp / f"run{i}")
                h_wall, h_cpu, hand_model = hand_loop(args.epochs, tmp)
            else:
                h_wall, h_cpu, hand_model = hand_loop(args.epochs, tmp)
                r_wall, r_cpu, runner_model = runner_loop(args.epochs, tmp / f"run{i}")
            wall_ratios.append(r_wall / h_wall)
            cpu_ratios.append(r_cpu / h_cpu)
            hand_ms.append(h_wall * 1e3)
            # Same steps: the two loops must end with identical weights.
            for (k, a), b in zip(
                hand_model.state_dict().items(), runner_model.state_dict().values()
            ):
                assert torch.equal(a, b), f"{k} differs: the loops did not run the same steps"
    ratio = statistics.median(wall_ratios)
    line = (
        f"per-iteration time ratio runner/hand loop: {ratio:.3f} wall clock, "
        f"{statistics.median(cpu_ratios):.3f} process CPU time (medians of {args.repeats} paired "
        f"repeats of {args.epochs} epochs x 16 iterations; hand loop "
        f"{statistics.median(hand_ms):.2f} ms/iter)"
    )
    print(line)
    if args.write_docs:
        text = DOCS.read_text() if DOCS.exists() else "# Benchmarks\n"
        section = (
            "\n## Runner overhead\n\n"
            "MLP (64-256-256-10) on 256 random samples, batch 16, SGD+momentum, CPU, 1 thread. "
            "The runner has the default hooks (NaN guard, optimizer, checkpoint at the end, iter "
            "timer, TextLoggerHook with its JSON log at interval 50); the hand loop does the same "
            "steps and saves one checkpoint (torch.save, no fsync). Both end with identical "
            "weights. The machine was shared with other jobs: wall-clock ratios are noisy, "
            "CPU time less so.\n\n"
            "```\n.venv/bin/python benchmarks/runner_overhead.py --write-docs\n```\n\n"
            f"Result: {line}. Target: <= 1.05.\n"
        )
        DOCS.write_text(text.rstrip("\n") + "\n" + section)


if __name__ == "__main__":
    main()
