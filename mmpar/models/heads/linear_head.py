"""A linear classification head."""

from __future__ import annotations

from typing import Sequence, Union

import torch
import torch.nn.functional as F
from torch import nn

from mmpar.runner.base_module import BaseModule

from ..builder import HEADS, build_loss
from ..losses import accuracy

Features = Union[torch.Tensor, Sequence[torch.Tensor]]


@HEADS.register_module()
class LinearClsHead(BaseModule):
    """One fully connected layer over the last feature vector.

    Args:
        num_classes: Number of classes.
        in_channels: Input feature size.
        loss: Loss config.
        topk: Top-k accuracies logged during training (``top-1`` ...).
        init_cfg: Init config, applied by ``init_weights()`` (default: ``Normal`` with std
            0.01 on the fc layer).
    """

    def __init__(
        self,
        num_classes: int,
        in_channels: int,
        loss: dict = dict(type="CrossEntropyLoss", loss_weight=1.0),  # noqa: B006
        topk: Union[int, Sequence[int]] = (1,),
        init_cfg: Union[dict, list] | None = dict(type="Normal", layer="Linear", std=0.01),  # noqa: B006
    ) -> None:
        super().__init__(init_cfg)
        if num_classes <= 0:
            raise ValueError(f"LinearClsHead: num_classes must be positive, got {num_classes}")
        self.num_classes = num_classes
        self.in_channels = in_channels
        self.topk = (topk,) if isinstance(topk, int) else tuple(topk)
        self.compute_loss = build_loss(loss)
        self.fc = nn.Linear(in_channels, num_classes)

    @staticmethod
    def pre_logits(x: Features) -> torch.Tensor:
        """Take the last feature of a tuple (the backbone/neck output)."""
        return x[-1] if isinstance(x, (tuple, list)) else x

    def forward(self, x: Features) -> torch.Tensor:
        """Return the N×C logits."""
        return self.fc(self.pre_logits(x))

    def loss(self, cls_score: torch.Tensor, gt_label: torch.Tensor) -> dict:
        """Loss plus ``accuracy`` (``top-k`` percentages) when labels are class indices."""
        losses = {"loss": self.compute_loss(cls_score, gt_label, avg_factor=len(cls_score))}
        if gt_label.dim() == 1:
            accs = accuracy(cls_score, gt_label, self.topk)
            losses["accuracy"] = {f"top-{k}": a for k, a in zip(self.topk, accs)}
        return losses

    def forward_train(self, x: Features, gt_label: torch.Tensor, **kwargs) -> dict:
        """Compute the training losses."""
        return self.loss(self(x), gt_label)

    def simple_test(
        self, x: Features, softmax: bool = True, post_process: bool = True
    ) -> Union[torch.Tensor, list]:
        """Class scores (softmax probabilities by default), as a list of per-sample arrays."""
        cls_score = self(x)
        pred = F.softmax(cls_score, dim=1) if softmax else cls_score
        if not post_process:
            return pred
        if pred.dtype == torch.bfloat16:  # NumPy has no bfloat16 (bf16 mixed precision)
            pred = pred.float()
        return list(pred.detach().cpu().numpy())
