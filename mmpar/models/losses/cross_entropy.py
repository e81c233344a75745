"""Softmax cross-entropy loss with label smoothing, class weights and soft targets."""

from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..builder import LOSSES

# F.cross_entropy's default ignore_index: such labels are skipped, not out of range.
_IGNORED = -100


class LabelOutOfRangeError(IndexError, ValueError):
    """A class-index label outside ``[0, num_classes)``.

    An ``IndexError``, as torch raises for it on the CPU ("Target 12 is out of bounds"), and a
    ``ValueError``, as mmpar raised before.
    """


def check_labels_in_range(cls_score: torch.Tensor, label: torch.Tensor) -> None:
    """Raise one error naming the labels outside the head's classes, before the loss runs.

    On CUDA a bad label gives no Python error but a device-side assert, reported later and
    asynchronously; checked here it names the label, its batch position and the class count.
    The check costs one host sync per step, at a point where the step is about to sync anyway
    (the logged loss values are read right after the forward).

    Raises:
        LabelOutOfRangeError: Some class-index label is outside ``[0, C)`` (``-100``, the
            ignored index, is allowed).
    """
    if label.dim() != 1 or label.is_floating_point() or cls_score.dim() < 2:
        return  # soft labels (N×C probabilities) have no class index to check
    num_classes = cls_score.shape[1]
    out_of_range = ((label < 0) & (label != _IGNORED)) | (label >= num_classes)
    if not bool(out_of_range.any()):
        return
    bad = out_of_range.nonzero().flatten().tolist()
    values = label.cpu()
    shown = ", ".join(f"{int(values[i])} at batch position {i}" for i in bad[:5])
    raise LabelOutOfRangeError(
        f"CrossEntropyLoss: gt_label {shown} outside [0, {num_classes}) for the head's "
        f"{num_classes} classes; check the dataset's labels against model.head.num_classes"
    )


@LOSSES.register_module()
class CrossEntropyLoss(nn.Module):
    """Cross-entropy over class scores.

    Args:
        reduction: ``'mean'``, ``'sum'`` or ``'none'``.
        loss_weight: Multiplier of the loss.
        label_smoothing: Smoothing in [0, 1) (as ``torch.nn.functional.cross_entropy``).
        class_weight: Optional per-class weights.
    """

    def __init__(
        self,
        reduction: str = "mean",
        loss_weight: float = 1.0,
        label_smoothing: float = 0.0,
        class_weight: Sequence[float] | None = None,
    ) -> None:
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        if not 0 <= label_smoothing < 1:
            raise ValueError(f"label_smoothing must be in [0, 1), got {label_smoothing}")
        self.reduction = reduction
        self.loss_weight = loss_weight
        self.label_smoothing = label_smoothing
        self.class_weight = None if class_weight is None else list(class_weight)

    def forward(
        self,
        cls_score: torch.Tensor,
        label: torch.Tensor,
        weight: torch.Tensor | None = None,
        avg_factor: float | None = None,
        reduction_override: str | None = None,
    ) -> torch.Tensor:
        """Compute the loss.

        Args:
            cls_score: N×C logits.
            label: N class indices, or N×C target probabilities (soft labels).
            weight: Optional per-sample weights.
            avg_factor: Divide the summed loss by this instead of N (``'mean'`` only).
            reduction_override: Use this reduction instead of ``self.reduction``.

        Raises:
            LabelOutOfRangeError: A class index outside ``[0, C)`` (an ``IndexError`` and a
                ``ValueError``), raised before the loss is computed.
        """
        reduction = reduction_override or self.reduction
        class_weight = None
        if self.class_weight is not None:
            class_weight = cls_score.new_tensor(self.class_weight)
        check_labels_in_range(cls_score, label)
        loss = F.cross_entropy(
            cls_score,
            label,
            weight=class_weight,
            reduction="none",
            label_smoothing=self.label_smoothing,
            ignore_index=_IGNORED,
        )
        if weight is not None:
            loss = loss * weight.float()
        if reduction == "mean":
            loss = loss.sum() / avg_factor if avg_factor is not None else loss.mean()
        elif reduction == "sum":
            loss = loss.sum()
        return self.loss_weight * loss

    def extra_repr(self) -> str:
        """Arguments shown by ``repr``."""
        return (
            f"reduction={self.reduction!r}, loss_weight={self.loss_weight}, "
            f"label_smoothing={self.label_smoothing}"
        )
