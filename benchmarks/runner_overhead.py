"""Runner overhead: a hand-written PyTorch loop vs EpochBasedRunner with the default hooks.

Same model (a Linear 32->10 classifier, batch 64, CPU), data, optimizer and steps in one
process. The runner's model is wrapped in ``MMDataParallel(device_ids=[-1])``, as
``tools/train.py`` wraps it on a machine without GPUs, so scatter is part of its figures; the
hand loop calls the bare model. This VM's speed drifts by up to 30%
within seconds (other tenants), so whole runs timed one after the other give ratios that
wander by several percent. The steady per-iteration ratio is therefore measured with the two
loops interleaved epoch by epoch: a hook run first at each ``before_train_epoch`` trains one
hand-loop epoch (its own model copy) and times it, and the runner's epoch is timed from there
to the next ``before_train_epoch`` (every hook, the logger records and the loop itself
included). Whole runs (set-up and the final checkpoint included) are also timed, alternately,
and must end with identical weights. Run:

    .venv/bin/python benchmarks/runner_overhead.py [--repeats 7] [--epochs 20] [--preemption]
                                                   [--no-wrapper] [--model {linear,mlp}]
                                                   [--bytecodes] [--iterations]

``--bytecodes`` instead counts the Python bytecodes each iteration executes (``sys.settrace``
opcode events over 2 epochs): in mmpar, by function, and in all code, runner minus hand loop.
Unlike times, the counts do not depend on the machine's load.

``--preemption`` also registers a PreemptionHook (as ``tools/train.py`` does): its
per-iteration check (read a flag, single process) is then part of the runner's figures.
``--no-wrapper`` gives the runner the bare model (the wrapper's share is the difference);
``--model mlp --no-wrapper`` is the setting of the figures dated 2026-11-24 and before.
"""

from __future__ import annotations

import argparse
import collections
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from mmpar.parallel import MMDataParallel
from mmpar.runner import EpochBasedRunner, Hook, PreemptionHook

ITERS_PER_EPOCH = 16
# --model: (input dim, hidden widths, batch). "linear" is the issue-24 setting (Linear 32->10,
# batch 64); "mlp" the MLP 64-256-256-10, batch 16, of the figures dated 2026-11-24 and before.
MODELS = {"linear": (32, (), 64), "mlp": (64, (256, 256), 16)}
MODEL = "linear"
CLASSES = 10


class Classifier(nn.Module):
    """A linear classifier or a small MLP, with mmpar's ``train_step`` API."""

    def __init__(self, dim: int, hidden: tuple[int, ...]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for width in hidden:
            layers += [nn.Linear(dim, width), nn.ReLU()]
            dim = width
        self.net = nn.Sequential(*layers, nn.Linear(dim, CLASSES))

    def train_step(self, data_batch, optimizer, **kwargs) -> dict:
        """Cross-entropy loss of one batch, as the runner expects it."""
        x, y = data_batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(x)}


