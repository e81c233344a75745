"""Why torch's own step runs slower inside the runner than in a hand-written loop.

``runner_overhead.py`` found torch's ``zero_grad``/``backward``/``step`` taking a few µs more
per iteration inside the runner's optimizer hook than the same calls in the hand loop. This
script times exactly those three calls (nothing of mmpar's between the stamps) in both loops,
with the benchmark's model and data, epochs interleaved and settings alternated, and reports
low percentiles and medians over all iterations:

1. inside an EpochBasedRunner with only the optimizer hook, then with ``MMDataParallel``, the
   default hooks (iter timer, text logger), both; and the same with the previous iteration's
   ``runner.outputs`` released after ``after_train_iter`` or kept by the hand loop too;
2. in the hand loop alone, with some unrelated Python work (dicts, attributes, list appends;
   nothing touching torch) run before and after the step.

If (2) slows the step as (1) does, the slowdown is not a runner state (grad mode, hooks, tensor
lifetimes) but the CPU's caches and branch predictors: any Python work between iterations
evicts part of torch's hot code and data, so the step runs a little colder. Run:

    .venv/bin/python benchmarks/step_warmth.py [--repeats 6] [--epochs 10]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from collections.abc import Callable

import torch
from runner_overhead import make_setup
from torch.optim import Optimizer

from mmpar.parallel import MMDataParallel
from mmpar.runner import EpochBasedRunner, Hook, OptimizerHook

clock = time.perf_counter


def timed_step(optimizer: Optimizer, loss: torch.Tensor, times: list[float]) -> None:
    """The hand loop's three torch calls, timed."""
    start = clock()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    times.append(clock() - start)


class _Holder:
    outputs: dict | None = None


def hand_epoch(setup: tuple, times: list[float], work: Callable | None, keep: bool) -> None:
    """One hand-loop epoch; ``work`` runs before and after each step, ``keep`` holds the
    outputs on an object until the next iteration (as ``runner.outputs`` does)."""
    model, optimizer, loader = setup
    holder = _Holder()
    model.train()
    for batch in loader:
        outputs = model.train_step(batch, optimizer)
        if keep:
            holder.outputs = outputs
        if work is not None:
            work()
        timed_step(optimizer, outputs["loss"], times)
        if work is not None:
            work()


class TimedOptimizerHook(OptimizerHook):
    """OptimizerHook for one optimizer and a tensor loss, its three torch calls timed."""

    def __init__(self, times: list[float]) -> None:
        super().__init__()
        self.times = times

    def after_train_iter(self, runner) -> None:
        """Zero, backward and step, as ``OptimizerHook`` does, between two stamps."""
        timed_step(runner.optimizer, runner.outputs["loss"], self.times)


class HandEpochFirst(Hook):
    """Run one hand-loop epoch before each runner epoch (the two interleaved)."""

    def __init__(self, times: list[float], keep: bool) -> None:
        self.setup, self.times, self.keep = make_setup(), times, keep

    def before_train_epoch(self, runner) -> None:
        """Train and time a hand-loop epoch."""
        hand_epoch(self.setup, self.times, None, self.keep)


class ReleaseOutputs(Hook):
    """Drop ``runner.outputs`` (the loss and its graph) once the iteration's hooks ran."""

    def after_train_iter(self, runner) -> None:
        """Release the outputs."""
        runner.outputs = None


SETTINGS = {
    "optimizer hook only": {},
    "hand loop keeps outputs too": {"keep": True},
    "runner releases outputs": {"release": True},
    "MMDataParallel": {"wrap": True},
    "default hooks": {"hooks": True},
    "MMDataParallel + default hooks": {"wrap": True, "hooks": True},
}


def runner_epochs(epochs: int, results: tuple[list, list], wrap=False, hooks=False, **how) -> None:
    """Train ``epochs`` runner epochs, each after a hand-loop epoch; both steps timed."""
    model, optimizer, loader = make_setup()
    logger = logging.getLogger("step_warmth")
    logger.setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        runner = EpochBasedRunner(
            MMDataParallel(model, device_ids=[-1]) if wrap else model,
            optimizer=optimizer,
            work_dir=tmp,
            logger=logger,
            max_epochs=epochs,
        )
        if hooks:
            log_config = dict(interval=50, hooks=[dict(type="TextLoggerHook")])
            runner.register_training_hooks(None, log_config=log_config)
        runner.register_hook(TimedOptimizerHook(results[1]), priority="ABOVE_NORMAL")
        runner.register_hook(HandEpochFirst(results[0], how.get("keep", False)), "HIGHEST")
        if how.get("release"):
            runner.register_hook(ReleaseOutputs(), priority="LOWEST")
        runner.run([loader], [("train", 1)])


_SCRATCH: dict[str, list] = {}


def python_work(units: int) -> Callable[[], None]:
    """Unrelated interpreter work (about 25 bytecodes, 0.3 µs, per unit on this machine)."""

    class Box:
        pass

    box = Box()

    def work() -> None:
        for k in range(units):
            record = {"epoch": k, "iter": k + 1, "inner_iter": k + 2}
            box.record, box.k = record, k
            _SCRATCH.setdefault(f"key{k % 4}", []).append(float(k))
            isinstance(box.record, dict)
        if len(_SCRATCH["key0"]) > 64:
            _SCRATCH.clear()

    return work


def summary(times: list[float]) -> tuple[float, float]:
    """10th percentile and median, in µs."""
    cuts = statistics.quantiles(times, n=20)
    return cuts[1] * 1e6, cuts[9] * 1e6


def main() -> None:
    """Measure and print both parts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(1)
    names = list(SETTINGS)
    results = {name: ([], []) for name in names}
    for name in names:  # warm-up
        runner_epochs(2, ([], []), **SETTINGS[name])
    for i in range(args.repeats):
        for name in names if i % 2 == 0 else names[::-1]:
            runner_epochs(args.epochs, results[name], **SETTINGS[name])
    print("torch zero_grad+backward+step, µs: hand loop / runner (runner - hand), p10 and median")
    for name in names:
        (hand10, hand50), (run10, run50) = map(summary, results[name])
        print(
            f"  {name:32s} p10 {hand10:6.1f} / {run10:6.1f} ({run10 - hand10:+.1f})   "
            f"median {hand50:6.1f} / {run50:6.1f} ({run50 - hand50:+.1f})"
        )
    units = [0, 2, 10, 25]
    setups = {n: make_setup() for n in units}
    works = {n: python_work(n) if n else None for n in units}
    times: dict[int, list[float]] = {n: [] for n in units}
    for i in range(args.repeats * args.epochs * 4):
        for n in units if i % 2 == 0 else units[::-1]:
            hand_epoch(setups[n], times[n], works[n], keep=False)
    unit_s = min(timeit_work(works[n], n) for n in units[1:])
    print(
        f"hand loop alone, unrelated Python work before and after each step ({unit_s:.1f} µs/unit):"
    )
    for n in units:
        low, mid = summary(times[n])
        print(f"  {2 * n:3d} units per iteration: step p10 {low:6.1f}, median {mid:6.1f} µs")


def timeit_work(work: Callable[[], None], units: int) -> float:
    """µs per unit of ``work`` (best of a few)."""
    best = float("inf")
    for _ in range(200):
        start = clock()
        work()
        best = min(best, clock() - start)
    return best / units * 1e6


if __name__ == "__main__":
    main()
