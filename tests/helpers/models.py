"""A tiny model with mmcv's ``train_step``/``val_step`` API for runner and hook tests."""

import torch.nn as nn


class TinyModel(nn.Module):
    """``nn.Linear(in_dim, 1)`` trained to output 0, or ``y`` when batches are dicts with one.

    Batches are tensors ``x`` or dicts ``{"x": ..., "y": ...}``. ``groups`` records the
    optimizer's first parameter group (without its params) at every ``train_step``: the
    learning rate and momentum a hook set for that step. ``forward(x, return_loss=False)``
    returns one float per sample, the shape an evaluation hook collects.
    """

    def __init__(self, in_dim=2):
        super().__init__()
        self.fc = nn.Linear(in_dim, 1)
        self.groups = []

    def forward(self, x, y=None, return_loss=True):
        out = self.fc(x)
        if not return_loss:
            return [float(v) for v in out.flatten()]
        return (out.pow(2) if y is None else (out - y).pow(2)).mean()

    def train_step(self, data_batch, optimizer=None, **kwargs):
        if optimizer is not None:
            group = optimizer.param_groups[0]
            self.groups.append({k: v for k, v in group.items() if k != "params"})
        return self._step(data_batch)

    def val_step(self, data_batch, optimizer=None, **kwargs):
        return self._step(data_batch)

    def _step(self, data_batch):
        batch = data_batch if isinstance(data_batch, dict) else {"x": data_batch}
        loss = self(**batch)
        return dict(loss=loss, log_vars={"loss": float(loss.detach())}, num_samples=len(batch["x"]))
