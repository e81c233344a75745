"""Weight initialisation from mmcv-style ``init_cfg`` dicts (mmcv's ``initialize``).

An ``init_cfg`` is a dict, or a list of dicts, each naming an initialiser by ``type``:

========== =================================================================================
type       arguments (besides ``layer``, ``bias``, ``bias_prob``, ``override``)
========== =================================================================================
Constant   ``val``
Xavier     ``gain=1``, ``distribution='normal'`` (or ``'uniform'``)
Normal     ``mean=0``, ``std=1``
TruncNormal ``mean=0``, ``std=1``, ``a=-2``, ``b=2`` (cut-offs)
Uniform    ``a=0``, ``b=1``
Kaiming    ``a=0``, ``mode='fan_out'``, ``nonlinearity='relu'``, ``distribution='normal'``
Caffe2Xavier (Kaiming uniform, fan-in, leaky-relu with a=1)
Pretrained ``checkpoint``, ``prefix=None``, ``map_location=None``
========== =================================================================================

``layer`` names the module classes to initialise (a class name or the name of any base
class, e.g. ``'Conv2d'`` or ``'_BatchNorm'``); their ``weight`` gets the distribution and
their ``bias`` the constant ``bias`` (or ``log(p / (1 - p))`` for ``bias_prob=p``).
``override=dict(name='fc', ...)`` initialises the whole sub-module ``module.fc`` instead, with
its own arguments (or the parent's when only ``name`` is given); it wins over ``layer``.

While :meth:`BaseModule.init_weights` runs, each initialiser records in the module's
``_params_init_info`` how every parameter it changed was initialised.
"""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Callable
from typing import Any, Union

import torch
from torch import nn

from mmpar.utils import print_log
from mmpar.utils.compat_errors import MessageKeyError

from .checkpoint import _load_checkpoint, state_under_prefix
from .model_state import load_state_dict

__all__ = [
    "InitCfgError",
    "PretrainedKeyError",
    "UnknownInitTypeError",
    "apply_init_cfg",
    "bias_init_with_prob",
    "caffe2_xavier_init",
    "constant_init",
    "initialize",
    "kaiming_init",
    "load_pretrained",
    "normal_init",
    "trunc_normal_",
    "trunc_normal_init",
    "uniform_init",
    "update_init_info",
    "xavier_init",
]

_LOGGER = "mmpar"  # the logger name every mmpar component logs to


class InitCfgError(ValueError, AssertionError):
    """An ``init_cfg`` is malformed (a ValueError; an AssertionError where mmcv asserted)."""


class UnknownInitTypeError(MessageKeyError, ValueError):
    """``init_cfg`` names an initialiser that does not exist (a KeyError, as in mmcv)."""


class PretrainedKeyError(MessageKeyError, AssertionError):
    """A pretrained checkpoint holds nothing for the module (or nothing under ``prefix``).

    A KeyError (mmpar's ``load_pretrained`` contract) and an AssertionError (what mmcv raised
    for a prefix missing from the checkpoint).
    """


# ------------------------------------------------------------------ weight distributions
def _check_distribution(distribution: str) -> None:
    if distribution not in ("normal", "uniform"):
        raise InitCfgError(f"distribution must be 'normal' or 'uniform', got {distribution!r}")


def _constant(weight: torch.Tensor, val: float) -> None:
    nn.init.constant_(weight, val)


def _xavier(weight: torch.Tensor, gain: float = 1, distribution: str = "normal") -> None:
    fill = nn.init.xavier_uniform_ if distribution == "uniform" else nn.init.xavier_normal_
    fill(weight, gain=gain)


def _normal(weight: torch.Tensor, mean: float = 0, std: float = 1) -> None:
    nn.init.normal_(weight, mean, std)


def _trunc_normal(
    weight: torch.Tensor, mean: float = 0, std: float = 1, a: float = -2, b: float = 2
) -> None:
    nn.init.trunc_normal_(weight, mean, std, a, b)