def make_setup(seed: int = 0) -> tuple[Classifier, torch.optim.Optimizer, DataLoader]:
    """The same model, optimizer and data for both loops."""
    dim, hidden, batch = MODELS[MODEL]
    torch.manual_seed(seed)
    x = torch.randn(batch * ITERS_PER_EPOCH, dim)
    y = torch.randint(0, CLASSES, (batch * ITERS_PER_EPOCH,))
    loader = DataLoader(TensorDataset(x, y), batch_size=batch, shuffle=False)
    model = Classifier(dim, hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, optimizer, loader


def hand_epoch(
    model: Classifier,
    optimizer: torch.optim.Optimizer,
    loader: DataLoader,
    stamps: list[float] | None = None,
) -> None:
    """One epoch of the hand-written loop (``model.train()`` first, as every loop with a
    validation phase does and the runner does); ``stamps`` gets each iteration's start time."""
    model.train()
    for batch in loader:
        if stamps is not None:
            stamps.append(time.perf_counter())
        outputs = model.train_step(batch, optimizer)
        optimizer.zero_grad()
        outputs["loss"].backward()
        optimizer.step()


def hand_loop(epochs: int, work_dir: Path) -> tuple[float, Classifier]:
    """Train by hand and save one checkpoint; return (wall s, model)."""
    model, optimizer, loader = make_setup()
    start = time.perf_counter()
    for _ in range(epochs):
        hand_epoch(model, optimizer, loader)
    work_dir.mkdir(parents=True, exist_ok=True)
    torch.save(
        {"state_dict": model.state_dict(), "optimizer": optimizer.state_dict()},
        work_dir / "hand.pth",
    )
    return time.perf_counter() - start, model


def _clocks() -> tuple[float, float]:
    """Wall time and this thread's CPU time (all work here runs in this thread: 1 intra-op
    thread, no loader workers). The CPU time leaves out the time other processes take."""
    return time.perf_counter(), time.thread_time()


class InterleavedHandEpochs(Hook):
    """Before each runner epoch, train one hand-loop epoch; time both (wall and CPU time)."""

    def __init__(self) -> None:
        self.model, self.optimizer, self.loader = make_setup()
        self.hand_s: list[tuple[float, float]] = []
        self.runner_s: list[tuple[float, float]] = []
        self._mark: tuple[float, float] | None = None

    def before_train_epoch(self, runner) -> None:
        """Close the runner epoch that just ended, then run and time a hand epoch."""
        now = _clocks()
        if self._mark is not None:
            self.runner_s.append((now[0] - self._mark[0], now[1] - self._mark[1]))
        hand_epoch(self.model, self.optimizer, self.loader, self._hand_stamps())
        self._mark = _clocks()
        self.hand_s.append((self._mark[0] - now[0], self._mark[1] - now[1]))

    def _hand_stamps(self) -> list[float] | None:
        return None


class InterleavedStampedEpochs(InterleavedHandEpochs):
    """Also time every iteration of both loops (``--iterations``): start to next start.

    Iterations are short, so under load many of them run undisturbed: low percentiles of
    the per-iteration times estimate the undisturbed cost better than whole epochs do. The
    runner's stamp is taken by this hook, first at ``before_train_iter``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.hand_iters: list[list[float]] = []
        self.runner_iters: list[list[float]] = []

    def _hand_stamps(self) -> list[float]:
        self.hand_iters.append([])
        self.runner_iters.append([])
        return self.hand_iters[-1]

    def before_train_iter(self, runner) -> None:
        """Stamp the runner iteration's start."""
        self.runner_iters[-1].append(time.perf_counter())


def iteration_times(epochs: list[list[float]]) -> list[float]:
    """Durations between consecutive starts within each epoch."""
    return [b - a for stamps in epochs for a, b in zip(stamps, stamps[1:])]


PREEMPTION = False  # --preemption: register a PreemptionHook too
WRAPPER = True  # --no-wrapper: the runner trains the bare model


def runner_loop(epochs: int, work_dir: Path, *extra_hooks: Hook) -> tuple[float, Classifier]:
    """Train with EpochBasedRunner and the default hooks; return (wall s, model)."""
    model, optimizer, loader = make_setup()
    logger = logging.getLogger("runner_overhead")
    logger.setLevel(logging.WARNING)  # the text logger's lines are formatted, not printed
    start = time.perf_counter()
    wrapped = MMDataParallel(model, device_ids=[-1]) if WRAPPER else model
    runner = EpochBasedRunner(
        wrapped, optimizer=optimizer, work_dir=str(work_dir), logger=logger, max_epochs=epochs
    )
    runner.register_training_hooks(
        lr_config=None,
        optimizer_config={},
        checkpoint_config=dict(interval=epochs),  # once, at the end
        log_config=dict(interval=50, hooks=[dict(type="TextLoggerHook")]),
    )
    for hook in extra_hooks:
        runner.register_hook(hook, priority="HIGHEST")
    if PREEMPTION:
        runner.register_hook(PreemptionHook(), priority="LOWEST")
    runner.run([loader], [("train", 1)])
    return time.perf_counter() - start, model


def assert_same_weights(a: nn.Module, b: nn.Module) -> None:
    """The two loops must have run the same steps."""
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), f"{name} differs: the loops did not run the same steps"


class _OpcodeCounter:
    """Count executed bytecodes per ``(file name, function)`` while installed."""

    def __init__(self) -> None:
        self.counts: collections.Counter = collections.Counter()

    def __call__(self, frame, event, arg):  # noqa: ANN001, ANN204 (sys.settrace signature)
        frame.f_trace_opcodes = True
        if event == "opcode":
            code = frame.f_code
            self.counts[(code.co_filename, code.co_name)] += 1
        return self


class _TraceEpochs(Hook):
    """Trace the runner's epochs 1 and 2 (from the start of one to the start of the next)."""

    def __init__(self, counter: _OpcodeCounter) -> None:
        self.counter = counter

    def before_train_epoch(self, runner) -> None:
        """Start tracing at epoch 1, stop at epoch 3."""
        if runner.epoch == 1:
            sys.settrace(self.counter)
        elif runner.epoch == 3:
            sys.settrace(None)


def count_bytecodes(work_dir: Path) -> None:
    """Print the bytecodes per iteration of the runner (mmpar's, by function) and the hand loop."""
    iters = 2 * ITERS_PER_EPOCH
    runner_counter, hand_counter = _OpcodeCounter(), _OpcodeCounter()
    runner_loop(4, work_dir, _TraceEpochs(runner_counter))
    model, optimizer, loader = make_setup()
    hand_epoch(model, optimizer, loader)
    sys.settrace(hand_counter)
    for _ in range(2):
        hand_epoch(model, optimizer, loader)
    sys.settrace(None)
    in_mmpar = {
        key: n for key, n in runner_counter.counts.items() if f"{os.sep}mmpar{os.sep}" in key[0]
    }
    for (path, name), n in sorted(in_mmpar.items(), key=lambda item: -item[1])[:20]:
        print(f"{n / iters:8.1f}  {Path(path).name}:{name}")
    runner_all, hand_all = sum(runner_counter.counts.values()), sum(hand_counter.counts.values())
    print(
        f"bytecodes per iteration: {sum(in_mmpar.values()) / iters:.0f} in mmpar; all code: "
        f"runner {runner_all / iters:.0f}, hand loop {hand_all / iters:.0f}, difference "
        f"{(runner_all - hand_all) / iters:.0f}"
    )


