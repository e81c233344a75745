"""OptimizerHook, gradient accumulation and the fp16 optimizer hooks."""

import logging
import os

import pytest
import torch
import torch.nn as nn

from mmpar.runner import (
    HOOKS,
    Fp16OptimizerHook,
    GradientCumulativeFp16OptimizerHook,
    GradientCumulativeOptimizerHook,
    LoggerHook,
    OptimizerHook,
    auto_fp16,
)
from mmpar.runner.hooks import optimizer as optimizer_hooks
from mmpar.utils import build_from_cfg


def _weights(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


# -------------------------------------------------------------------------- OptimizerHook
def test_optimizer_hook_matches_manual_step(make_runner, make_loader, toy_model):
    manual = type(toy_model)()
    manual.load_state_dict(toy_model.state_dict())
    manual_opt = torch.optim.SGD(manual.parameters(), lr=0.01, momentum=0.9)
    loader = make_loader(12, 4)
    for batch in loader:
        manual_opt.zero_grad()
        manual.train_step(batch, manual_opt)["loss"].backward()
        manual_opt.step()
    runner = make_runner(max_epochs=1)
    runner.register_hook(OptimizerHook(), "ABOVE_NORMAL")
    runner.run([loader], [("train", 1)])
    for k, v in manual.state_dict().items():
        assert torch.equal(toy_model.state_dict()[k], v)


def test_grad_clip_clips_and_logs_grad_norm(make_runner, make_loader, toy_model):
    runner = make_runner(max_epochs=1, lr=1.0)
    runner.register_hook(OptimizerHook(grad_clip=dict(max_norm=1e-3)), "ABOVE_NORMAL")
    before = _weights(toy_model)
    runner.run([make_loader(4, 4)], [("train", 1)])
    assert runner.log_buffer.val_history["grad_norm"][0] > 1e-3  # norm before clipping
    delta = torch.cat([(toy_model.state_dict()[k] - before[k]).flatten() for k in before])
    # One step of lr 1 (momentum has no history yet) with the gradient clipped to norm 1e-3.
    assert delta.norm().item() == pytest.approx(1e-3, rel=1e-3)
    with pytest.raises(TypeError, match="grad_clip must be a dict"):
        OptimizerHook(grad_clip=35)


class ScaledBackward(OptimizerHook):
    """Changes only ``_backward``: the hook's one body must call it."""

    def __init__(self):
        super().__init__()
        self.losses = 0

    def _backward(self, runner, loss):
        self.losses += 1
        (loss * 2).backward()


def test_optimizer_hook_subclass_backward_runs(make_runner, make_loader):
    hook = ScaledBackward()
    runner = make_runner(max_epochs=1)
    runner.register_optimizer_hook(hook)
    runner.run([make_loader(8, 4)], [("train", 1)])
    assert hook.losses == 2


def test_optimizer_hook_names_a_loss_that_is_no_tensor(make_runner, make_loader, toy_model):
    class FloatLoss(type(toy_model)):
        def train_step(self, data_batch, optimizer, **kwargs):
            return {"loss": 1.0, "log_vars": {}, "num_samples": 4}

    runner = make_runner(model=FloatLoss(), max_epochs=1)
    runner.register_optimizer_hook(OptimizerHook())
    with pytest.raises(TypeError, match=r'outputs\["loss"\] must be a tensor.*float'):
        runner.run([make_loader(8, 4)], [("train", 1)])


def test_a_no_grad_tensor_loss_fails_in_backward(make_runner, make_loader, toy_model):
    class Detached(type(toy_model)):
        def train_step(self, data_batch, optimizer, **kwargs):
            return {"loss": torch.tensor(1.0), "log_vars": {}, "num_samples": 4}

    runner = make_runner(model=Detached(), max_epochs=1)
    runner.register_optimizer_hook(OptimizerHook())
    with pytest.raises(RuntimeError, match="does not require grad"):
        runner.run([make_loader(8, 4)], [("train", 1)])


class TwoPart(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.unused = nn.Linear(4, 4), nn.Linear(4, 1), nn.Linear(1, 1)

    def train_step(self, batch, optimizer):
        x, y = batch
        loss = ((self.b(self.a(x)).squeeze(-1) - y) ** 2).mean()
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(x)}


def test_dict_of_optimizers_and_anomalous_params(make_runner, make_loader, test_logger, caplog):
    model = TwoPart()
    opts = {
        "a": torch.optim.SGD(model.a.parameters(), lr=0.1),
        "b": torch.optim.SGD(model.b.parameters(), lr=0.1),
    }
    before = _weights(model)
    runner = make_runner(model=model, optimizer=opts, max_epochs=1)
    runner.register_hook(OptimizerHook(detect_anomalous_params=True), "ABOVE_NORMAL")
    with caplog.at_level(logging.ERROR, logger=test_logger.name):
        runner.run([make_loader(4, 4)], [("train", 1)])
    after = model.state_dict()
    assert not torch.equal(after["a.weight"], before["a.weight"])
    assert not torch.equal(after["b.weight"], before["b.weight"])
    assert "unused.weight" in caplog.text and "a.weight" not in caplog.text


def test_anomalous_params_go_through_logger_log_at_error_level():
    # mmcv calls logger.log(level=ERROR, msg=...): a logger object with only log() works.
    class LogOnly:
        def __init__(self):
            self.calls = []

        def log(self, level, msg):
            self.calls.append((level, msg))

    model = TwoPart()
    runner = type("R", (), {"model": model, "logger": LogOnly()})()
    x, y = torch.randn(2, 4), torch.randn(2)
    loss = model.train_step((x, y), None)["loss"]
    unused = OptimizerHook().detect_anomalous_parameters(loss, runner)
    assert unused == ["unused.weight", "unused.bias"]
    assert [level for level, _ in runner.logger.calls] == [logging.ERROR] * 2
    assert "unused.weight with shape (1, 1)" in runner.logger.calls[0][1]


@pytest.mark.parametrize(
    "module, expected",
    [
        (nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.BatchNorm1d(2))), True),
        (nn.SyncBatchNorm(2), True),
        (nn.BatchNorm3d(2), True),
        (nn.Sequential(nn.Linear(2, 2), nn.InstanceNorm1d(2), nn.LayerNorm(2)), False),
    ],
)
def test_gradient_cumulative_has_batch_norm(module, expected):
    assert GradientCumulativeOptimizerHook(cumulative_iters=2).has_batch_norm(module) is expected


