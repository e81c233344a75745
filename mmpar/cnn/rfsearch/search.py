"""``RFSearchHook``: search the dilation rates of a model's convolutions during training (RF-Next).

See `RF-Next <https://arxiv.org/abs/2206.06637>`_. In ``'search'`` mode, every 3x3-like
``nn.Conv2d`` (an odd kernel > 1 on some axis) is wrapped in a :class:`Conv2dRFSearchOp`; every
``search_interval`` epochs (or iterations) each op moves its dilation to the weighted mean of
its branches and expands new candidates, and the structure found so far is written to
``<work_dir>/local_search_config_step<N>.json``. The ``fixed_*`` modes apply a searched
structure (``rfstructure_file``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

from torch import nn

from mmpar.fileio import load
from mmpar.runner.hooks.hook import HOOKS, Hook
from mmpar.runner.runner_protocol import RunnerLike

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import get_logger as get_logger
from mmpar.utils import print_log

from .operator import BaseConvRFSearchOp, Conv2dRFSearchOp
from .utils import get_single_padding, write_to_json

__all__ = ["RFSearchHook"]

# mmcv's module attribute. Messages go through print_log, which sets the logger up when first
# used: configuring it at import would fix its handlers before the program (or pytest) does.
logger = logging.getLogger("mmpar")

_MODES = ("search", "fixed_single_branch", "fixed_multi_branch")
_SEARCH_OPS = {"Conv2d": Conv2dRFSearchOp}


def _searchable(module: nn.Module) -> bool:
    # Some axis must have an odd kernel larger than 1 for a dilation to matter.
    return any(k > 1 and k % 2 != 0 for k in module.kernel_size[:2])


@HOOKS.register_module()
class RFSearchHook(Hook):
    """Receptive-field search via dilation rates.

    Args:
        mode: ``'search'``, ``'fixed_single_branch'`` or ``'fixed_multi_branch'``.
        config: Holds ``search``: ``step``, ``max_step``, ``search_interval``, ``exp_rate``,
            ``init_alphas``, ``mmin``, ``mmax``, ``num_branches``, ``skip_layer`` (name parts of
            modules left alone, or None). The hook updates it in place (``step`` and the
            ``structure`` found).
        rfstructure_file: JSON written by an earlier search; its ``structure`` is applied.
        by_epoch: Step after every epoch (else after every iteration).
        verbose: Log what is wrapped, estimated and set.

    Call :meth:`init_model` on the model before training (downstream train scripts do).

    Raises:
        AssertionError: An unknown ``mode`` or no ``config``.
    """

    def __init__(
        self,
        mode: str = "search",
        config: dict | None = None,
        rfstructure_file: str | None = None,
        by_epoch: bool = True,
        verbose: bool = True,
    ) -> None:
        assert mode in _MODES, f"mode must be one of {_MODES}, got {mode!r}"
        assert config is not None, "RFSearchHook needs a config with a 'search' dict"
        self.config = config
        self.config["structure"] = {}
        self.verbose = verbose
        if rfstructure_file is not None:
            self.config["structure"] = load(rfstructure_file)["structure"]
        self.mode = mode
        self.num_branches = self.config["search"]["num_branches"]
        self.by_epoch = by_epoch

    def init_model(self, model: nn.Module) -> None:
        """Apply the searched structure and/or wrap the convolutions, as ``mode`` says."""
        if self.verbose:
            print_log("RFSearch init begin.", logger="mmpar")
        if self.mode in ("fixed_single_branch", "fixed_multi_branch") or self.config["structure"]:
            self.set_model(model, search_op="Conv2d")
        if self.mode in ("search", "fixed_multi_branch"):
            self.wrap_model(model, search_op="Conv2d")
        if self.verbose:
            print_log("RFSearch init end.", logger="mmpar")

    def after_train_epoch(self, runner: RunnerLike) -> None:
        """One search step per epoch (``by_epoch``, search mode)."""
        if self.by_epoch and self.mode == "search":
            self.step(runner.model, runner.work_dir)

    def after_train_iter(self, runner: RunnerLike) -> None:
        """One search step per iteration (not ``by_epoch``, search mode)."""
        if not self.by_epoch and self.mode == "search":
            self.step(runner.model, runner.work_dir)

    def step(self, model: nn.Module, work_dir: str) -> None:
        """Count a step; every ``search_interval`` steps before ``max_step``, update and save.

        Args:
            model: The model with wrapped convolutions.
            work_dir: Where ``local_search_config_step<N>.json`` is written.
        """
        search = self.config["search"]
        search["step"] += 1
        if search["step"] % search["search_interval"] == 0 and search["step"] < search["max_step"]:
            self.estimate_and_expand(model)
            for name, module in model.named_modules():
                if isinstance(module, BaseConvRFSearchOp):
                    self.config["structure"][name] = module.op_layer.dilation
            path = os.path.join(work_dir, f"local_search_config_step{search['step']}.json")
            write_to_json(self.config, path)

    def estimate_and_expand(self, model: nn.Module) -> None:
        """Estimate, then re-expand, the rates of every searchable op of ``model``."""
        for module in model.modules():
            if isinstance(module, BaseConvRFSearchOp):
                module.estimate_rates()
                module.expand_rates()

    def _candidates(
        self, model: nn.Module, search_op: str, prefix: str
    ) -> Iterator[tuple[nn.Module, str, str, nn.Module]]:
        """(parent, name, full name, layer) of each searchable layer under ``model``."""
        op_type = getattr(nn, search_op)
        skip = self.config["search"].get("skip_layer")
        for name, module in model.named_children():
            fullname = f"module.{name}" if prefix == "" else f"{prefix}.{name}"
            if skip is not None and any(part in fullname for part in skip):
                continue
            if isinstance(module, op_type):
                if _searchable(module):
                    yield model, name, fullname, module
            elif not isinstance(module, BaseConvRFSearchOp):
                yield from self._candidates(module, search_op, fullname)

    def wrap_model(self, model: nn.Module, search_op: str = "Conv2d", prefix: str = "") -> None:
        """Replace each searchable ``search_op`` layer by its searchable op (in place).

        Full names start with ``module.`` (the wrapped model's names), as in mmcv.
        """
        for parent, name, _, module in list(self._candidates(model, search_op, prefix)):
            wrapped = _SEARCH_OPS[search_op](module, self.config["search"], self.verbose)
            wrapped = wrapped.to(module.weight.device)
            if self.verbose:
                print_log(f"Wrap model {module} to {wrapped}.", logger="mmpar")
            setattr(parent, name, wrapped)

    def set_model(
        self,
        model: nn.Module,
        search_op: str = "Conv2d",
        init_rates: int | None = None,
        prefix: str = "",
    ) -> None:
        """Give each searchable layer the dilation (and matching padding) of ``structure``.

        Args:
            model: The model (changed in place).
            search_op: The layer type (``'Conv2d'``).
            init_rates: Unused, as in mmcv.
            prefix: Name prefix of ``model`` (for recursion).

        Raises:
            KeyError: ``structure`` has no entry for a searchable layer.
        """
        structure = self.config["structure"]
        for _, _, fullname, module in list(self._candidates(model, search_op, prefix)):
            rate = structure[fullname]
            if isinstance(rate, int):
                rate = structure[fullname] = [rate, rate]
            module.dilation = (rate[0], rate[1])
            module.padding = tuple(
                get_single_padding(module.kernel_size[i], module.stride[i], rate[i]) for i in (0, 1)
            )
            if self.verbose:
                print_log(
                    f"Set module {fullname} dilation as: [{rate[0]} {rate[1]}]", logger="mmpar"
                )
