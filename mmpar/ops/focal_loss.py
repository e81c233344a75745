"""Focal losses with mmcv's signatures: integer labels, class weights, mmcv's reductions.

mmcv's ``sigmoid_focal_loss`` takes a class index per row, where the index ``num_classes``
means background (every class negative); torchvision's takes one-hot targets, so the labels
are expanded here and torchvision's loss does the math. ``'mean'`` divides by the number of
rows (not of elements), as mmcv's kernel does.
"""

from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F
import torchvision
from torch import Tensor, nn

from ._autograd import op_function

__all__ = [
    "SigmoidFocalLoss",
    "SigmoidFocalLossFunction",
    "SoftmaxFocalLoss",
    "SoftmaxFocalLossFunction",
    "sigmoid_focal_loss",
    "softmax_focal_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


def _check(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str) -> None:  # noqa: A002
    # mmcv asserts these; keep the AssertionError type.
    assert target.dtype == torch.long, f"target must be int64 labels, got {target.dtype}"
    assert input.dim() == 2 and target.dim() == 1, "input must be (N, C) and target (N,)"
    assert input.size(0) == target.size(0), "input and target must have the same length"
    assert weight is None or (weight.dim() == 1 and weight.size(0) == input.size(1)), (
        "weight must be (C,)"
    )
    assert reduction in _REDUCTIONS, f"reduction must be one of {_REDUCTIONS}, got {reduction!r}"


def _reduce(loss: Tensor, rows: int, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.sum() / rows
    if reduction == "sum":
        return loss.sum()
    return loss


def sigmoid_focal_loss(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    target: Tensor,
    gamma: float = 2.0,
    alpha: float = 0.25,
    weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Focal loss (Lin et al., 2017) on per-class sigmoid logits.

    Args:
        input: Logits ``(N, C)``.
        target: Labels ``(N,)`` in ``[0, C]``; ``C`` is background (all classes negative).
        gamma: Focusing exponent.
        alpha: Weight of the positive term (``1 - alpha`` for the negatives).
        weight: Per-class factors ``(C,)`` applied to each row by its label (background rows
            are left unweighted; mmcv read past the end of ``weight`` there).
        reduction: ``'none'`` (``(N, C)``), ``'mean'`` (sum over all / N) or ``'sum'``.

    Returns:
        The loss.

    Raises:
        AssertionError: ``target`` is not int64, the shapes are not ``(N, C)`` / ``(N,)`` /
            ``(C,)``, or ``reduction`` is unknown (as mmcv).
    """
    _check(input, target, weight, reduction)
    num_classes = input.size(1)
    one_hot = F.one_hot(target, num_classes + 1)[:, :num_classes].to(input.dtype)
    loss = torchvision.ops.sigmoid_focal_loss(input, one_hot, alpha, gamma, reduction="none")
    if weight is not None:
        row_weight = torch.cat([weight.to(input.dtype), weight.new_ones(1, dtype=input.dtype)])
        loss = loss * row_weight[target].unsqueeze(1)
    return _reduce(loss, input.size(0), reduction)


def softmax_focal_loss(
    input: Tensor,  # noqa: A002 (mmcv's argument name)
    target: Tensor,
    gamma: float = 2.0,
    alpha: float = 0.25,
    weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Focal loss on softmax probabilities: ``-alpha * (1 - p_t)**gamma * log(p_t)`` per row.

    Args:
        input: Logits ``(N, C)``.
        target: Labels ``(N,)`` in ``[0, C)``; a negative label gives the row zero loss.
        gamma: Focusing exponent.
        alpha: Factor of the loss.
        weight: Per-class factors ``(C,)`` applied to each row by its label.
        reduction: ``'none'`` (``(N,)``), ``'mean'`` (sum / N) or ``'sum'``.

    Returns:
        The loss.

    Raises:
        AssertionError: ``target`` is not int64, the shapes are not ``(N, C)`` / ``(N,)`` /
            ``(C,)``, or ``reduction`` is unknown (as mmcv).
    """
    _check(input, target, weight, reduction)
    valid = target >= 0
    label = target.clamp(min=0).unsqueeze(1)
    log_p = F.log_softmax(input, dim=1).gather(1, label).squeeze(1)
    loss = -alpha * (1 - log_p.exp()).pow(gamma) * log_p
    if weight is not None:
        loss = loss * weight.to(input.dtype)[label.squeeze(1)]
    loss = torch.where(valid, loss, torch.zeros_like(loss))
    return _reduce(loss, input.size(0), reduction)


class _FocalLoss(nn.Module):
    """A focal loss function as a layer; subclasses name the function (``_loss``).

    A private base rather than one layer subclassing the other: as in mmcv, neither
    layer is an instance of the other.
    """

    _loss: Callable[..., Tensor]

    def __init__(
        self, gamma: float, alpha: float, weight: Tensor | None = None, reduction: str = "mean"
    ) -> None:
        super().__init__()
        self.gamma = gamma
        self.alpha = alpha
        self.register_buffer("weight", weight)
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """Loss of logits ``input`` ``(N, C)`` against labels ``target`` ``(N,)``.

        Args:
            input: Logits ``(N, C)``.
            target: Labels ``(N,)``.

        Returns:
            The loss.

        Raises:
            AssertionError: At ``forward``, the checks of the loss function (``target`` int64,
                shapes ``(N, C)`` / ``(N,)``, a known ``reduction``).
        """
        return self._loss(input, target, self.gamma, self.alpha, self.weight, self.reduction)

    def extra_repr(self) -> str:
        """The loss settings, for ``repr``."""
        return f"gamma={self.gamma}, alpha={self.alpha}, reduction={self.reduction}"


class SigmoidFocalLoss(_FocalLoss):
    """:func:`sigmoid_focal_loss` as a layer.

    Args:
        gamma: Focusing exponent.
        alpha: Weight of the positive term.
        weight: Per-class factors ``(C,)`` (kept as a buffer), or None.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
    """

    _loss = staticmethod(sigmoid_focal_loss)


class SoftmaxFocalLoss(_FocalLoss):
    """:func:`softmax_focal_loss` as a layer. Arguments as :class:`SigmoidFocalLoss`."""

    _loss = staticmethod(softmax_focal_loss)


SigmoidFocalLossFunction = op_function("SigmoidFocalLossFunction", sigmoid_focal_loss, __name__)


SoftmaxFocalLossFunction = op_function("SoftmaxFocalLossFunction", softmax_focal_loss, __name__)