# ------------------------------------------------------------------- gradient accumulation
def test_gradient_cumulative_matches_manual_windows(make_runner, make_loader, toy_model):
    manual = type(toy_model)()
    manual.load_state_dict(toy_model.state_dict())
    opt = torch.optim.SGD(manual.parameters(), lr=0.1)
    loader = make_loader(10, 2)  # 5 batches per epoch: windows of 2, 2 and 1
    for _ in range(2):
        batches = list(loader)
        for window in (batches[0:2], batches[2:4], batches[4:5]):
            opt.zero_grad()
            for batch in window:
                (manual.train_step(batch, opt)["loss"] / len(window)).backward()
            opt.step()
    runner = make_runner(max_epochs=2, optimizer=torch.optim.SGD(toy_model.parameters(), lr=0.1))
    runner.register_hook(GradientCumulativeOptimizerHook(cumulative_iters=2), "ABOVE_NORMAL")
    runner.run([loader], [("train", 1)])
    for k, v in manual.state_dict().items():
        assert torch.allclose(toy_model.state_dict()[k], v, atol=1e-7), k
    with pytest.raises(ValueError, match="positive"):
        GradientCumulativeOptimizerHook(cumulative_iters=0)


# ----------------------------------------------------------------------------------- fp16
class AutocastProbe(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 1)
        self.seen = []

    def train_step(self, batch, optimizer):
        x, y = batch
        out = self.linear(x)
        self.seen.append((torch.is_autocast_enabled("cpu"), out.dtype))
        loss = ((out.float().squeeze(-1) - y) ** 2).mean()
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(x)}


