"""DefaultOptimizerConstructor: per-parameter lr / weight decay multipliers (mmcv 1.x)."""

from __future__ import annotations

import copy
from typing import Any

import torch
import torch.nn as nn

from .builder import OPTIMIZER_BUILDERS, OPTIMIZERS

_NORMS = (
    nn.BatchNorm1d,
    nn.BatchNorm2d,
    nn.BatchNorm3d,
    nn.SyncBatchNorm,
    nn.GroupNorm,
    nn.LayerNorm,
    nn.InstanceNorm1d,
    nn.InstanceNorm2d,
    nn.InstanceNorm3d,
)
_PARAMWISE_KEYS = {
    "custom_keys",
    "bias_lr_mult",
    "bias_decay_mult",
    "norm_decay_mult",
    "dwconv_decay_mult",
    "bypass_duplicate",
}


@OPTIMIZER_BUILDERS.register_module()
class DefaultOptimizerConstructor:
    """Build an optimizer with optional per-parameter settings.

    ``paramwise_cfg`` keys (all optional):

    - ``custom_keys``: ``{substring: dict(lr_mult=..., decay_mult=...)}``. A parameter whose
      full name contains the substring gets those multipliers; the longest matching key wins
      (ties: alphabetical). Custom keys override the rules below.
    - ``bias_lr_mult``: lr multiplier of biases (not of normalization layers).
    - ``bias_decay_mult``: weight-decay multiplier of biases (not of normalization layers).
    - ``norm_decay_mult``: weight-decay multiplier of normalization layers' weight and bias.
    - ``dwconv_decay_mult``: weight-decay multiplier of depth-wise convolutions.
    - ``bypass_duplicate``: skip parameters shared by several modules instead of failing.

    Args:
        optimizer_cfg: ``dict(type='SGD', lr=..., ...)``, the optimizer's arguments.
        paramwise_cfg: The dict described above, or None for one param group.

    Raises:
        TypeError: Configs are not dicts.
        KeyError: ``optimizer_cfg`` has no ``type``/``lr``, or ``paramwise_cfg`` has an
            unknown key.
        ValueError: A decay multiplier is given but the optimizer has no ``weight_decay``.
    """

    def __init__(self, optimizer_cfg: dict, paramwise_cfg: dict | None = None) -> None:
        if not isinstance(optimizer_cfg, dict):
            raise TypeError(f"optimizer_cfg must be a dict, but got {type(optimizer_cfg).__name__}")
        if "type" not in optimizer_cfg:
            raise KeyError(f'optimizer_cfg needs a "type" (e.g. "SGD"), got {optimizer_cfg}')
        self.optimizer_cfg = optimizer_cfg
        self.paramwise_cfg = {} if paramwise_cfg is None else paramwise_cfg
        self.base_lr = optimizer_cfg.get("lr")
        self.base_wd = optimizer_cfg.get("weight_decay")
        self._validate()

    def _validate(self) -> None:
        cfg = self.paramwise_cfg
        if not isinstance(cfg, dict):
            raise TypeError(f"paramwise_cfg must be a dict or None, but got {type(cfg).__name__}")
        unknown = set(cfg) - _PARAMWISE_KEYS
        if unknown:
            raise KeyError(
                f"unknown paramwise_cfg keys {sorted(unknown)}; valid: {sorted(_PARAMWISE_KEYS)}"
            )
        custom = cfg.get("custom_keys", {})
        if not isinstance(custom, dict):
            raise TypeError(
                f"paramwise_cfg.custom_keys must be a dict, got {type(custom).__name__}"
            )
        if cfg and self.base_lr is None:
            raise KeyError('optimizer_cfg needs "lr" when paramwise_cfg is used')
        uses_decay = any(
            k in cfg for k in ("bias_decay_mult", "norm_decay_mult", "dwconv_decay_mult")
        )
        uses_decay |= any("decay_mult" in v for v in custom.values())
        if uses_decay and self.base_wd is None:
            raise ValueError(
                "paramwise_cfg sets a decay multiplier but optimizer_cfg has no weight_decay; "
                "add weight_decay=... to the optimizer config"
            )

    def _group_for(self, name: str, full_name: str, module: nn.Module, param: torch.Tensor) -> dict:
        group: dict[str, Any] = {"params": [param]}
        cfg = self.paramwise_cfg
        custom = cfg.get("custom_keys", {})
        for key in sorted(sorted(custom), key=len, reverse=True):
            if key in full_name:
                group["lr"] = self.base_lr * custom[key].get("lr_mult", 1.0)
                if self.base_wd is not None:
                    group["weight_decay"] = self.base_wd * custom[key].get("decay_mult", 1.0)
                return group
        is_norm = isinstance(module, _NORMS)
        is_dwconv = isinstance(module, nn.Conv2d) and module.in_channels == module.groups
        if name == "bias" and not is_norm and "bias_lr_mult" in cfg:
            group["lr"] = self.base_lr * cfg["bias_lr_mult"]
        if self.base_wd is not None:
            if is_norm and "norm_decay_mult" in cfg:
                group["weight_decay"] = self.base_wd * cfg["norm_decay_mult"]
            elif is_dwconv and "dwconv_decay_mult" in cfg:
                group["weight_decay"] = self.base_wd * cfg["dwconv_decay_mult"]
            elif name == "bias" and not is_norm and "bias_decay_mult" in cfg:
                group["weight_decay"] = self.base_wd * cfg["bias_decay_mult"]
        return group

    def add_params(self, params: list, module: nn.Module, prefix: str = "") -> None:
        """Append one param group per parameter of ``module`` (recursively) to ``params``."""
        seen = {id(p) for group in params for p in group["params"]}
        for mod_name, mod in module.named_modules(prefix=prefix):
            for name, param in mod.named_parameters(recurse=False):
                full_name = f"{mod_name}.{name}" if mod_name else name
                if id(param) in seen:
                    if self.paramwise_cfg.get("bypass_duplicate", False):
                        continue
                    raise ValueError(
                        f"parameter {full_name} is shared with another module; set "
                        "paramwise_cfg=dict(bypass_duplicate=True) to skip duplicates"
                    )
                seen.add(id(param))
                if not param.requires_grad:
                    params.append({"params": [param]})
                    continue
                params.append(self._group_for(name, full_name, mod, param))

    def __call__(self, model: nn.Module) -> torch.optim.Optimizer:
        """Build the optimizer for ``model``."""
        if hasattr(model, "module"):  # module wrappers
            model = model.module
        optimizer_cfg = copy.deepcopy(self.optimizer_cfg)
        if not self.paramwise_cfg:
            optimizer_cfg["params"] = model.parameters()
            return OPTIMIZERS.build(optimizer_cfg)
        params: list = []
        self.add_params(params, model)
        optimizer_cfg["params"] = params
        return OPTIMIZERS.build(optimizer_cfg)
