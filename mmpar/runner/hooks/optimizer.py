"""Optimizer hooks: backward, gradient clipping and optimizer step after each train step.

``OptimizerHook`` is the plain one; ``GradientCumulativeOptimizerHook`` steps every N
iterations; ``Fp16OptimizerHook`` runs ``train_step`` under ``torch.autocast`` (fp16 + a
GradScaler on CUDA, bf16 without a scaler on CPU); ``GradientCumulativeFp16OptimizerHook``
does both.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from typing import Any, Union

import torch
from torch.nn.utils import clip_grad_norm_
from torch.optim import Optimizer

# IS_NPU_AVAILABLE, TORCH_VERSION, digit_version, allreduce_grads and LossScaler: mmcv's
# module imports them too, and projects import them from here.
from mmpar.utils import IS_NPU_AVAILABLE as IS_NPU_AVAILABLE
from mmpar.utils import TORCH_VERSION as TORCH_VERSION
from mmpar.utils import digit_version as digit_version
from mmpar.utils.compat_errors import CheckTypeError, CheckValueError
from mmpar.utils.dist import allreduce_grads as allreduce_grads
from mmpar.utils.parrots_wrapper import _BatchNorm

from ..fp16_utils import LossScaler as LossScaler
from ..fp16_utils import autocast_dtype, wrap_fp16_model
from ..runner_protocol import RunnerLike
from .hook import HOOKS, Hook
from .logger.base import LoggerHook


def _optimizers(runner: RunnerLike) -> dict[str, Optimizer]:
    """The runner's optimizer(s) as a name → optimizer dict."""
    optimizer = runner.optimizer
    if optimizer is None:
        raise RuntimeError("the optimizer hook needs runner.optimizer, but the runner has none")
    return optimizer if isinstance(optimizer, dict) else {"": optimizer}


def _runner_logger(runner: RunnerLike) -> logging.Logger:
    return getattr(runner, "logger", None) or logging.getLogger("mmpar")


def _loss(runner: RunnerLike) -> torch.Tensor:
    loss = runner.outputs.get("loss") if isinstance(runner.outputs, dict) else None
    if not isinstance(loss, torch.Tensor):
        raise TypeError(
            f'runner.outputs["loss"] must be a tensor to back-propagate, got {type(loss).__name__}'
        )
    return loss