def test_fp16_hook_runs_train_step_under_bf16_autocast_on_cpu(make_runner, make_loader):
    model = AutocastProbe()
    before = _weights(model)
    runner = make_runner(model=model, max_epochs=1)
    hook = Fp16OptimizerHook(grad_clip=dict(max_norm=10))
    runner.register_hook(hook, "ABOVE_NORMAL")
    runner.run([make_loader(8, 4)], [("train", 1)])
    assert model.seen == [(True, torch.bfloat16)] * 2
    assert not torch.is_autocast_enabled("cpu")  # only around train_step
    assert not torch.equal(model.linear.weight, before["linear.weight"])
    assert hook.loss_scaler is None and hook.state_dict() == {}
    with pytest.raises(ValueError, match="loss_scale must be 'dynamic'"):
        Fp16OptimizerHook(loss_scale="auto")


def test_fp16_scaler_state_kept_until_scaler_exists():
    hook = Fp16OptimizerHook()
    state = {"loss_scaler": {"scale": 1024.0, "growth_factor": 2.0}}
    hook.load_state_dict(state)
    assert hook.state_dict() == state


class Fp16Model(nn.Module):
    """mmcv-style model: ``fp16_enabled`` plus an ``auto_fp16`` forward."""

    def __init__(self):
        super().__init__()
        self.fp16_enabled = False
        self.linear = nn.Linear(4, 1)
        self.seen = []

    @auto_fp16(apply_to=("x",))
    def forward(self, x):
        out = self.linear(x)
        self.seen.append(out.dtype)
        return out

    def train_step(self, batch, optimizer):
        x, y = batch
        loss = ((self(x).float().squeeze(-1) - y) ** 2).mean()
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(x)}


def test_fp16_hook_enables_auto_fp16_in_the_model(make_runner, make_loader):
    torch.manual_seed(0)
    model = Fp16Model()
    before = _weights(model)
    runner = make_runner(model=model, max_epochs=1)
    runner.register_hook(Fp16OptimizerHook(), "ABOVE_NORMAL")
    runner.run([make_loader(8, 4)], [("train", 1)])
    assert model.fp16_enabled is True  # wrap_fp16_model ran in before_run
    assert model.seen == [torch.bfloat16] * 2
    assert not torch.equal(model.linear.weight, before["linear.weight"])


def test_fp16_hook_takes_mmcv_arguments_and_is_registered():
    hook = build_from_cfg(
        dict(
            type="Fp16OptimizerHook",
            grad_clip=dict(max_norm=1.0),
            coalesce=False,
            bucket_size_mb=16,
            loss_scale=dict(init_scale=1024.0, growth_interval=10),
            distributed=False,
        ),
        HOOKS,
    )
    assert (hook.coalesce, hook.bucket_size_mb, hook.distributed) == (False, 16, False)
    assert hook.loss_scale == dict(init_scale=1024.0, growth_interval=10)
    cumulative = build_from_cfg(
        dict(type="GradientCumulativeFp16OptimizerHook", cumulative_iters=2, loss_scale=512.0),
        HOOKS,
    )
    assert isinstance(cumulative, Fp16OptimizerHook)
    assert isinstance(cumulative, GradientCumulativeOptimizerHook)
    assert cumulative.cumulative_iters == 2 and cumulative.loss_scale == 512.0
    with pytest.raises(ValueError, match="loss_scale"):
        GradientCumulativeFp16OptimizerHook(cumulative_iters=2, loss_scale="auto")
    with pytest.raises(ValueError, match="positive"):
        GradientCumulativeFp16OptimizerHook(cumulative_iters=0)


class RecordingLogger(LoggerHook):
    """Keeps every record the logger hooks would write."""

    def __init__(self, interval):
        super().__init__(interval=interval)
        self.records = []

    def log(self, runner):
        self.records.append(dict(runner.log_buffer.output))


@pytest.fixture
def cpu_float16(monkeypatch):
    """Make the hook choose float16 + a GradScaler on the CPU (the CUDA code path)."""
    monkeypatch.setattr(optimizer_hooks, "autocast_dtype", lambda device_type: torch.float16)


