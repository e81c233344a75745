"""Weight initialisation from mmcv-style ``init_cfg`` dicts, and loading pretrained weights."""

from __future__ import annotations

from typing import Sequence, Union

import torch
from torch import nn

_INIT_TYPES = ("Constant", "Normal", "Xavier", "Kaiming", "Pretrained")


def _matches(module: nn.Module, layers: Sequence[str]) -> bool:
    # Class names along the MRO, so 'BatchNorm2d', '_BatchNorm' and base classes all match.
    names = {cls.__name__ for cls in type(module).__mro__}
    return any(layer in names for layer in layers)


def _init_module(module: nn.Module, cfg: dict) -> None:
    kind = cfg["type"]
    weight = getattr(module, "weight", None)
    bias = getattr(module, "bias", None)
    if isinstance(weight, torch.Tensor):
        if kind == "Constant":
            nn.init.constant_(weight, cfg.get("val", 0.0))
        elif kind == "Normal":
            nn.init.normal_(weight, cfg.get("mean", 0.0), cfg.get("std", 1.0))
        elif kind == "Xavier":
            gain = cfg.get("gain", 1.0)
            if cfg.get("distribution", "normal") == "uniform":
                nn.init.xavier_uniform_(weight, gain)
            else:
                nn.init.xavier_normal_(weight, gain)
        elif kind == "Kaiming":
            args = dict(
                a=cfg.get("a", 0),
                mode=cfg.get("mode", "fan_out"),
                nonlinearity=cfg.get("nonlinearity", "relu"),
            )
            if cfg.get("distribution", "normal") == "uniform":
                nn.init.kaiming_uniform_(weight, **args)
            else:
                nn.init.kaiming_normal_(weight, **args)
    if isinstance(bias, torch.Tensor):
        nn.init.constant_(bias, cfg.get("bias", 0.0))


def load_pretrained(module: nn.Module, checkpoint: str, prefix: str | None = None) -> None:
    """Load weights from a checkpoint file (mmcv/mmpar checkpoint or a bare state dict).

    Args:
        module: Module to load into.
        checkpoint: Path of the file (read with ``weights_only=True``).
        prefix: Keep only keys starting with ``prefix + '.'`` and strip it (e.g.
            ``'backbone'`` to take a classifier's backbone).

    Raises:
        KeyError: Nothing in the file matches the module (lists a few keys of each).
    """
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    state = state.get("state_dict", state)
    state = {k[len("module.") :] if k.startswith("module.") else k: v for k, v in state.items()}
    if prefix:
        state = {k[len(prefix) + 1 :]: v for k, v in state.items() if k.startswith(prefix + ".")}
    own = module.state_dict()
    matched = [k for k in state if k in own]
    if not matched:
        raise KeyError(
            f"no weights in {checkpoint} match {type(module).__name__} (prefix={prefix!r}); file "
            f"keys start {list(state)[:3]}, module keys start {list(own)[:3]}"
        )
    module.load_state_dict(state, strict=False)


def apply_init_cfg(module: nn.Module, init_cfg: Union[dict, Sequence[dict], None]) -> None:
    """Apply mmcv-style init configs: Constant, Normal, Xavier, Kaiming or Pretrained.

    Each dict has ``type``, ``layer`` (class names, e.g. ``'Conv2d'`` or ``['_BatchNorm',
    'GroupNorm']``) and the initialiser's arguments (``val``, ``std``, ``bias``, ``mode`` ...).
    ``Pretrained`` takes ``checkpoint`` and optional ``prefix``.

    Raises:
        ValueError: Unknown ``type`` or a missing ``layer``.
    """
    if init_cfg is None:
        return
    for cfg in [init_cfg] if isinstance(init_cfg, dict) else list(init_cfg):
        kind = cfg.get("type")
        if kind not in _INIT_TYPES:
            raise ValueError(f"init_cfg type {kind!r} is not supported; use one of {_INIT_TYPES}")
        if kind == "Pretrained":
            load_pretrained(module, cfg["checkpoint"], cfg.get("prefix"))
            continue
        layers = cfg.get("layer")
        if layers is None:
            raise ValueError(f'init_cfg {cfg!r} needs "layer" (e.g. layer="Conv2d")')
        layers = [layers] if isinstance(layers, str) else list(layers)
        for sub in module.modules():
            if _matches(sub, layers):
                _init_module(sub, cfg)
