"""Runner overhead: mmpar's runner vs a raw PyTorch loop, mmcv 1.7.2, mmengine and Lightning.

Two steps, CPU, one intra-op thread:

- ``tiny``: a Linear 32->10 classifier, batch 64 (the loop's own cost is most of the step);
  raw loop, mmpar, and, when they can be imported, mmcv 1.7.2's ``EpochBasedRunner``,
  mmengine's ``Runner`` and Lightning's ``Trainer``;
- ``resnet18``: torchvision's ResNet-18 on 32x32 images, batch 32 (a step of tens of
  milliseconds); raw loop and mmpar.

Every framework trains the same model (same seed, data, SGD settings) with its usual training
set-up: mmpar and mmcv with ``MMDataParallel(device_ids=[-1])`` (as their ``tools/train.py``
wrap a model on a machine without GPUs), an optimizer hook, the iteration timer, a text logger
(interval 50) and a checkpoint at the end; mmengine with its default hooks; Lightning with its
defaults less the progress bar and the model summary. Each must end with the raw loop's
weights (same steps).

This machine's speed drifts within seconds (other tenants), so the loops are interleaved: at
the start of each of a framework's epochs, a timing callback (the framework's own hook
mechanism) first trains one raw-loop epoch on its own copy of the model, stamping each
iteration's start; the framework's iterations are then stamped by the same callback at each
iteration's start. An iteration is the time from its start to the next one's (data loading,
hooks, logging and the loop included; the epoch boundaries are not: mmcv sleeps 2 s there,
which is skipped here). The figure per framework is the median over epochs of
``median framework iteration / median raw iteration`` of that epoch and the raw epoch just
before it. Frameworks take turns, round after round. Run::

    PYTHONPATH=. .venv/bin/python benchmarks/runner_overhead.py [--rounds 3] [--epochs 6]
        [--steps tiny resnet18] [--frameworks mmpar ...] [--preemption]
        [--mmcv-dir /work/src/mmcv-1.7.2] [--deps-dir /work/benchdeps]

``--preemption`` registers a PreemptionHook in mmpar's runner, as ``tools/train.py`` does.

The other frameworks are not dependencies of mmpar; they are looked for in ``--deps-dir``
(default ``$MMPAR_BENCH_DEPS``), appended to ``sys.path`` so this venv's torch is used:

    .venv/bin/python -m pip install --target /work/benchdeps --no-deps mmengine lightning \\
        lightning-utilities torchmetrics addict yapf termcolor

mmcv 1.7.2 is imported from its unpacked sdist (``--mmcv-dir``, default ``$MMPAR_BENCH_MMCV``;
``pip download --no-deps --no-binary :all: mmcv==1.7.2`` and unpack it): its pure-Python
runner needs no build (it needs ``addict`` and ``yapf``, from the deps dir). A framework that
cannot be imported is reported as skipped.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
import types
import warnings
from pathlib import Path
from typing import Any, Callable

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

CLASSES = 10
# step: (iterations per epoch, batch, sample shape)
STEPS = {"tiny": (32, 64, (32,)), "resnet18": (6, 32, (3, 32, 32))}


def make_net(step: str) -> nn.Module:
    if step == "tiny":
        return nn.Linear(32, CLASSES)
    import torchvision

    return torchvision.models.resnet18(num_classes=CLASSES)


class Classifier(nn.Module):
    """The step's network with the mmcv-style ``train_step`` every loop here calls."""

    def __init__(self, step: str) -> None:
        super().__init__()
        self.net = make_net(step)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def train_step(self, data_batch: Any, optimizer: Any = None, **kwargs: Any) -> dict:
        """Cross-entropy of one batch, as mmcv-style runners expect it."""
        x, y = data_batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(x)}


def make_setup(step: str = "tiny") -> tuple[Classifier, torch.optim.Optimizer, DataLoader]:
    """The same model, optimizer and data for every loop."""
    iters, batch, shape = STEPS[step]
    torch.manual_seed(0)
    x = torch.randn(batch * iters, *shape)
    y = torch.randint(0, CLASSES, (batch * iters,))
    loader = DataLoader(TensorDataset(x, y), batch_size=batch, shuffle=False)
    model = Classifier(step)
    return model, make_optimizer(model), loader


def make_optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def raw_epoch(model: Classifier, optimizer: Any, loader: DataLoader, stamps: list) -> None:
    """One epoch of the raw loop; ``stamps`` gets each iteration's start (and the end)."""
    model.train()
    for batch in loader:
        stamps.append(time.perf_counter())
        outputs = model.train_step(batch, optimizer)
        optimizer.zero_grad()
        outputs["loss"].backward()
        optimizer.step()
    stamps.append(time.perf_counter())