def main() -> None:
    """Measure and print the ratios."""
    global PREEMPTION, WRAPPER, MODEL
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--preemption", action="store_true", help="register a PreemptionHook")
    parser.add_argument("--model", choices=sorted(MODELS), default=MODEL)
    parser.add_argument(
        "--no-wrapper", action="store_true", help="no MMDataParallel around the runner's model"
    )
    parser.add_argument(
        "--bytecodes", action="store_true", help="count bytecodes per iteration instead of timing"
    )
    parser.add_argument(
        "--iterations",
        action="store_true",
        help="also time single iterations (percentiles; robust on a loaded machine)",
    )
    args = parser.parse_args()
    MODEL = args.model
    PREEMPTION = args.preemption
    WRAPPER = not args.no_wrapper
    torch.set_num_threads(1)
    if args.bytecodes:
        with tempfile.TemporaryDirectory() as tmp:
            count_bytecodes(Path(tmp))
        return
    load_before = os.getloadavg()[0]
    epoch_ratios, cpu_ratios, hand_epoch_s, runner_epoch_s = [], [], [], []
    hand_cpu_s, runner_cpu_s = [], []
    whole_ratios, fixed = [], []
    hand_iter_s, runner_iter_s = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        hand_loop(1, tmp)  # warm-up both paths
        runner_loop(1, tmp / "warmup")
        for i in range(args.repeats):
            timer = InterleavedStampedEpochs() if args.iterations else InterleavedHandEpochs()
            _, model = runner_loop(args.epochs, tmp / f"interleaved{i}", timer)
            assert_same_weights(timer.model, model)
            # The last runner epoch (with the final checkpoint) has no closing mark: it is
            # part of the whole-run figures below.
            pairs = list(zip(timer.hand_s, timer.runner_s))
            epoch_ratios += [r[0] / h[0] for h, r in pairs]
            cpu_ratios += [r[1] / h[1] for h, r in pairs]
            hand_epoch_s += [h[0] for h, _ in pairs]
            runner_epoch_s += [r[0] for _, r in pairs]
            hand_cpu_s += [h[1] for h, _ in pairs]
            runner_cpu_s += [r[1] for _, r in pairs]
            if args.iterations:
                hand_iter_s += iteration_times(timer.hand_iters)
                runner_iter_s += iteration_times(timer.runner_iters)
            runs = [("hand", hand_loop), ("runner", runner_loop)]
            if i % 2:  # alternate which goes first
                runs.reverse()
            whole = {name: loop(args.epochs, tmp / f"{name}{i}") for name, loop in runs}
            assert_same_weights(whole["hand"][1], whole["runner"][1])
            whole_ratios.append(whole["runner"][0] / whole["hand"][0])
            fixed.append(whole["runner"][0] - whole["hand"][0])
    med = statistics.median
    fastest = min(runner_epoch_s) / min(hand_epoch_s)
    fastest_cpu = min(runner_cpu_s) / min(hand_cpu_s)
    hand_us = med(hand_epoch_s) / ITERS_PER_EPOCH * 1e6
    runner_us = med(runner_epoch_s) / ITERS_PER_EPOCH * 1e6
    print(
        f"steady per-iteration ratio runner/hand loop: {med(epoch_ratios):.3f} (median of "
        f"{len(epoch_ratios)} interleaved epoch pairs; hand loop {hand_us:.0f} us/iter, runner "
        f"{runner_us:.0f} us/iter)\n"
        f"same pairs in CPU time of this thread: {med(cpu_ratios):.3f}\n"
        f"fastest epoch of each loop, runner/hand loop: {fastest:.3f} (CPU time "
        f"{fastest_cpu:.3f}; the epochs other processes disturbed least)\n"
        f"whole-run ratio, {args.epochs} epochs x {ITERS_PER_EPOCH} iterations with set-up and "
        f"final checkpoint: {med(whole_ratios):.3f} (median of {args.repeats} alternating "
        f"pairs; runner - hand = {med(fixed) * 1e3:.1f} ms per run)\n"
        f"load average (1 min) before/after: {load_before:.2f}/{os.getloadavg()[0]:.2f} on "
        f"{os.cpu_count()} CPUs"
    )
    if args.iterations:
        cuts = statistics.quantiles(hand_iter_s, n=20), statistics.quantiles(runner_iter_s, n=20)
        print(
            "single iterations, runner/hand loop: "
            + ", ".join(
                f"{name} {r[k] / h[k]:.3f} ({h[k] * 1e6:.0f}/{r[k] * 1e6:.0f} us)"
                for name, k in (("5th percentile", 0), ("10th", 1), ("25th", 4), ("median", 9))
                for h, r in [cuts]
            )
            + f" of {len(hand_iter_s)} and {len(runner_iter_s)}"
        )


if __name__ == "__main__":
    main()