def _uniform(weight: torch.Tensor, a: float = 0, b: float = 1) -> None:
    nn.init.uniform_(weight, a, b)


def _kaiming(
    weight: torch.Tensor,
    a: float = 0,
    mode: str = "fan_out",
    nonlinearity: str = "relu",
    distribution: str = "normal",
) -> None:
    fill = nn.init.kaiming_uniform_ if distribution == "uniform" else nn.init.kaiming_normal_
    fill(weight, a=a, mode=mode, nonlinearity=nonlinearity)


def _caffe2_xavier(weight: torch.Tensor) -> None:
    # Caffe2's XavierFill is a fan-in Kaiming uniform fill with a leaky-relu slope of 1.
    nn.init.kaiming_uniform_(weight, a=1, mode="fan_in", nonlinearity="leaky_relu")


_FILLS: dict[str, Callable[..., None]] = {
    "Constant": _constant,
    "Xavier": _xavier,
    "Normal": _normal,
    "TruncNormal": _trunc_normal,
    "Uniform": _uniform,
    "Kaiming": _kaiming,
    "Caffe2Xavier": _caffe2_xavier,
}
_INIT_TYPES = (*_FILLS, "Pretrained")


def bias_init_with_prob(prior_prob: float) -> float:
    """Bias whose sigmoid is ``prior_prob``: ``-log((1 - p) / p)`` (focal-loss style heads)."""
    return float(-math.log((1 - prior_prob) / prior_prob))


def _fill_module(module: nn.Module, fill: Callable[..., None], bias: float, **args: Any) -> None:
    """Fill ``module.weight`` with ``fill(weight, **args)`` and ``module.bias`` with ``bias``.

    The one place a module's weight and bias are set: the ``init_cfg`` initialisers and the
    ``*_init`` functions below all come here. A missing or None weight/bias is skipped.
    """
    weight, bias_param = getattr(module, "weight", None), getattr(module, "bias", None)
    if isinstance(weight, torch.Tensor):
        fill(weight, **args)
    if isinstance(bias_param, torch.Tensor):
        nn.init.constant_(bias_param, bias)


# ---------------------------------------------- mmcv's module initialisers (mmcv.cnn names)
def constant_init(module: nn.Module, val: float, bias: float = 0) -> None:
    """Set ``module.weight`` to ``val`` and ``module.bias`` to ``bias`` (absent ones skipped)."""
    _fill_module(module, _constant, bias, val=val)


def xavier_init(
    module: nn.Module, gain: float = 1, bias: float = 0, distribution: str = "normal"
) -> None:
    """Xavier-fill ``module.weight`` (``'normal'`` or ``'uniform'``) and set its bias.

    Raises:
        AssertionError: ``distribution`` is neither (also a ValueError).
    """
    _check_distribution(distribution)
    _fill_module(module, _xavier, bias, gain=gain, distribution=distribution)


def normal_init(module: nn.Module, mean: float = 0, std: float = 1, bias: float = 0) -> None:
    """Fill ``module.weight`` from N(mean, std²) and set its bias to ``bias``."""
    _fill_module(module, _normal, bias, mean=mean, std=std)


def trunc_normal_init(
    module: nn.Module,
    mean: float = 0,
    std: float = 1,
    a: float = -2,
    b: float = 2,
    bias: float = 0,
) -> None:
    """Fill ``module.weight`` from N(mean, std²) cut to ``[a, b]`` and set its bias."""
    _fill_module(module, _trunc_normal, bias, mean=mean, std=std, a=a, b=b)


def uniform_init(module: nn.Module, a: float = 0, b: float = 1, bias: float = 0) -> None:
    """Fill ``module.weight`` from U(a, b) and set its bias to ``bias``."""
    _fill_module(module, _uniform, bias, a=a, b=b)