class Timer:
    """What a framework's timing callback does: a raw epoch first, then stamps."""

    def __init__(self, step: str) -> None:
        self.model, self.optimizer, self.loader = make_setup(step)
        self.raw: list[list[float]] = []
        self.framework: list[list[float]] = []

    def epoch_start(self) -> None:
        """Train and stamp one raw epoch, then open the framework epoch's stamps."""
        self.raw.append([])
        raw_epoch(self.model, self.optimizer, self.loader, self.raw[-1])
        self.framework.append([])

    def iter_start(self) -> None:
        self.framework[-1].append(time.perf_counter())

    def ratios(self) -> list[float]:
        """Per epoch: median framework iteration / median raw iteration."""
        out = []
        for raw, framework in zip(self.raw, self.framework):
            if len(framework) > 2:
                out.append(_median_step(framework) / _median_step(raw))
        return out

    def raw_us(self) -> float:
        return statistics.median(_median_step(s) for s in self.raw) * 1e6


def _median_step(stamps: list[float]) -> float:
    return statistics.median(b - a for a, b in zip(stamps, stamps[1:]))


# ------------------------------------------------------------------------------ frameworks
PREEMPTION = False  # --preemption: mmpar's runner also has a PreemptionHook (tools/train.py's)


def run_mmpar(step: str, epochs: int, work_dir: Path, timer: Timer) -> nn.Module:
    from mmpar.parallel import MMDataParallel
    from mmpar.runner import EpochBasedRunner, Hook, PreemptionHook

    stamp = _mmcv_style_stamp(Hook, timer)
    extra = [PreemptionHook()] if PREEMPTION else []
    return _run_mmcv_style(EpochBasedRunner, MMDataParallel, stamp, step, epochs, work_dir, extra)


def run_mmcv(step: str, epochs: int, work_dir: Path, timer: Timer) -> nn.Module:
    from mmcv.parallel import MMDataParallel
    from mmcv.runner import EpochBasedRunner, Hook, epoch_based_runner

    # mmcv sleeps 2 s at each epoch start, outside the iterations measured: skip the wait.
    epoch_based_runner.time = types.SimpleNamespace(sleep=lambda s: None)

    stamp = _mmcv_style_stamp(Hook, timer)
    return _run_mmcv_style(EpochBasedRunner, MMDataParallel, stamp, step, epochs, work_dir)


def _mmcv_style_stamp(hook_cls: type, timer: Timer) -> Any:
    """The timing hook of an mmcv-style runner (``hook_cls``: its ``Hook``)."""

    class Stamp(hook_cls):  # type: ignore[valid-type, misc]
        def before_train_epoch(self, runner: Any) -> None:
            timer.epoch_start()

        def before_train_iter(self, runner: Any) -> None:
            timer.iter_start()

    return Stamp()


def _run_mmcv_style(
    runner_cls: Any,
    wrapper: Any,
    stamp: Any,
    step: str,
    epochs: int,
    work_dir: Path,
    extra_hooks: tuple | list = (),
) -> nn.Module:
    model, optimizer, loader = make_setup(step)
    logger = logging.getLogger("runner_overhead")
    logger.setLevel(logging.WARNING)  # the text logger's lines are formatted, not printed
    runner = runner_cls(
        wrapper(model, device_ids=[-1]),
        optimizer=optimizer,
        work_dir=str(work_dir),
        logger=logger,
        max_epochs=epochs,
    )
    runner.register_training_hooks(
        lr_config=None,
        optimizer_config={},
        checkpoint_config=dict(interval=epochs),  # once, at the end
        log_config=dict(interval=50, hooks=[dict(type="TextLoggerHook")]),
    )
    runner.register_hook(stamp, priority="HIGHEST")
    for hook in extra_hooks:
        runner.register_hook(hook, priority="LOWEST")
    runner.run([loader], [("train", 1)])
    return model


def run_mmengine(step: str, epochs: int, work_dir: Path, timer: Timer) -> nn.Module:
    from mmengine.hooks import Hook
    from mmengine.model import BaseModel
    from mmengine.runner import Runner

    model, _, loader = make_setup(step)

    class EngineModel(BaseModel):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, x: Any, y: Any, mode: str = "loss") -> Any:
            return {"loss": nn.functional.cross_entropy(self.model(x), y)}

    class Stamp(Hook):
        priority = "VERY_HIGH"

        def before_train_epoch(self, runner: Any) -> None:
            timer.epoch_start()

        def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
            timer.iter_start()

    runner = Runner(
        model=EngineModel(),
        work_dir=str(work_dir),
        train_dataloader=loader,
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01, momentum=0.9)),
        train_cfg=dict(by_epoch=True, max_epochs=epochs),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=50),
            checkpoint=dict(type="CheckpointHook", interval=epochs),
        ),
        custom_hooks=[Stamp()],
        log_level="WARNING",
        randomness=dict(seed=0),
    )
    runner.train()
    return model


