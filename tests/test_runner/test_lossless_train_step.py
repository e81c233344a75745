"""A train_step that steps its own optimizers and returns no loss (a GAN), as mmcv 1.7.2 allows.

One tiny GAN (generator + discriminator, a dict of two Adam optimizers) trains under
EpochBasedRunner and IterBasedRunner, with ``optimizer_config=None`` and with an OptimizerHook
configured. Each of the four runs is done once (module fixture): uninterrupted, then again
resumed from its middle checkpoint; the assertions read those runs.
"""

import json
import logging

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from helpers.logger_runner import ListHandler
from torch.utils.data import DataLoader, TensorDataset

from mmpar.runner import EpochBasedRunner, IterBasedRunner, OptimizerHook

EPOCHS, ITERS_PER_EPOCH = 2, 4


class TinyGAN(nn.Module):
    """Steps the discriminator, then the generator, inside ``train_step``; returns no loss."""

    def __init__(self):
        super().__init__()
        self.generator = nn.Linear(2, 2)
        self.discriminator = nn.Linear(2, 1)

    def _losses(self, real, noise):
        fake = self.generator(noise)
        loss_d = (
            F.softplus(-self.discriminator(real)).mean()
            + F.softplus(self.discriminator(fake.detach())).mean()
        )
        return fake, loss_d

    def train_step(self, data_batch, optimizer, **kwargs):
        (real,) = data_batch
        # Noise from the global RNG: part of what resume must restore.
        fake, loss_d = self._losses(real, torch.randn(len(real), 2))
        optimizer["discriminator"].zero_grad()
        loss_d.backward()
        optimizer["discriminator"].step()
        optimizer["generator"].zero_grad()
        loss_g = F.softplus(-self.discriminator(fake)).mean()
        loss_g.backward()
        optimizer["generator"].step()
        log_vars = {"loss_d": loss_d.item(), "loss_g": loss_g.item()}
        return {"log_vars": log_vars, "num_samples": len(real)}

    def val_step(self, data_batch, optimizer=None, **kwargs):
        (real,) = data_batch
        # Fixed noise, for the same reason as the val loader's own generator (see _loaders).
        _, loss_d = self._losses(real, real.flip(1))
        return {"log_vars": {"val_loss_d": loss_d.item()}, "num_samples": len(real)}


def _log_records(work_dir):
    (log,) = work_dir.glob("*.log.json")
    return [json.loads(line) for line in log.read_text().splitlines()]


def _loader(**kwargs):
    x = torch.randn(ITERS_PER_EPOCH * 2, 2, generator=torch.Generator().manual_seed(3)) + 2.0
    return DataLoader(TensorDataset(x), batch_size=2, **kwargs)


def _loaders():
    # The val loader seeds its iterators from its own generator: a val phase after a checkpoint
    # then draws nothing from the global RNG that a resumed run (which skips it) would not.
    return [_loader(), _loader(generator=torch.Generator())]


def _runner(runner_cls, work_dir, optimizer_config, logger, seed):
    torch.manual_seed(seed)
    model = TinyGAN()
    optimizers = {
        "generator": torch.optim.Adam(model.generator.parameters(), lr=0.01),
        "discriminator": torch.optim.Adam(model.discriminator.parameters(), lr=0.02),
    }
    by_epoch = runner_cls is EpochBasedRunner
    limit = {"max_epochs": EPOCHS} if by_epoch else {"max_iters": EPOCHS * ITERS_PER_EPOCH}
    runner = runner_cls(model, optimizer=optimizers, work_dir=str(work_dir), logger=logger, **limit)
    runner.register_training_hooks(
        lr_config=None,
        optimizer_config=optimizer_config,
        checkpoint_config={"interval": 1 if by_epoch else ITERS_PER_EPOCH},
        log_config={"interval": 2, "hooks": [{"type": "TextLoggerHook"}]},
        nan_guard_config={"type": "NanGuardHook"},
    )
    return runner


def _workflow(runner_cls):
    # Epoch runner: one val epoch after each train epoch; iter runner: 4 train, 1 val.
    if runner_cls is EpochBasedRunner:
        return [("train", 1), ("val", 1)]
    return [("train", ITERS_PER_EPOCH), ("val", 1)]