def kaiming_init(
    module: nn.Module,
    a: float = 0,
    mode: str = "fan_out",
    nonlinearity: str = "relu",
    bias: float = 0,
    distribution: str = "normal",
) -> None:
    """Kaiming-fill ``module.weight`` (He et al.) and set its bias to ``bias``.

    Raises:
        AssertionError: ``distribution`` is not ``'normal'`` or ``'uniform'`` (also a ValueError).
    """
    _check_distribution(distribution)
    _fill_module(
        module, _kaiming, bias, a=a, mode=mode, nonlinearity=nonlinearity, distribution=distribution
    )


def caffe2_xavier_init(module: nn.Module, bias: float = 0) -> None:
    """Caffe2's ``XavierFill`` on ``module.weight`` and ``bias`` on its bias."""
    _fill_module(module, _caffe2_xavier, bias)


def trunc_normal_(
    tensor: torch.Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0
) -> torch.Tensor:
    """Fill ``tensor`` in place from N(mean, std²) truncated to ``[a, b]``; return it.

    torch's ``nn.init.trunc_normal_`` (the same inverse-CDF method mmcv copied from it).
    """
    return nn.init.trunc_normal_(tensor, mean, std, a, b)


# ---------------------------------------------------------------- init-info bookkeeping
def _fingerprint(param: torch.Tensor) -> tuple[float, float]:
    data = param.detach().float()
    return float(data.sum()), float((data * data).sum())


def update_init_info(module: nn.Module, init_info: str) -> None:
    """Record ``init_info`` for every parameter of ``module`` whose values changed.

    Uses the ``_params_init_info`` table that :meth:`BaseModule.init_weights` shares with all
    sub-modules while it runs.

    Raises:
        AssertionError: ``module`` has no ``_params_init_info`` (called outside
            ``init_weights``), or a parameter was added or replaced during ``init_weights``.
    """
    table = getattr(module, "_params_init_info", None)
    if table is None:
        raise AssertionError(
            f"{type(module).__name__} has no _params_init_info: update_init_info only works "
            "while BaseModule.init_weights runs"
        )
    for name, param in module.named_parameters():
        if param not in table:
            raise AssertionError(
                f"parameter {name!r} of {type(module).__name__} appeared while init_weights ran; "
                "create parameters in __init__, not in init_weights"
            )
        fingerprint = _fingerprint(param)
        if table[param]["tmp_mean_value"] != fingerprint:
            table[param]["init_info"] = init_info
            table[param]["tmp_mean_value"] = fingerprint


def _record(module: nn.Module, info: str) -> None:
    if hasattr(module, "_params_init_info"):
        update_init_info(module, info)


# ----------------------------------------------------------------------- initialisers
def _class_names(module: nn.Module) -> set[str]:
    # Every class along the MRO, so 'BatchNorm2d', '_BatchNorm' and base classes all match.
    return {cls.__name__ for cls in type(module).__mro__}


