"""Searchable convolutions: a conv run at several dilation rates, mixed by learnt weights."""

from __future__ import annotations

import logging

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from mmpar.runner.base_module import BaseModule
from mmpar.utils import print_log

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils.logging import get_logger as get_logger

from .utils import _clip, expand_rates, get_single_padding

__all__ = ["BaseConvRFSearchOp", "Conv2dRFSearchOp"]

# mmcv's module attribute. Messages go through print_log, which sets the logger up when first
# used: configuring it at import would fix its handlers before the program (or pytest) does.
logger = logging.getLogger("mmpar")


class BaseConvRFSearchOp(BaseModule):
    """Base of the searchable ops: holds the wrapped layer and the search config.

    Args:
        op_layer: The wrapped layer (its parameters stay under ``op_layer.``).
        global_config: The ``search`` part of the RF-search config.
    """

    def __init__(self, op_layer: nn.Module, global_config: dict) -> None:
        super().__init__()
        self.op_layer = op_layer
        self.global_config = global_config

    def normlize(self, weights: nn.Parameter) -> Tensor:
        """``|w| / sum(|w|)`` (mmcv's spelling of the name)."""
        magnitudes = torch.abs(weights)
        return magnitudes / torch.sum(magnitudes)


class Conv2dRFSearchOp(BaseConvRFSearchOp):
    """A ``Conv2d`` evaluated at several dilation rates, mixed by ``branch_weights`` (RF-Next).

    Args:
        op_layer: The ``nn.Conv2d`` to search the dilation of.
        global_config: Needs ``num_branches`` (2 or 3), ``exp_rate``, ``mmin``, ``mmax`` and
            ``init_alphas`` (initial branch weight); the hook reads its other keys.
        verbose: Log the candidate and estimated rates.

    Raises:
        AssertionError: No config, or ``num_branches`` not 2 or 3.
    """

    def __init__(self, op_layer: nn.Module, global_config: dict, verbose: bool = True) -> None:
        super().__init__(op_layer, global_config)
        assert global_config is not None, "global_config is None"
        self.num_branches = global_config["num_branches"]
        assert self.num_branches in (2, 3), f"num_branches must be 2 or 3, got {self.num_branches}"
        self.verbose = verbose
        self.dilation_rates = self._candidates(op_layer.dilation)
        self.branch_weights = nn.Parameter(torch.empty(self.num_branches))
        if verbose:
            print_log(f"Expand as {self.dilation_rates}", logger="mmpar")
        nn.init.constant_(self.branch_weights, global_config["init_alphas"])

    def _candidates(self, dilation: tuple) -> list:
        rates = expand_rates(dilation, self.global_config)
        # An axis whose kernel is 1 or even has no centred receptive field to grow: keep it.
        kernel = self.op_layer.kernel_size
        if kernel[0] == 1 or kernel[0] % 2 == 0:
            rates = [(dilation[0], r[1]) for r in rates]
        if kernel[1] == 1 or kernel[1] % 2 == 0:
            rates = [(r[0], dilation[1]) for r in rates]
        return rates

    def _conv(self, x: Tensor, dilation: tuple) -> Tensor:
        layer = self.op_layer
        return F.conv2d(
            x,
            weight=layer.weight,
            bias=layer.bias,
            stride=layer.stride,
            padding=self.get_padding(dilation),
            dilation=dilation,
            groups=layer.groups,
        )

    def forward(self, input: Tensor) -> Tensor:
        """The conv at each candidate rate, weighted by the normalised branch weights, summed.

        With a single rate the conv's output is returned unweighted.
        """
        if len(self.dilation_rates) == 1:
            return self._conv(input, self.dilation_rates[0])
        weights = self.normlize(self.branch_weights[: len(self.dilation_rates)])
        outputs = [self._conv(input, r) * weights[i] for i, r in enumerate(self.dilation_rates)]
        return torch.stack(outputs).sum(0)

    def estimate_rates(self) -> None:
        """Set the conv's dilation to the branch-weighted mean rate (clipped); one branch left."""
        weights = self.normlize(self.branch_weights[: len(self.dilation_rates)]).tolist()
        if self.verbose:
            print_log(
                f"Estimate dilation {self.dilation_rates} with weight {weights}.", logger="mmpar"
            )
        total = sum(weights)
        means = [
            sum(w * rate[axis] for w, rate in zip(weights, self.dilation_rates)) / total
            for axis in (0, 1)
        ]
        estimated = tuple(_clip(mean, self.global_config) for mean in means)
        self.op_layer.dilation = estimated
        self.op_layer.padding = self.get_padding(estimated)
        self.dilation_rates = [estimated]
        if self.verbose:
            print_log(f"Estimate as {estimated}", logger="mmpar")

    def expand_rates(self) -> None:
        """New candidate rates around the conv's dilation; branch weights reset."""
        self.dilation_rates = self._candidates(self.op_layer.dilation)
        if self.verbose:
            print_log(f"Expand as {self.dilation_rates}", logger="mmpar")
        nn.init.constant_(self.branch_weights, self.global_config["init_alphas"])

    def get_padding(self, dilation: tuple) -> tuple:
        """The (h, w) padding of the conv at ``dilation`` (see :func:`get_single_padding`)."""
        layer = self.op_layer
        return tuple(
            get_single_padding(layer.kernel_size[i], layer.stride[i], dilation[i]) for i in (0, 1)
        )