def test_fp16_grad_scaler_skips_an_overflowing_step_and_backs_off(
    cpu_float16, make_runner, make_loader
):
    model = AutocastProbe()
    before = _weights(model)
    runner = make_runner(model=model, max_epochs=1, meta={})
    hook = Fp16OptimizerHook(loss_scale=dict(init_scale=2.0**127))
    runner.register_hook(hook, "ABOVE_NORMAL")
    runner.run([make_loader(4, 4)], [("train", 1)])
    assert model.seen == [(True, torch.float16)]
    assert isinstance(hook.loss_scaler, torch.amp.GradScaler)
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key  # the inf gradients were not applied
    assert hook.loss_scaler.get_scale() == 2.0**126
    hook.state_dict()  # what a checkpoint save asks for first
    assert runner.meta["fp16"]["loss_scaler"]["scale"] == 2.0**126  # mirrored as in mmcv


def test_fp16_static_loss_scale_trains_and_keeps_the_scale(cpu_float16, make_runner, make_loader):
    model = AutocastProbe()
    before = _weights(model)
    runner = make_runner(model=model, max_epochs=2, meta={})
    hook = Fp16OptimizerHook(loss_scale=512.0, grad_clip=dict(max_norm=10))
    runner.register_hook(hook, "ABOVE_NORMAL")
    logger = RecordingLogger(interval=1)
    runner.register_hook(logger, "VERY_LOW")
    runner.run([make_loader(8, 4)], [("train", 1)])
    assert not torch.equal(model.linear.weight, before["linear.weight"])
    assert [record["loss_scale"] for record in logger.records] == [512.0] * 4
    assert hook.state_dict()["loss_scaler"]["scale"] == 512.0
    assert all("grad_norm" in record for record in logger.records)


def test_gradient_cumulative_fp16_matches_manual_autocast_windows(make_runner, make_loader):
    torch.manual_seed(0)
    model, manual = AutocastProbe(), AutocastProbe()
    manual.load_state_dict(model.state_dict())
    opt = torch.optim.SGD(manual.parameters(), lr=0.1)
    loader = make_loader(10, 2)  # 5 batches: windows of 2, 2 and 1
    batches = list(loader)
    for window in (batches[0:2], batches[2:4], batches[4:5]):
        opt.zero_grad()
        for batch in window:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = manual.train_step(batch, opt)["loss"]
            (loss / len(window)).backward()
        opt.step()
    runner = make_runner(
        model=model, max_epochs=1, optimizer=torch.optim.SGD(model.parameters(), lr=0.1)
    )
    hook = GradientCumulativeFp16OptimizerHook(cumulative_iters=2)
    runner.register_hook(hook, "ABOVE_NORMAL")
    runner.run([loader], [("train", 1)])
    assert model.seen == [(True, torch.bfloat16)] * 5 and hook.loss_scaler is None
    for key, value in manual.state_dict().items():
        assert torch.allclose(model.state_dict()[key], value, atol=1e-6), key


def test_gradient_cumulative_fp16_steps_once_per_window_with_a_scaler(
    cpu_float16, make_runner, make_loader
):
    model = AutocastProbe()
    before = _weights(model)
    runner = make_runner(model=model, max_epochs=1, meta={})
    hook = GradientCumulativeFp16OptimizerHook(
        cumulative_iters=2, loss_scale=512.0, grad_clip=dict(max_norm=10)
    )
    runner.register_hook(hook, "ABOVE_NORMAL")
    logger = RecordingLogger(interval=2)
    runner.register_hook(logger, "VERY_LOW")
    runner.run([make_loader(10, 2)], [("train", 1)])
    assert model.seen == [(True, torch.float16)] * 5
    assert [record["loss_scale"] for record in logger.records] == [512.0] * 2  # iterations 2, 4
    hook.state_dict()
    assert runner.meta["fp16"]["loss_scaler"]["scale"] == 512.0
    assert not torch.equal(model.linear.weight, before["linear.weight"])
    assert all(p.grad is None or not p.grad.any() for p in model.parameters())


