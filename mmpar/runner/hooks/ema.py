"""EMAHook: an exponential moving average of the model's parameters, swapped in at epoch ends."""

from __future__ import annotations

import torch

from mmpar.parallel import is_fully_sharded

# mmcv 1.7.2's module imports this too; projects import it from here.
from mmpar.parallel import is_module_wrapper as is_module_wrapper
from mmpar.parallel.utils import unwrap_model
from mmpar.utils.compat_errors import CheckValueError
from mmpar.utils.misc import check_int_arg

from ..runner_protocol import RunnerLike
from .hook import HOOKS, Hook


@HOOKS.register_module()
class EMAHook(Hook):
    r"""Keep an exponential moving average (EMA) of the model's parameters.

    Every ``interval`` iterations: :math:`X_{ema} \leftarrow (1 - m_t) X_{ema} + m_t X`, where
    ``m_t = max(m, (warm_up - 1) / (warm_up + t))`` at iteration ``t`` (0-based) and
    ``m = 1 - (1 - momentum) ** interval``. So the EMA follows the weights closely during the
    first ``warm_up`` iterations and then settles at ``momentum`` per iteration.

    Swap semantics (as mmcv): at the end of every training epoch (``after_train_epoch``) the
    EMA values and the live parameters are swapped, so evaluation and checkpoints taken at the
    epoch end see the EMA weights; ``before_train_epoch`` swaps back before training goes on.
    Register it with a higher priority than ``CheckpointHook`` (``NORMAL``) and ``EvalHook``
    (``LOW``), e.g. ``priority='ABOVE_NORMAL'``.

    Storage: unlike mmcv, the EMA copies live in the hook, not as ``ema_*`` buffers of the
    model, so the model's ``state_dict`` stays loadable into a model without the hook. They are
    saved with the hook state (:meth:`state_dict`) together with a flag telling whether the
    model currently holds the EMA weights, so a resume from an epoch-end or a mid-epoch
    checkpoint continues exactly. Only parameters are averaged (not BatchNorm statistics).

    Differences from mmcv 1.x, both bug fixes: mmcv's ``min(momentum, (1 + t) / (warm_up + t))``
    never warms up for momentum below ``1 / warm_up`` (the default), and its
    ``momentum ** interval`` makes the EMA slower, not faster, when updating less often.

    Args:
        momentum: Weight of the current parameters in each per-iteration update, in (0, 1).
        interval: Update every ``interval`` iterations.
        warm_up: Number of iterations over which the effective momentum decays to ``momentum``.
        resume_from: A checkpoint to resume from in ``before_run`` (mmcv compatibility;
            prefer the runner's ``resume_from``).
    """

    def __init__(
        self,
        momentum: float = 0.0002,
        interval: int = 1,
        warm_up: int = 100,
        resume_from: str | None = None,
    ) -> None:
        check_int_arg(interval, "interval", "EMAHook")
        if not 0 < momentum < 1:
            raise CheckValueError(f"EMAHook: momentum must be in (0, 1), but got {momentum}")
        if warm_up < 1:
            raise CheckValueError(f"EMAHook: warm_up must be >= 1, but got {warm_up}")
        self.momentum = momentum
        self.interval = interval
        self.warm_up = warm_up
        self.checkpoint = resume_from
        self._params: dict[str, torch.nn.Parameter] = {}
        self._ema: dict[str, torch.Tensor] = {}
        self._loaded: dict | None = None
        self.swapped = False  # True while the model holds the EMA weights

    def before_run(self, runner: RunnerLike) -> None:
        """Start the EMA from the current weights (or from restored hook state).

        Raises:
            NotImplementedError: The model is sharded (FSDP): each rank would average and
                checkpoint only its own shards.
        """
        if is_fully_sharded(runner.model):
            raise NotImplementedError(
                "EMAHook does not support a sharded model (model_wrapper="
                "MMFullyShardedDataParallel): its averages would hold one rank's shards only and "
                "could not be checkpointed; remove EMAHook or train with MMDistributedDataParallel"
            )
        model = unwrap_model(runner.model)
        self._params = dict(model.named_parameters())
        self._ema = {name: p.detach().clone() for name, p in self._params.items()}
        if self._loaded is not None:
            self._apply_loaded(self._loaded)
            self._loaded = None
        if self.checkpoint is not None:
            runner.resume(self.checkpoint)

    def momentum_at(self, step: int) -> float:
        """Return the effective momentum of an update at iteration ``step`` (0-based)."""
        base = 1.0 - (1.0 - self.momentum) ** self.interval
        return max(base, (self.warm_up - 1) / (self.warm_up + step))

    @torch.no_grad()
    def after_train_iter(self, runner: RunnerLike) -> None:
        """Update the EMA every ``interval`` iterations."""
        step = runner.iter
        if step % self.interval != 0:
            return
        m = self.momentum_at(step)
        for name, param in self._params.items():
            # lerp_: ema += m * (param - ema), i.e. (1 - m) * ema + m * param
            self._ema[name].lerp_(param.detach(), m)

    def after_train_epoch(self, runner: RunnerLike) -> None:
        """Put the EMA weights into the model (for EvalHook and CheckpointHook)."""
        if not self.swapped:
            self._swap()

    def before_train_epoch(self, runner: RunnerLike) -> None:
        """Put the live weights back into the model before training continues."""
        if self.swapped:
            self._swap()

    @torch.no_grad()
    def _swap(self) -> None:
        for name, param in self._params.items():
            tmp = param.detach().clone()
            param.copy_(self._ema[name])
            self._ema[name].copy_(tmp)
        self.swapped = not self.swapped

    # Resumable state ----------------------------------------------------------------------------

    def state_dict(self) -> dict:
        """The averaged (or, while swapped, the live) values and the swap flag."""
        if not self._ema:
            return {}
        return {
            "ema": {name: t.detach().cpu().clone() for name, t in self._ema.items()},
            "swapped": self.swapped,
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict`; before ``before_run`` it is applied there."""
        if not state:
            return
        if not self._params:
            self._loaded = state
            return
        self._apply_loaded(state)

    @torch.no_grad()
    def _apply_loaded(self, state: dict) -> None:
        saved = state["ema"]
        missing = sorted(set(self._params) - set(saved))
        unexpected = sorted(set(saved) - set(self._params))
        if missing or unexpected:
            raise KeyError(
                f"EMAHook state does not match the model: missing {missing[:5]}, unexpected "
                f"{unexpected[:5]}; was the checkpoint made with a different model?"
            )
        for name, tensor in saved.items():
            self._ema[name].copy_(tensor)
        self.swapped = bool(state["swapped"])