@HOOKS.register_module()
class OptimizerHook(Hook):
    """Zero the gradients, back-propagate ``outputs['loss']``, clip, and step.

    A dict of optimizers (GANs, multi-part models) is supported: the loss is back-propagated
    once and every optimizer steps.

    A train step that returns no ``loss`` (a model that steps its own optimizers inside
    ``train_step``, as mmcv allows) is left alone: the hook skips backward and the step for
    that iteration and says why once in the log.

    Args:
        grad_clip: Keyword arguments of ``torch.nn.utils.clip_grad_norm_`` (e.g.
            ``dict(max_norm=35, norm_type=2)``); the norm before clipping is logged as
            ``grad_norm``. None disables clipping.
        detect_anomalous_params: Log the parameters that get no gradient from the loss
            (slow; for debugging DDP "unused parameters" errors).

    The loss is ``runner.outputs['loss']``.
    What it may use of the runner: :class:`~mmpar.runner.runner_protocol.RunnerLike`.
    """

    def __init__(
        self, grad_clip: dict | None = None, detect_anomalous_params: bool = False
    ) -> None:
        if grad_clip is not None and not isinstance(grad_clip, dict):
            raise TypeError(
                f"grad_clip must be a dict of clip_grad_norm_ arguments (e.g. dict(max_norm=35)) "
                f"or None, but got {type(grad_clip).__name__}"
            )
        self.grad_clip = grad_clip
        self.detect_anomalous_params = detect_anomalous_params

    def clip_grads(self, params: Any) -> torch.Tensor | None:
        """Clip the gradients of ``params`` in place; return the total norm (None if no grads)."""
        params = [p for p in params if p.requires_grad and p.grad is not None]
        if not params:
            return None
        return clip_grad_norm_(params, **self.grad_clip)

    def _clip_and_log(self, runner: RunnerLike) -> None:
        if self.grad_clip is None:
            return
        grad_norm = self.clip_grads(runner.model.parameters())
        if grad_norm is not None:
            runner.log_buffer.update(
                {"grad_norm": float(grad_norm)}, runner.outputs.get("num_samples", 1)
            )

    def _train_loss(self, runner: RunnerLike) -> torch.Tensor | None:
        """``outputs['loss']``; None (said once in the log) when the train step returned none."""
        outputs = runner.outputs
        if isinstance(outputs, dict) and "loss" not in outputs:
            # getattr: mmcv-style subclasses may override __init__ without calling ours.
            if not getattr(self, "_told_no_loss", False):
                self._told_no_loss = True
                _runner_logger(runner).warning(
                    '%s: %s.train_step() returned no "loss" (its keys: %s), so this hook skips '
                    "backward and the optimizer step for such iterations: the model steps its own "
                    "optimizers. Set optimizer_config=None to drop the hook.",
                    type(self).__name__,
                    getattr(runner, "model_name", "the model"),
                    sorted(outputs),
                )
            return None
        return _loss(runner)

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Zero the gradients, back-propagate, clip and step (nothing if there is no loss).

        Subclasses change ``_backward`` (e.g. scale the loss) and ``_clip_and_step``.
        """
        loss = self._train_loss(runner)
        if loss is None:
            return
        optimizers = _optimizers(runner)
        for optim in optimizers.values():
            optim.zero_grad()
        if self.detect_anomalous_params:
            self.detect_anomalous_parameters(loss, runner)
        self._backward(runner, loss)
        self._clip_and_step(runner, optimizers)

    def _backward(self, runner: RunnerLike, loss: torch.Tensor) -> None:
        """Back-propagate ``loss`` (subclasses scale it first)."""
        loss.backward()

    def _clip_and_step(self, runner: RunnerLike, optimizers: dict[str, Optimizer]) -> None:
        """Clip the accumulated gradients (if asked) and step every optimizer."""
        self._clip_and_log(runner)
        for optim in optimizers.values():
            optim.step()

    def detect_anomalous_parameters(self, loss: torch.Tensor, runner: RunnerLike) -> list[str]:
        """Log and return the names of trainable parameters the loss does not depend on."""
        reached = set()
        seen = set()
        stack = [loss.grad_fn]
        while stack:
            fn = stack.pop()
            if fn is None or fn in seen:
                continue
            seen.add(fn)
            variable = getattr(fn, "variable", None)  # AccumulateGrad nodes hold the leaf
            if variable is not None:
                reached.add(id(variable))
            stack.extend(next_fn for next_fn, _ in fn.next_functions)
        logger = _runner_logger(runner)
        unused = []
        for name, param in runner.model.named_parameters():
            if param.requires_grad and id(param) not in reached:
                unused.append(name)
                # log(level=, msg=) as mmcv: loggers that only provide log() keep working.
                logger.log(
                    level=logging.ERROR,
                    msg=f"{name} with shape {tuple(param.shape)} is not in the computational "
                    "graph of the loss",
                )
        return unused


@HOOKS.register_module()
class GradientCumulativeOptimizerHook(OptimizerHook):
    """Accumulate gradients over ``cumulative_iters`` iterations before each step.

    The loss is divided by the number of iterations in its window, so the step uses the mean
    gradient. Windows restart at each epoch (epoch-based runners) and a step is also made at
    the end of the epoch and of training; the last, shorter window of an epoch (or of
    training) divides by its own length. Resuming in the middle of a window loses that
    window's partial gradients: save checkpoints at multiples of ``cumulative_iters``.

    Args:
        cumulative_iters: Iterations per optimizer step.
        **kwargs: :class:`OptimizerHook` arguments.
    """

    def __init__(self, cumulative_iters: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(cumulative_iters, bool) or not isinstance(cumulative_iters, int):
            raise CheckTypeError(f"cumulative_iters must be an int, got {type(cumulative_iters)}")
        if cumulative_iters <= 0:
            raise CheckValueError(f"cumulative_iters must be positive, got {cumulative_iters}")
        self.cumulative_iters = cumulative_iters

    def has_batch_norm(self, module: torch.nn.Module) -> bool:
        """Whether ``module`` is or contains a batch norm layer (mmcv's ``_BatchNorm`` family)."""
        return any(isinstance(m, _BatchNorm) for m in module.modules())

    def before_run(self, runner: RunnerLike) -> None:
        """Start from zero gradients; warn about settings that change the maths."""
        for optim in _optimizers(runner).values():
            optim.zero_grad()
        if self.cumulative_iters > 1 and self.has_batch_norm(runner.model):
            runner.logger.warning(
                "GradientCumulativeOptimizerHook: BatchNorm statistics still use the per-step "
                "batch, so results differ from training with the larger batch"
            )
        super().before_run(runner)  # the fp16 variant's set-up, next in its MRO

    def _window(self, runner: RunnerLike) -> tuple[int, int]:
        """Return (position, total) of the iteration that just ran within its horizon."""
        if runner.max_epochs is not None and runner.data_loader is not None:
            return runner.inner_iter, len(runner.data_loader)
        return runner.iter, runner.max_iters

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Back-propagate the scaled loss; step at the end of each window (no loss: nothing)."""
        loss = self._train_loss(runner)
        if loss is None:
            return
        n = self.cumulative_iters
        pos, total = self._window(runner)
        remainder = total % n
        divisor = n if pos < total - remainder else remainder
        self._backward(runner, loss / divisor)
        if (pos + 1) % n == 0 or pos + 1 == total:
            optimizers = _optimizers(runner)
            self._clip_and_step(runner, optimizers)
            for optim in optimizers.values():
                optim.zero_grad()


def _make_grad_scaler(loss_scale: Union[str, float, dict], device_type: str = "cuda") -> Any:
    kwargs: dict = {}
    if isinstance(loss_scale, dict):
        kwargs = dict(loss_scale)
    elif _is_number(loss_scale):
        kwargs = {"init_scale": float(loss_scale)}
    if hasattr(torch.amp, "GradScaler"):  # torch >= 2.3
        return torch.amp.GradScaler(device_type, **kwargs)
    return torch.cuda.amp.GradScaler(**kwargs)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _compute_device_type(model: Any) -> str:
    """The device type the model computes on: the wrapper's, else its parameters'.

    A wrapper that offloads parameters to the CPU (``MMFullyShardedDataParallel`` with
    ``cpu_offload=True``) still computes on CUDA; it says so in ``device_type``.
    """
    device_type = getattr(model, "device_type", None)
    if isinstance(device_type, str):
        return device_type
    param = next(model.parameters(), None)
    return param.device.type if param is not None else "cpu"


def _has_grads(optimizer: Optimizer) -> bool:
    return any(p.grad is not None for group in optimizer.param_groups for p in group["params"])


@HOOKS.register_module()
class Fp16OptimizerHook(OptimizerHook):
    """Mixed precision with ``torch.autocast``: fp16 + GradScaler on CUDA, bf16 on CPU.

    ``before_run`` calls :func:`~mmpar.runner.fp16_utils.wrap_fp16_model` (so methods
    decorated with ``auto_fp16``/``force_fp32`` switch on) and picks the device from the
    wrapper's ``device_type`` (else the model's parameters). The hook provides
    ``train_step_context(runner)``; the runner enters that context around
    ``model.train_step``, so the forward pass runs under autocast while backward and the
    optimizer step (here, in ``after_train_iter``) run outside it. On CUDA the loss is scaled by
    a ``torch.amp.GradScaler``: a step whose gradients overflow is skipped and the scale backs
    off. The scaler state is checkpointed (``state_dict``) and, as in mmcv, mirrored in
    ``runner.meta['fp16']['loss_scaler']``. On CPU, bf16 needs no scaler and ``loss_scale`` is
    ignored.

    Args:
        grad_clip: As :class:`OptimizerHook` (gradients are unscaled before clipping).
        coalesce: Accepted for mmcv 1.x compatibility; unused (DDP reduces gradients).
        bucket_size_mb: Accepted for mmcv 1.x compatibility; unused.
        loss_scale: ``'dynamic'``, a number for a static scale, or ``GradScaler`` kwargs
            (``init_scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval``).
            The default is mmcv's: a static scale of 512.
        distributed: Accepted for mmcv 1.x compatibility; unused.

    Raises:
        ValueError: ``loss_scale`` is none of the above.
    """

    def __init__(
        self,
        grad_clip: dict | None = None,
        coalesce: bool = True,
        bucket_size_mb: int = -1,
        loss_scale: Union[str, float, dict] = 512.0,
        distributed: bool = True,
    ) -> None:
        super().__init__(grad_clip=grad_clip)
        if not (loss_scale == "dynamic" or isinstance(loss_scale, dict) or _is_number(loss_scale)):
            raise CheckValueError(
                f"loss_scale must be 'dynamic', a number (static scale) or a dict of GradScaler "
                f"arguments, but got {loss_scale!r}"
            )
        self.coalesce = coalesce
        self.bucket_size_mb = bucket_size_mb
        self.distributed = distributed
        self.loss_scale = loss_scale
        self.loss_scaler: Any = None
        self.device_type: str | None = None
        self.dtype: torch.dtype | None = None
        self._pending_scaler_state: dict | None = None
        self._loggers: list[LoggerHook] = []
        self._runner: Any = None

    def before_run(self, runner: RunnerLike) -> None:
        """Enable fp16 in the model; pick the autocast device/dtype; build the scaler."""
        wrap_fp16_model(runner.model)
        device_type = _compute_device_type(runner.model)
        self.device_type, self.dtype = device_type, autocast_dtype(device_type)
        if self.dtype != torch.float16:  # bf16 has float32's range: nothing to scale
            self.loss_scaler = None
            return
        self.loss_scaler = _make_grad_scaler(self.loss_scale, device_type)
        self._loggers = [hook for hook in runner.hooks if isinstance(hook, LoggerHook)]
        # mmcv mirrored the scaler in meta['fp16'] every step (two host syncs); checkpoints
        # are what read it, so it is refreshed in state_dict(), which a save calls first.
        self._runner = weakref.ref(runner)
        meta = runner.meta if isinstance(getattr(runner, "meta", None), dict) else {}
        state = self._pending_scaler_state or meta.get("fp16", {}).get("loss_scaler")
        if state is not None:  # our resume state first, else an mmcv checkpoint's meta
            self.loss_scaler.load_state_dict(state)
        self._pending_scaler_state = None

    def train_step_context(self, runner: RunnerLike) -> contextlib.AbstractContextManager:
        """Autocast context the runner enters around ``train_step``."""
        if self.device_type is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device_type, dtype=self.dtype)

    def _backward(self, runner: RunnerLike, loss: torch.Tensor) -> None:
        """Back-propagate the loss, scaled when there is a scaler."""
        (self.loss_scaler.scale(loss) if self.loss_scaler is not None else loss).backward()

    def _clip_and_step(self, runner: RunnerLike, optimizers: dict[str, Optimizer]) -> None:
        """Unscale + clip, step (skipped on overflow), update the scale and log it."""
        if self.loss_scaler is None:
            super()._clip_and_step(runner, optimizers)
            return
        # GradScaler refuses an optimizer none of whose parameters got a gradient (a GAN's
        # idle part): such an optimizer has nothing to step this iteration.
        optimizers = {name: optim for name, optim in optimizers.items() if _has_grads(optim)}
        if not optimizers:
            return
        if self.grad_clip is not None:
            for optim in optimizers.values():
                self.loss_scaler.unscale_(optim)
            self._clip_and_log(runner)
        for optim in optimizers.values():
            self.loss_scaler.step(optim)  # skipped when gradients overflowed
        if _is_number(self.loss_scale):
            self.loss_scaler.update(float(self.loss_scale))  # static scale
        else:
            self.loss_scaler.update()

    def _log_loss_scale(self, runner: RunnerLike) -> None:
        """Put the scale into the record the loggers write this iteration, if they write one.

        Reading the scale syncs with the GPU, so it is read once per record, not per step,
        and placed in the averaged output directly (averaging a value sampled once per
        interval over the last ``interval`` entries would mix in old intervals).
        """
        if self.loss_scaler is None or "loss" not in runner.outputs:
            return  # nothing scaled this iteration
        if not any(h.record_due(runner) for h in self._loggers):
            return
        runner.log_buffer.output["loss_scale"] = float(self.loss_scaler.get_scale())

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Backward (scaled), unscale + clip, step, and log the scale when a record is due."""
        super().after_train_iter(runner)
        self._log_loss_scale(runner)

    def state_dict(self) -> dict:
        """The GradScaler state (empty on CPU); also mirrored in ``runner.meta`` as in mmcv."""
        if self.loss_scaler is not None:
            state = self.loss_scaler.state_dict()
            runner = self._runner() if self._runner is not None else None
            if runner is not None and isinstance(getattr(runner, "meta", None), dict):
                runner.meta.setdefault("fp16", {})["loss_scaler"] = state
            return {"loss_scaler": state}
        if self._pending_scaler_state is not None:
            return {"loss_scaler": self._pending_scaler_state}
        return {}

    def load_state_dict(self, state: dict) -> None:
        """Restore the GradScaler state (kept until ``before_run`` builds the scaler)."""
        scaler_state = state.get("loss_scaler")
        if scaler_state is None:
            return
        if self.loss_scaler is not None:
            self.loss_scaler.load_state_dict(scaler_state)
        else:
            self._pending_scaler_state = scaler_state


@HOOKS.register_module()
class GradientCumulativeFp16OptimizerHook(GradientCumulativeOptimizerHook, Fp16OptimizerHook):
    """Mixed precision (as :class:`Fp16OptimizerHook`) with gradient accumulation.

    Gradients are accumulated over ``cumulative_iters`` iterations as in
    :class:`GradientCumulativeOptimizerHook`.
    Each iteration back-propagates its (scaled) share of the loss; at the end of a window the
    gradients are unscaled, clipped, the optimizer steps (unless they overflowed) and the
    scale is updated.

    Args:
        cumulative_iters: Iterations per optimizer step.
        **kwargs: :class:`Fp16OptimizerHook` arguments (``grad_clip``, ``loss_scale``, ...).
    """

    def after_train_iter(self, runner: RunnerLike) -> None:
        """Accumulate (scaled); at a window's end unscale, clip and step; log the scale."""
        GradientCumulativeOptimizerHook.after_train_iter(self, runner)
        self._log_loss_scale(runner)
