"""Top-k accuracy on tensors (for training logs)."""

from __future__ import annotations

from typing import Sequence

import torch


def accuracy(pred: torch.Tensor, target: torch.Tensor, topk: Sequence[int] = (1,)) -> list:
    """Top-k accuracy in percent.

    Args:
        pred: N×C scores.
        target: N class indices.
        topk: The k values (k larger than C counts every class).

    Returns:
        One 0-dim tensor per k.
    """
    with torch.no_grad():
        maxk = min(max(topk), pred.size(1))
        top = pred.topk(maxk, dim=1).indices
        hits = top == target.view(-1, 1)
        num = max(pred.size(0), 1)
        return [hits[:, : min(k, maxk)].any(dim=1).float().sum() * (100.0 / num) for k in topk]