def test_fp16_dict_of_optimizers_skips_one_without_gradients(cpu_float16, make_runner, make_loader):
    # A GAN-style iteration: only the "a"/"b" part gets gradients, "unused" has none.
    model = TwoPart()
    opts = {
        "ab": torch.optim.SGD([*model.a.parameters(), *model.b.parameters()], lr=0.1),
        "unused": torch.optim.SGD(model.unused.parameters(), lr=0.1),
    }
    before = _weights(model)
    runner = make_runner(model=model, optimizer=opts, max_epochs=1, meta={})
    runner.register_hook(Fp16OptimizerHook(loss_scale=512.0, grad_clip=dict(max_norm=10)))
    runner.run([make_loader(8, 4)], [("train", 1)])
    after = model.state_dict()
    assert not torch.equal(after["a.weight"], before["a.weight"])
    assert torch.equal(after["unused.weight"], before["unused.weight"])


def test_fp16_loss_scale_syncs_once_per_log_interval(
    cpu_float16, make_runner, make_loader, monkeypatch
):
    syncs = []
    get_scale = torch.amp.GradScaler.get_scale
    growth = torch.amp.GradScaler._get_growth_tracker
    monkeypatch.setattr(
        torch.amp.GradScaler, "get_scale", lambda s: syncs.append("scale") or get_scale(s)
    )
    monkeypatch.setattr(
        torch.amp.GradScaler, "_get_growth_tracker", lambda s: syncs.append("g") or growth(s)
    )
    model = AutocastProbe()
    runner = make_runner(model=model, max_epochs=1, meta={})
    runner.register_hook(Fp16OptimizerHook(loss_scale=512.0), "ABOVE_NORMAL")
    logger = RecordingLogger(interval=3)
    runner.register_hook(logger, "VERY_LOW")
    runner.run([make_loader(24, 4)], [("train", 1)])  # 6 iterations: 2 records
    assert [r["loss_scale"] for r in logger.records] == [512.0, 512.0]
    assert syncs == ["scale", "scale"]
    # mmcv's mirror of the scaler in meta is refreshed when a checkpoint is written.
    runner.save_checkpoint(runner.work_dir, "ckpt.pth")
    ckpt = torch.load(os.path.join(runner.work_dir, "ckpt.pth"), weights_only=False)
    assert ckpt["meta"]["fp16"]["loss_scaler"]["scale"] == 512.0


class OffloadedWrapper(nn.Module):
    """Like MMFullyShardedDataParallel(cpu_offload=True) on CUDA: CPU shards, CUDA compute."""

    device_type = "cuda"

    def __init__(self):
        super().__init__()
        self.module = nn.Linear(4, 1)


class BareRunner:
    def __init__(self, model):
        self.model, self.hooks, self.meta = model, [], {}


def test_fp16_hook_takes_the_autocast_device_from_the_wrapper(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(optimizer_hooks, "_make_grad_scaler", lambda scale, device: device)
    model = OffloadedWrapper()
    assert next(model.parameters()).device.type == "cpu"
    hook = Fp16OptimizerHook()
    hook.before_run(BareRunner(model))
    assert (hook.device_type, hook.dtype, hook.loss_scaler) == ("cuda", torch.float16, "cuda")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_fp16_hook_uses_grad_scaler_on_cuda(make_runner, make_loader):
    model = AutocastProbe().cuda()

    def to_cuda(batch):
        return [t.cuda(non_blocking=True) for t in batch]

    loader = [to_cuda(b) for b in make_loader(8, 4, pin_memory=True)]
    runner = make_runner(model=model, max_epochs=1)
    hook = Fp16OptimizerHook(loss_scale=512.0)
    runner.register_hook(hook, "ABOVE_NORMAL")
    runner.run([loader], [("train", 1)])
    assert hook.loss_scaler is not None
    assert hook.state_dict()["loss_scaler"]["scale"] == 512.0
    assert runner.log_buffer.val_history["loss_scale"][-1] == 512.0
