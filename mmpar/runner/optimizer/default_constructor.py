"""DefaultOptimizerConstructor: per-parameter lr / weight decay multipliers (mmcv 1.x)."""

from __future__ import annotations

import warnings
from typing import Any, Union

import torch
import torch.nn as nn

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import build_from_cfg as build_from_cfg
from mmpar.utils import is_list_of as is_list_of
from mmpar.utils.ext_loader import check_ops_exist as check_ops_exist
from mmpar.utils.parrots_wrapper import _BatchNorm, _InstanceNorm

from .builder import OPTIMIZER_BUILDERS, OPTIMIZERS

_NORMS = (_BatchNorm, _InstanceNorm, nn.GroupNorm, nn.LayerNorm)
_PARAMWISE_KEYS = {
    "custom_keys",
    "bias_lr_mult",
    "bias_decay_mult",
    "norm_decay_mult",
    "dwconv_decay_mult",
    "dcn_offset_lr_mult",
    "bypass_duplicate",
}
# A deformable convolution is recognised by class name (its own or a base class's), the rule
# mmcv applies with isinstance on mmcv.ops' two classes; the runner layer may not import ops.
_DCN_CLASS_NAMES = {"DeformConv2d", "ModulatedDeformConv2d"}


def _is_dcn(module: nn.Module) -> bool:
    """Return True if ``module`` is a (modulated) deformable convolution or a subclass of one."""
    return any(cls.__name__ in _DCN_CLASS_NAMES for cls in type(module).__mro__)