class _Initializer:
    """One parsed init config: which layers, the weight fill and its arguments, the bias."""

    def __init__(self, cfg: dict) -> None:
        cfg = dict(cfg)
        self.kind = cfg.pop("type")
        self.fill = _FILLS[self.kind]
        bias, bias_prob, layer = (
            cfg.pop("bias", 0),
            cfg.pop("bias_prob", None),
            cfg.pop("layer", None),
        )
        if isinstance(bias, bool) or not isinstance(bias, (int, float)):
            raise TypeError(f"init_cfg bias must be a number, but got {type(bias).__name__}")
        if bias_prob is not None and not isinstance(bias_prob, float):
            raise TypeError(f"init_cfg bias_prob must be a float, got {type(bias_prob).__name__}")
        if layer is not None and not isinstance(layer, (str, list, tuple)):
            raise TypeError(
                f"init_cfg layer must be a class name or a list of them, got {type(layer).__name__}"
            )
        self.bias = bias_init_with_prob(bias_prob) if bias_prob is not None else bias
        self.layers = [layer] if isinstance(layer, str) else list(layer or [])
        try:
            bound = inspect.signature(self.fill).bind(None, **cfg)
        except TypeError as err:
            allowed = [p for p in inspect.signature(self.fill).parameters if p != "weight"]
            raise TypeError(
                f"init_cfg of type {self.kind!r}: {err}; it takes {allowed} plus layer, bias, "
                f"bias_prob and override"
            ) from None
        self.args = {k: v for k, v in bound.arguments.items() if k != "weight"}
        bound.apply_defaults()
        self.all_args = {k: v for k, v in bound.arguments.items() if k != "weight"}
        if "distribution" in self.all_args:
            _check_distribution(self.all_args["distribution"])

    def info(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.all_args.items())
        return f"{self.kind}Init: {args + ', ' if args else ''}bias={self.bias}"

    def init_module(self, module: nn.Module) -> None:
        _fill_module(module, self.fill, self.bias, **self.args)

    def __call__(self, module: nn.Module, whole: bool = False) -> None:
        """Initialise the matching sub-modules of ``module`` (all of them when ``whole``)."""
        layers = set(self.layers)
        for sub in module.modules():
            if whole or layers & _class_names(sub):
                self.init_module(sub)
        _record(module, self.info())


def _prefixed(state: dict, prefix: str, checkpoint: str) -> dict:
    """The entries under ``prefix`` (with or without its trailing dot), prefix stripped."""
    prefix = prefix if prefix.endswith(".") else prefix + "."
    sub = state_under_prefix(state, prefix)
    if not sub:
        raise PretrainedKeyError(
            f"no weights in {checkpoint} match prefix {prefix!r}: the checkpoint's keys start "
            f"{list(state)[:3]}"
        )
    return sub


def load_pretrained(
    module: nn.Module,
    checkpoint: str,
    prefix: str | None = None,
    map_location: Any = None,
) -> None:
    """Load the weights of a checkpoint file into ``module`` (strict=False, safe loading).

    The file is read by :mod:`mmpar.runner.checkpoint` (a local path or
    ``torchvision://<model>``; tensors and plain containers only). It may be an mmcv/mmpar
    checkpoint or a bare state dict; a ``module.`` prefix (wrapped models) is dropped.

    Args:
        module: Module to load into.
        checkpoint: Path or ``torchvision://`` name of the file.
        prefix: Keep only the keys under ``prefix`` and strip it (``'backbone'`` or
            ``'backbone.'`` takes a classifier's backbone).
        map_location: Where tensors are loaded (None: the CPU).

    Raises:
        PretrainedKeyError: (a KeyError and an AssertionError) nothing in the file is under
            ``prefix`` or fits the module; lists a few keys of each.
    """
    loaded = _load_checkpoint(checkpoint, map_location if map_location is not None else "cpu")
    state = loaded.get("state_dict", loaded) if isinstance(loaded, dict) else loaded
    if not isinstance(state, dict):
        raise TypeError(f"{checkpoint} holds a {type(state).__name__}, not a state dict")
    state = {k[len("module.") :] if k.startswith("module.") else k: v for k, v in state.items()}
    if prefix:
        state = _prefixed(state, prefix, checkpoint)
    own = module.state_dict()
    if not any(k in own for k in state):
        raise PretrainedKeyError(
            f"no weights in {checkpoint} match {type(module).__name__} (prefix={prefix!r}); file "
            f"keys start {list(state)[:3]}, module keys start {list(own)[:3]}"
        )
    load_state_dict(module, state, strict=False)