def run_lightning(step: str, epochs: int, work_dir: Path, timer: Timer) -> nn.Module:
    import lightning.pytorch as pl

    model, _, loader = make_setup(step)

    class LitModel(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            outputs = self.model.train_step(batch)
            self.log("loss", outputs["log_vars"]["loss"])
            return outputs["loss"]

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return make_optimizer(self.model)

    class Stamp(pl.Callback):
        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            timer.epoch_start()

        def on_train_batch_start(self, trainer: Any, pl_module: Any, *args: Any) -> None:
            timer.iter_start()

    logging.getLogger("lightning").setLevel(logging.ERROR)
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    trainer = pl.Trainer(
        max_epochs=epochs,
        accelerator="cpu",
        devices=1,
        default_root_dir=str(work_dir),
        enable_progress_bar=False,
        enable_model_summary=False,
        log_every_n_steps=50,
        callbacks=[Stamp()],
    )
    trainer.fit(LitModel(), loader)
    return model


FRAMEWORKS: dict[str, Callable] = {
    "mmpar": run_mmpar,
    "mmcv 1.7.2": run_mmcv,
    "mmengine": run_mmengine,
    "lightning": run_lightning,
}
IMPORTS = {"mmpar": "mmpar", "mmcv 1.7.2": "mmcv", "mmengine": "mmengine", "lightning": "lightning"}


def available(name: str) -> str | None:
    """None when the framework imports, else why not."""
    try:
        __import__(IMPORTS[name])
    except Exception as error:  # a missing or broken optional install: report, go on
        return f"{type(error).__name__}: {error}"
    return None


def same_weights(a: nn.Module, b: nn.Module) -> bool:
    return all(torch.allclose(x, y, atol=1e-6) for x, y in zip(a.parameters(), b.parameters()))


def measure(step: str, names: list[str], rounds: int, epochs: int, tmp: Path) -> None:
    """Print each framework's iteration ratio to its interleaved raw loop for ``step``."""
    ratios: dict[str, list[float]] = {name: [] for name in names}
    raw_us: dict[str, list[float]] = {name: [] for name in names}
    for name in names:  # warm-up: imports, first-call costs
        FRAMEWORKS[name](step, 1, tmp / f"warmup-{name}", Timer(step))
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]  # each goes first in turn
        for name in order:
            timer = Timer(step)
            model = FRAMEWORKS[name](step, epochs, tmp / f"{step}-{name}-{r}", timer)
            if not same_weights(model, timer.model):
                print(f"  warning: {name} did not end with the raw loop's weights")
            ratios[name] += timer.ratios()
            raw_us[name].append(timer.raw_us())
    iters, batch, _ = STEPS[step]
    print(f"step {step} (batch {batch}, {iters} iterations per epoch, {epochs} epochs x {rounds}):")
    for name in names:
        raw = statistics.median(raw_us[name])
        print(
            f"  {name:<12} {statistics.median(ratios[name]):.3f} x raw loop "
            f"(median of {len(ratios[name])} epoch pairs; raw {raw:.0f} us/iter; "
            f"quartiles {_quartiles(ratios[name])})"
        )


def _quartiles(values: list[float]) -> str:
    q = statistics.quantiles(values, n=4)
    return f"{q[0]:.3f}-{q[2]:.3f}"


def main() -> None:
    """Parse the options, make the optional frameworks importable, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--steps", nargs="+", choices=sorted(STEPS), default=["tiny", "resnet18"])
    parser.add_argument("--mmcv-dir", default=os.environ.get("MMPAR_BENCH_MMCV"))
    parser.add_argument("--deps-dir", default=os.environ.get("MMPAR_BENCH_DEPS"))
    parser.add_argument(
        "--preemption", action="store_true", help="mmpar's runner also gets a PreemptionHook"
    )
    parser.add_argument(
        "--frameworks", nargs="+", choices=sorted(FRAMEWORKS), default=sorted(FRAMEWORKS)
    )
    args = parser.parse_args()
    global PREEMPTION
    PREEMPTION = args.preemption
    if args.mmcv_dir:
        sys.path.insert(0, args.mmcv_dir)
    if args.deps_dir:
        sys.path.append(args.deps_dir)  # after the venv: its torch and numpy are used
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    names = []
    for name in [n for n in FRAMEWORKS if n in args.frameworks]:
        why = available(name)
        if why is None:
            names.append(name)
        else:
            print(f"{name}: skipped ({why})")
    import mmpar

    print(f"mmpar from {Path(mmpar.__file__).parent}; torch {torch.__version__}")
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for step in args.steps:
            step_names = names if step == "tiny" else ["mmpar"]
            measure(step, step_names, args.rounds, args.epochs, Path(tmp))
    print(
        f"load average (1 min) before/after: {load_before:.2f}/{os.getloadavg()[0]:.2f} on "
        f"{os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