@OPTIMIZER_BUILDERS.register_module()
class DefaultOptimizerConstructor:
    """Build an optimizer with optional per-parameter settings.

    Without ``paramwise_cfg`` the optimizer gets ``model.parameters()``. With it, every
    parameter gets its own param group, set by these (all optional) keys:

    - ``custom_keys``: ``{substring: dict(lr_mult=..., decay_mult=...)}``. A parameter whose
      name (``'<module prefix>.<param name>'``; ``'.<name>'`` for the model's own parameters)
      contains a key gets that key's multipliers and none of the rules below. The longest
      matching key wins; among equally long keys, the alphabetically first.
    - ``bias_lr_mult``: lr multiplier of every ``bias`` except those of normalization layers
      and of the direct children of deformable convolutions.
    - ``norm_decay_mult``: weight-decay multiplier of normalization layers' parameters.
    - ``dwconv_decay_mult``: weight-decay multiplier of depth-wise ``Conv2d`` parameters
      (``in_channels == groups``), unless the layer is a normalization layer.
    - ``bias_decay_mult``: weight-decay multiplier of other biases (not of the direct
      children of deformable convolutions).
    - ``dcn_offset_lr_mult``: lr multiplier of the ``conv_offset`` ``Conv2d`` of every
      deformable convolution (``DeformConv2d`` / ``ModulatedDeformConv2d`` and subclasses); it
      replaces ``bias_lr_mult`` there.
    - ``bypass_duplicate``: skip (with a warning) a parameter already in a group instead of
      letting the optimizer reject it.

    Parameters with ``requires_grad=False`` get a group of their own with the defaults. Keys
    of other names are kept for subclasses (mmcv passes them through); the base class warns
    about them.

    Args:
        optimizer_cfg: ``dict(type='SGD', lr=..., ...)``, the optimizer's arguments.
        paramwise_cfg: The dict described above, or None for one param group.

    Raises:
        TypeError: A config is not a dict, or ``lr`` is missing where a rule multiplies it.
        KeyError: ``optimizer_cfg`` has no ``type`` (when the optimizer is built).
        ValueError: A decay multiplier is given but the optimizer has no ``weight_decay``.
    """

    def __init__(self, optimizer_cfg: dict, paramwise_cfg: dict | None = None) -> None:
        if not isinstance(optimizer_cfg, dict):
            raise TypeError(f"optimizer_cfg must be a dict, but got {type(optimizer_cfg).__name__}")
        self.optimizer_cfg = optimizer_cfg
        self.paramwise_cfg = {} if paramwise_cfg is None else paramwise_cfg
        self.base_lr = optimizer_cfg.get("lr")
        self.base_wd = optimizer_cfg.get("weight_decay")
        self._validate_cfg()

    def _validate_cfg(self) -> None:
        cfg = self.paramwise_cfg
        if not isinstance(cfg, dict):
            raise TypeError(f"paramwise_cfg must be a dict or None, but got {type(cfg).__name__}")
        unknown = set(cfg) - _PARAMWISE_KEYS
        # Subclasses (mmseg's layer-decay constructor, mmaction's TSM one) read keys of their
        # own from paramwise_cfg, so only the base class calls an unknown key a likely typo.
        if unknown and type(self) is DefaultOptimizerConstructor:
            warnings.warn(
                f"paramwise_cfg keys {sorted(unknown)} are ignored by DefaultOptimizerConstructor;"
                f" it reads {sorted(_PARAMWISE_KEYS)}",
                UserWarning,
                stacklevel=3,
            )
        custom = cfg.get("custom_keys", {})
        if not isinstance(custom, dict):
            raise TypeError(
                f"paramwise_cfg.custom_keys must be a dict, got {type(custom).__name__}"
            )
        uses_decay = any(
            k in cfg for k in ("bias_decay_mult", "norm_decay_mult", "dwconv_decay_mult")
        )
        uses_decay |= any("decay_mult" in v for v in custom.values())
        if uses_decay and self.base_wd is None:
            raise ValueError(
                "paramwise_cfg sets a decay multiplier but optimizer_cfg has no weight_decay; "
                "add weight_decay=... to the optimizer config"
            )

    def _lr(self, mult: float, what: str) -> float:
        if self.base_lr is None:
            raise TypeError(
                f"paramwise_cfg applies {what} but optimizer_cfg has no lr to multiply; "
                "add lr=... to the optimizer config"
            )
        return self.base_lr * mult

    def _is_in(self, param_group: dict, param_group_list: list) -> bool:
        """Return True if a parameter of ``param_group`` is already in ``param_group_list``."""
        ids = {id(p) for group in param_group_list for p in group["params"]}
        return any(id(p) in ids for p in param_group["params"])

    def _param_group(
        self, name: str, param: torch.Tensor, module: nn.Module, prefix: str, in_dcn: bool
    ) -> dict:
        """The group of one trainable parameter, by the precedence documented on the class."""
        cfg = self.paramwise_cfg
        group: dict[str, Any] = {"params": [param]}
        custom = cfg.get("custom_keys", {})
        qualified = f"{prefix}.{name}"
        for key in sorted(sorted(custom), key=len, reverse=True):
            if key in qualified:
                group["lr"] = self._lr(custom[key].get("lr_mult", 1.0), f"custom_keys[{key!r}]")
                if self.base_wd is not None:
                    group["weight_decay"] = self.base_wd * custom[key].get("decay_mult", 1.0)
                return group

        is_norm = isinstance(module, _NORMS)
        is_dwconv = isinstance(module, nn.Conv2d) and module.in_channels == module.groups
        # Every rule sets its key even at the default multiplier 1, as mmcv does, so the
        # groups handed to the optimizer carry the same keys.
        if name == "bias" and not (is_norm or in_dcn):
            group["lr"] = self._lr(cfg.get("bias_lr_mult", 1.0), "bias_lr_mult")
        if in_dcn and "conv_offset" in prefix and isinstance(module, nn.Conv2d):
            group["lr"] = self._lr(cfg.get("dcn_offset_lr_mult", 1.0), "dcn_offset_lr_mult")
        if self.base_wd is not None:
            if is_norm:
                group["weight_decay"] = self.base_wd * cfg.get("norm_decay_mult", 1.0)
            elif is_dwconv:
                group["weight_decay"] = self.base_wd * cfg.get("dwconv_decay_mult", 1.0)
            elif name == "bias" and not in_dcn:
                group["weight_decay"] = self.base_wd * cfg.get("bias_decay_mult", 1.0)
        return group

    def add_params(
        self,
        params: list[dict],
        module: nn.Module,
        prefix: str = "",
        is_dcn_module: Union[int, float, bool, None] = None,
    ) -> None:
        """Append the param groups of ``module`` and its children to ``params``.

        Children are walked one level at a time (``named_children``), so a module reachable
        under two names is visited twice, as in mmcv: its parameters are then duplicates.

        Args:
            params: The list of param groups, extended in place.
            module: The module whose parameters are added.
            prefix: The module's dotted name in the model (``''`` for the model).
            is_dcn_module: True when ``module`` is a direct child of a deformable convolution.
        """
        bypass_duplicate = self.paramwise_cfg.get("bypass_duplicate", False)
        for name, param in module.named_parameters(recurse=False):
            if not param.requires_grad:
                params.append({"params": [param]})
                continue
            if bypass_duplicate and self._is_in({"params": [param]}, params):
                warnings.warn(
                    f"{prefix}.{name} is a duplicate parameter and is skipped "
                    "(bypass_duplicate=True)",
                    UserWarning,
                    stacklevel=2,
                )
                continue
            params.append(self._param_group(name, param, module, prefix, bool(is_dcn_module)))

        child_in_dcn = _is_dcn(module)
        for child_name, child in module.named_children():
            child_prefix = f"{prefix}.{child_name}" if prefix else child_name
            self.add_params(params, child, prefix=child_prefix, is_dcn_module=child_in_dcn)

    def __call__(self, model: nn.Module) -> torch.optim.Optimizer:
        """Build the optimizer for ``model`` (a module wrapper's ``.module`` is used)."""
        if hasattr(model, "module"):
            model = model.module
        optimizer_cfg = self.optimizer_cfg.copy()
        # Needed only here, where the optimizer is built (mmcv builds a constructor without it).
        if "type" not in optimizer_cfg:
            raise KeyError(f'optimizer_cfg needs a "type" (e.g. "SGD"), got {optimizer_cfg}')
        if not self.paramwise_cfg:
            optimizer_cfg["params"] = model.parameters()
            return OPTIMIZERS.build(optimizer_cfg)
        params: list[dict] = []
        self.add_params(params, model)
        optimizer_cfg["params"] = params
        return OPTIMIZERS.build(optimizer_cfg)