def _pretrained(module: nn.Module, cfg: dict) -> None:
    cfg = dict(cfg)
    cfg.pop("type")
    try:
        bound = inspect.signature(load_pretrained).bind(module, **cfg)
    except TypeError as err:
        raise TypeError(
            f"init_cfg of type 'Pretrained': {err}; it takes checkpoint, prefix and map_location"
        ) from None
    args = bound.arguments
    where = f"load {args['prefix']} in model" if args.get("prefix") else "load model"
    print_log(f"{where} from: {args['checkpoint']}", logger=_LOGGER)
    load_pretrained(**args)
    _record(module, f"PretrainedInit: load from {args['checkpoint']}")


def _run(module: nn.Module, cfg: dict, whole: bool = False) -> None:
    kind = cfg.get("type")
    if kind not in _INIT_TYPES:
        raise UnknownInitTypeError(
            f"init_cfg type {kind!r} is not supported; use one of {list(_INIT_TYPES)}"
        )
    if kind == "Pretrained":
        _pretrained(module, cfg)
    else:
        _Initializer(cfg)(module, whole)


def _run_override(module: nn.Module, override: Union[dict, list], parent: dict) -> None:
    if not isinstance(override, (dict, list)):
        raise TypeError(f"init_cfg override must be a dict or a list of dicts, got {override!r}")
    for entry in [override] if isinstance(override, dict) else override:
        entry = copy.deepcopy(entry)
        name = entry.pop("name", None)
        if name is None:
            raise InitCfgError(f'init_cfg override needs "name" (a sub-module), got {entry}')
        if not entry:
            entry = dict(parent)  # only a name: the parent's initialiser and arguments
        elif "type" not in entry:
            raise InitCfgError(
                f'init_cfg override {dict(entry, name=name)} has arguments but no "type"'
            )
        sub = getattr(module, name, None)
        if not isinstance(sub, nn.Module):
            raise RuntimeError(
                f"init_cfg override names {name!r}, but {type(module).__name__} has no "
                f"sub-module of that name"
            )
        _run(sub, entry, whole=True)


def initialize(module: nn.Module, init_cfg: Union[dict, list]) -> None:
    """Initialise ``module`` from an ``init_cfg`` dict or list of dicts (mmcv's function).

    Example:
        >>> net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Linear(8, 2))
        >>> initialize(net, dict(type='Constant', layer='Conv2d', val=1, bias=2,
        ...                      override=dict(name='1', type='Normal', std=0.01)))

    Raises:
        TypeError: ``init_cfg`` is not a dict/list, or an argument has the wrong type or name.
        KeyError: Unknown ``type`` (:class:`UnknownInitTypeError`, also a ValueError).
        InitCfgError: Bad values (a ValueError and an AssertionError).
        RuntimeError: ``override`` names a missing sub-module.
    """
    if not isinstance(init_cfg, (dict, list, tuple)):
        raise TypeError(f"init_cfg must be a dict or a list of dicts, got {init_cfg!r}")
    for cfg in [init_cfg] if isinstance(init_cfg, dict) else init_cfg:
        cfg = copy.deepcopy(cfg)  # one cfg may be shared by many modules
        override = cfg.pop("override", None)
        _run(module, cfg)
        if override is not None:
            cfg.pop("layer", None)
            _run_override(module, override, cfg)


def apply_init_cfg(module: nn.Module, init_cfg: Union[dict, list, tuple, None]) -> None:
    """Apply ``init_cfg`` (None: nothing); every non-Pretrained entry must pick layers.

    Like :func:`initialize`, but an entry with neither ``layer`` nor ``override`` (which would
    initialise nothing) is an error here, since it is always a config mistake.

    Raises:
        ValueError: A missing ``layer``; an unknown ``type`` (also a KeyError).
    """
    if init_cfg is None:
        return
    for cfg in [init_cfg] if isinstance(init_cfg, dict) else list(init_cfg):
        if cfg.get("type") in _FILLS and "layer" not in cfg and "override" not in cfg:
            raise InitCfgError(f'init_cfg {cfg!r} needs "layer" (e.g. layer="Conv2d")')
    initialize(module, init_cfg if isinstance(init_cfg, dict) else list(init_cfg))