CASES = {
    "epoch-no-hook": (EpochBasedRunner, None),
    "epoch-hook": (EpochBasedRunner, {}),
    "iter-no-hook": (IterBasedRunner, None),
    "iter-hook": (IterBasedRunner, {}),
}
MIDDLE = {EpochBasedRunner: "epoch_1.pth", IterBasedRunner: f"iter_{ITERS_PER_EPOCH}.pth"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Per case: the uninterrupted run (weights, log lines, work dir) and the resumed weights."""
    results = {}
    for name, (runner_cls, optimizer_config) in CASES.items():
        logger = logging.getLogger(f"mmpar_test_lossless.{name}")
        logger.setLevel(logging.INFO)
        handler = ListHandler()
        logger.addHandler(handler)
        full_dir = tmp_path_factory.mktemp(name)
        full = _runner(runner_cls, full_dir, optimizer_config, logger, seed=0)
        full.run(_loaders(), _workflow(runner_cls))
        logger.removeHandler(handler)

        resumed_dir = tmp_path_factory.mktemp(f"{name}-resumed")
        resumed = _runner(runner_cls, resumed_dir, optimizer_config, logger, seed=1)
        resumed.resume(str(full_dir / MIDDLE[runner_cls]))
        resumed.run(_loaders(), _workflow(runner_cls))
        results[name] = {
            "runner": full,
            "lines": handler.lines,
            "work_dir": full_dir,
            "weights": full.model.state_dict(),
            "resumed_weights": resumed.model.state_dict(),
        }
    return results


@pytest.mark.parametrize("name", CASES)
def test_trains_and_logs_log_vars(runs, name):
    run = runs[name]
    records = [r for r in _log_records(run["work_dir"]) if "mode" in r]
    train = [r for r in records if r["mode"] == "train"]
    val = [r for r in records if r["mode"] == "val"]
    assert len(train) == EPOCHS * ITERS_PER_EPOCH // 2  # interval 2
    assert all({"loss_d", "loss_g"} <= set(r) for r in train)
    assert all(set(r["lr"]) == {"generator", "discriminator"} for r in train)
    if name.startswith("epoch"):  # mmcv's iteration runner logs no val records
        assert len(val) == EPOCHS and all("val_loss_d" in r for r in val)
    text = [line for line in run["lines"] if "loss_g: " in line]
    assert len(text) == len(train)
    assert all("lr_generator: 1.000e-02" in line for line in text)


@pytest.mark.parametrize("name", CASES)
def test_checkpoint_holds_both_optimizers(runs, name):
    runner_cls = CASES[name][0]
    ckpt = torch.load(runs[name]["work_dir"] / MIDDLE[runner_cls], weights_only=False)
    assert set(ckpt["optimizer"]) == {"generator", "discriminator"}
    for state in ckpt["optimizer"].values():
        # Adam's step counters: the model stepped each optimizer once per iteration.
        steps = {float(s["step"]) for s in state["state"].values()}
        assert steps == {float(ITERS_PER_EPOCH)}


@pytest.mark.parametrize("name", CASES)
def test_resume_continues_exactly(runs, name):
    full, resumed = runs[name]["weights"], runs[name]["resumed_weights"]
    assert full.keys() == resumed.keys()
    for key in full:
        assert torch.equal(full[key], resumed[key]), key


@pytest.mark.parametrize("runner_kind", ["epoch", "iter"])
def test_an_optimizer_hook_skips_the_step_and_says_so_once(runs, runner_kind):
    with_hook, without = runs[f"{runner_kind}-hook"], runs[f"{runner_kind}-no-hook"]
    assert any(isinstance(h, OptimizerHook) for h in with_hook["runner"].hooks)
    # The hook did nothing: the weights are those of the run without it.
    for key, value in without["weights"].items():
        assert torch.equal(with_hook["weights"][key], value), key
    said = [line for line in with_hook["lines"] if 'returned no "loss"' in line]
    assert len(said) == 1
    assert "TinyGAN.train_step()" in said[0] and "optimizer_config=None" in said[0]
    assert not any('returned no "loss"' in line for line in without["lines"])


def test_nan_guard_checks_log_vars_without_a_loss(tmp_path):
    class NanGAN(TinyGAN):
        def train_step(self, data_batch, optimizer, **kwargs):
            outputs = super().train_step(data_batch, optimizer)
            outputs["log_vars"]["loss_g"] = float("nan")
            return outputs

    runner = _runner(EpochBasedRunner, tmp_path, None, logging.getLogger("mmpar_test"), seed=0)
    runner.model = NanGAN()
    with pytest.raises(FloatingPointError, match="loss_g=nan"):
        runner.run([_loader()], [("train", 1)])


def test_dict_of_optimizer_configs_builds_one_per_submodule():
    from mmpar.apis.train import _build_optimizers
    from mmpar.parallel import MMDataParallel
    from mmpar.runner import build_optimizer

    model = MMDataParallel(TinyGAN(), device_ids=None)
    cfg = {"generator": {"type": "Adam", "lr": 0.01}, "discriminator": {"type": "SGD", "lr": 0.1}}
    optimizers = _build_optimizers(build_optimizer, model, cfg)
    assert isinstance(optimizers["generator"], torch.optim.Adam)
    assert isinstance(optimizers["discriminator"], torch.optim.SGD)
    params = optimizers["generator"].param_groups[0]["params"]
    assert [p.data_ptr() for p in params] == [
        p.data_ptr() for p in model.module.generator.parameters()
    ]
    # One config with a type: one optimizer over the whole model, as before.
    single = _build_optimizers(build_optimizer, model, {"type": "SGD", "lr": 0.1})
    assert isinstance(single, torch.optim.SGD)
    with pytest.raises(AttributeError, match=r"optimizer.critic: TinyGAN has no submodule"):
        _build_optimizers(build_optimizer, model, {"critic": {"type": "SGD", "lr": 0.1}})


@pytest.mark.parametrize(
    "optimizer_config",
    [
        {"type": "GradientCumulativeOptimizerHook", "cumulative_iters": 2},
        {"type": "Fp16OptimizerHook"},  # CPU: bf16 autocast around train_step, no scaler
    ],
)
def test_other_optimizer_hooks_skip_too(tmp_path, optimizer_config):
    logger = logging.getLogger(f"mmpar_test_lossless.{optimizer_config['type']}")
    handler = ListHandler()
    logger.addHandler(handler)
    try:
        runner = _runner(EpochBasedRunner, tmp_path, optimizer_config, logger, seed=0)
        runner.run([_loader()], [("train", 1)])
    finally:
        logger.removeHandler(handler)
    assert runner.iter == ITERS_PER_EPOCH * EPOCHS
    said = [line for line in handler.lines if 'returned no "loss"' in line]
    assert len(said) == 1 and said[0].startswith(optimizer_config["type"])
    assert not any("loss_scale" in line for line in handler.lines)
