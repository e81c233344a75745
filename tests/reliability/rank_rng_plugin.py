"""Plugin of ``rank_rng_config.py``: a model that draws from the global RNG in its forward.

``DropoutNeck`` applies dropout to the backbone's features, so every training step draws from
torch's global generator, which ``--diff-seed`` seeds differently on each rank (the data
pipeline's per-sample generators do not depend on it). ``RankWeightsHook`` writes each rank's
final weights to ``<work_dir>/rank<r>_weights.pth`` at the end of the run.
"""

from __future__ import annotations

import os
from typing import Any

import torch
from torch import nn

from mmpar.models import NECKS
from mmpar.runner import HOOKS, Hook
from mmpar.runner.dist_utils import get_dist_info


@NECKS.register_module()
class DropoutNeck(nn.Module):
    """``nn.Dropout(p)`` on each feature map of the backbone's tuple."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.dropout = nn.Dropout(p)

    def forward(self, feats: Any) -> Any:
        if isinstance(feats, tuple):
            return tuple(self.dropout(f) for f in feats)
        return self.dropout(feats)


@HOOKS.register_module()
class RankWeightsHook(Hook):
    """Save this rank's model weights when the run ends."""

    def after_run(self, runner: Any) -> None:
        rank, _ = get_dist_info()
        model = runner.model.module if hasattr(runner.model, "module") else runner.model
        weights = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        torch.save(weights, os.path.join(runner.work_dir, f"rank{rank}_weights.pth"))
