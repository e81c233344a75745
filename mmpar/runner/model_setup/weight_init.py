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

Each ``type`` is a class registered under that name in :data:`INITIALIZERS` (``ConstantInit``,
``XavierInit``, ..., ``PretrainedInit``, mmcv's classes); a class a user registers there (a
:class:`BaseInit` subclass, or any callable taking the module) works the same way. The
``*_init(module, ...)`` functions (mmcv's ``constant_init`` & co) fill one module and are what
the classes apply.

While :meth:`BaseModule.init_weights` runs, each initialiser records in the module's
``_params_init_info`` how every parameter it changed was initialised.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable
from typing import Any, Union

import torch
from torch import nn

from mmpar.utils import print_log
from mmpar.utils.compat_errors import MessageKeyError
from mmpar.utils.registry import Registry, build_from_cfg

from ..checkpointing.format import _load_checkpoint, state_under_prefix
from ..checkpointing.model_state import load_state_dict

__all__ = [
    "INITIALIZERS",
    "BaseInit",
    "Caffe2XavierInit",
    "ConstantInit",
    "InitCfgError",
    "KaimingInit",
    "NormalInit",
    "PretrainedInit",
    "PretrainedKeyError",
    "TruncNormalInit",
    "UniformInit",
    "UnknownInitTypeError",
    "XavierInit",
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
    trunc_normal_(weight, mean, std, a, b)


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

    Sampled by inverting the normal CDF on uniforms drawn between the CDF values of ``a`` and
    ``b``, as mmcv 1.x does, so a seed gives the values it gave with mmcv. (torch 2.x's
    ``nn.init.trunc_normal_`` now redraws out-of-range normals instead: same distribution,
    different values.) Warns when ``mean`` is more than 2 std outside ``[a, b]``, where the
    method is inaccurate.
    """

    def normal_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in trunc_normal_: the distribution of the "
            "values may be incorrect",
            stacklevel=2,
        )
    with torch.no_grad():
        low, high = normal_cdf((a - mean) / std), normal_cdf((b - mean) / std)
        # erfinv maps U(2 low - 1, 2 high - 1) to N(0, 1/2) truncated to the standardised range.
        tensor.uniform_(2 * low - 1, 2 * high - 1)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0)).add_(mean)
        tensor.clamp_(min=a, max=b)  # rounding can step just outside the range
    return tensor


# ---------------------------------------------------------------- init-info bookkeeping
def _snapshot(param: torch.Tensor) -> dict:
    """What ``update_init_info`` compares for ``param``.

    mmcv's ``tmp_mean_value`` (the mean), and a fingerprint (sum and sum of squares) that also
    notices changes that keep the mean.
    """
    data = param.detach().float()
    return {
        "tmp_mean_value": data.mean(),
        "fingerprint": (float(data.sum()), float((data * data).sum())),
    }


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
        entry, now = table[param], _snapshot(param)
        # A table made by hand (mmcv's tests) has no fingerprint: the mean decides then.
        if (
            entry.get("tmp_mean_value") != now["tmp_mean_value"]
            or entry.get("fingerprint", now["fingerprint"]) != now["fingerprint"]
        ):
            entry["init_info"] = init_info
            entry.update(now)


def _record(module: nn.Module, info: str) -> None:
    if hasattr(module, "_params_init_info"):
        update_init_info(module, info)


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


# ----------------------------------------------------------------------- initialisers
INITIALIZERS = Registry("initializer")


def _class_names(module: nn.Module) -> set[str]:
    # Every class along the MRO (mmcv: the class and its direct bases), so 'BatchNorm2d',
    # '_BatchNorm' and deeper base classes all match.
    return {cls.__name__ for cls in type(module).__mro__}


class BaseInit:
    """Base of the ``init_cfg`` initialisers: which layers to touch and the bias to give them.

    A subclass registered in :data:`INITIALIZERS` implements :meth:`init_module` (one module)
    and :meth:`_get_init_info`; calling the initialiser on a model applies it to every
    sub-module whose class (or a base class) is named in ``layer``, or to all of them when
    ``wholemodule`` is set (an ``override``), and records the change in the init-info table.

    Args:
        bias: Value for the biases.
        bias_prob: If given, biases get ``bias_init_with_prob(bias_prob)`` instead.
        layer: Class name(s) of the layers to initialise.

    Raises:
        TypeError: ``bias`` is not a number, ``bias_prob`` not a float or ``layer`` not a
            str or a list of str.
    """

    def __init__(
        self,
        *,
        bias: float = 0,
        bias_prob: float | None = None,
        layer: Union[str, list, None] = None,
    ) -> None:
        self.wholemodule = False
        if isinstance(bias, bool) or not isinstance(bias, (int, float)):
            raise TypeError(f"init_cfg bias must be a number, but got {type(bias).__name__}")
        if bias_prob is not None and not isinstance(bias_prob, float):
            raise TypeError(f"init_cfg bias_prob must be a float, got {type(bias_prob).__name__}")
        if layer is not None and not isinstance(layer, (str, list, tuple)):
            raise TypeError(
                f"init_cfg layer must be a class name or a list of them, got {type(layer).__name__}"
            )
        self.bias = bias_init_with_prob(bias_prob) if bias_prob is not None else bias
        self.layer = [layer] if isinstance(layer, str) else list(layer or [])

    def init_module(self, module: nn.Module) -> None:
        """Initialise the weight and bias of one module (no recursion)."""
        raise NotImplementedError

    def __call__(self, module: nn.Module) -> None:
        """Initialise the selected sub-modules of ``module`` (children before parents)."""
        layers = set(self.layer)

        def visit(sub: nn.Module) -> None:
            if self.wholemodule or layers & _class_names(sub):
                self.init_module(sub)

        # ``apply``'s order (children first) is mmcv's, so one seed gives mmcv's weights.
        module.apply(visit)
        _record(module, self._get_init_info())

    def _get_init_info(self) -> str:
        return f"{type(self).__name__}, bias={self.bias}"


@INITIALIZERS.register_module(name="Constant")
class ConstantInit(BaseInit):
    """Weights set to ``val``, biases to ``bias``.

    Args:
        val: The weight value.
        **kwargs: ``bias``, ``bias_prob``, ``layer`` (see :class:`BaseInit`).
    """

    def __init__(self, val: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.val = val

    def init_module(self, module: nn.Module) -> None:
        """Fill one module (see :func:`constant_init`)."""
        constant_init(module, self.val, self.bias)

    def _get_init_info(self) -> str:
        return f"{type(self).__name__}: val={self.val}, bias={self.bias}"


@INITIALIZERS.register_module(name="Xavier")
class XavierInit(BaseInit):
    """Xavier/Glorot weights (Glorot & Bengio, 2010).

    Args:
        gain: Scaling factor.
        distribution: ``'normal'`` or ``'uniform'``.
        **kwargs: ``bias``, ``bias_prob``, ``layer`` (see :class:`BaseInit`).

    Raises:
        InitCfgError: Another ``distribution`` (a ValueError and an AssertionError).
    """

    def __init__(self, gain: float = 1, distribution: str = "normal", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _check_distribution(distribution)
        self.gain = gain
        self.distribution = distribution

    def init_module(self, module: nn.Module) -> None:
        """Fill one module (see :func:`xavier_init`)."""
        xavier_init(module, self.gain, self.bias, self.distribution)

    def _get_init_info(self) -> str:
        return (
            f"{type(self).__name__}: gain={self.gain}, distribution={self.distribution}, "
            f"bias={self.bias}"
        )


@INITIALIZERS.register_module(name="Normal")
class NormalInit(BaseInit):
    """Weights drawn from N(mean, std²).

    Args:
        mean: Mean of the distribution.
        std: Standard deviation.
        **kwargs: ``bias``, ``bias_prob``, ``layer`` (see :class:`BaseInit`).
    """

    def __init__(self, mean: float = 0, std: float = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mean = mean
        self.std = std

    def init_module(self, module: nn.Module) -> None:
        """Fill one module (see :func:`normal_init`)."""
        normal_init(module, self.mean, self.std, self.bias)

    def _get_init_info(self) -> str:
        return f"{type(self).__name__}: mean={self.mean}, std={self.std}, bias={self.bias}"


@INITIALIZERS.register_module(name="TruncNormal")
class TruncNormalInit(BaseInit):
    """Weights drawn from N(mean, std²) truncated to ``[a, b]``.

    Args:
        mean: Mean of the distribution.
        std: Standard deviation.
        a: Lower cut-off.
        b: Upper cut-off.
        **kwargs: ``bias``, ``bias_prob``, ``layer`` (see :class:`BaseInit`).
    """

    def __init__(
        self, mean: float = 0, std: float = 1, a: float = -2, b: float = 2, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.mean = mean
        self.std = std
        self.a = a
        self.b = b

    def init_module(self, module: nn.Module) -> None:
        """Fill one module (see :func:`trunc_normal_init`)."""
        trunc_normal_init(module, self.mean, self.std, self.a, self.b, self.bias)

    def _get_init_info(self) -> str:
        return (
            f"{type(self).__name__}: a={self.a}, b={self.b}, mean={self.mean}, std={self.std}, "
            f"bias={self.bias}"
        )


@INITIALIZERS.register_module(name="Uniform")
class UniformInit(BaseInit):
    """Weights drawn from U(a, b).

    Args:
        a: Lower bound.
        b: Upper bound.
        **kwargs: ``bias``, ``bias_prob``, ``layer`` (see :class:`BaseInit`).
    """

    def __init__(self, a: float = 0.0, b: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.a = a
        self.b = b

    def init_module(self, module: nn.Module) -> None:
        """Fill one module (see :func:`uniform_init`)."""
        uniform_init(module, self.a, self.b, self.bias)

    def _get_init_info(self) -> str:
        return f"{type(self).__name__}: a={self.a}, b={self.b}, bias={self.bias}"


@INITIALIZERS.register_module(name="Kaiming")
class KaimingInit(BaseInit):
    """Kaiming/He weights (He et al., 2015).

    Args:
        a: Negative slope of the rectifier (for ``'leaky_relu'``).
        mode: ``'fan_in'`` or ``'fan_out'``.
        nonlinearity: The ``nn.functional`` name of the activation.
        distribution: ``'normal'`` or ``'uniform'``.
        **kwargs: ``bias``, ``bias_prob``, ``layer`` (see :class:`BaseInit`).

    Raises:
        InitCfgError: Another ``distribution`` (a ValueError and an AssertionError).
    """

    def __init__(
        self,
        a: float = 0,
        mode: str = "fan_out",
        nonlinearity: str = "relu",
        distribution: str = "normal",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        _check_distribution(distribution)
        self.a = a
        self.mode = mode
        self.nonlinearity = nonlinearity
        self.distribution = distribution

    def init_module(self, module: nn.Module) -> None:
        """Fill one module (see :func:`kaiming_init`)."""
        kaiming_init(module, self.a, self.mode, self.nonlinearity, self.bias, self.distribution)

    def _get_init_info(self) -> str:
        return (
            f"{type(self).__name__}: a={self.a}, mode={self.mode}, "
            f"nonlinearity={self.nonlinearity}, distribution={self.distribution}, "
            f"bias={self.bias}"
        )


@INITIALIZERS.register_module(name="Caffe2Xavier")
class Caffe2XavierInit(KaimingInit):
    """Caffe2's ``XavierFill``: Kaiming uniform, fan-in, leaky-relu slope 1.

    Args:
        **kwargs: ``bias``, ``bias_prob``, ``layer`` (see :class:`BaseInit`).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            a=1, mode="fan_in", nonlinearity="leaky_relu", distribution="uniform", **kwargs
        )


@INITIALIZERS.register_module(name="Pretrained")
class PretrainedInit:
    """Load a module's weights from a checkpoint (see :func:`load_pretrained`).

    Args:
        checkpoint: Path or URL of the checkpoint.
        prefix: Take only the sub-state under this prefix (``'backbone.'``).
        map_location: Where tensors are loaded (None: the CPU).
    """

    def __init__(
        self, checkpoint: str, prefix: str | None = None, map_location: Any = None
    ) -> None:
        self.checkpoint = checkpoint
        self.prefix = prefix
        self.map_location = map_location

    def __call__(self, module: nn.Module) -> None:
        """Load the checkpoint into ``module`` (non-strict) and record it."""
        where = f"load {self.prefix} in model" if self.prefix else "load model"
        print_log(f"{where} from: {self.checkpoint}", logger=_LOGGER)
        load_pretrained(module, self.checkpoint, self.prefix, self.map_location)
        _record(module, self._get_init_info())

    def _get_init_info(self) -> str:
        return f"{type(self).__name__}: load from {self.checkpoint}"


def _initialize(module: nn.Module, cfg: dict, wholemodule: bool = False) -> None:
    kind = cfg.get("type")
    if isinstance(kind, str) and INITIALIZERS.get(kind) is None:
        raise UnknownInitTypeError(
            f"init_cfg type {kind!r} is not supported; use one of {list(INITIALIZERS.module_dict)}"
        )
    func = build_from_cfg(cfg, INITIALIZERS)
    func.wholemodule = wholemodule
    func(module)


def _initialize_override(module: nn.Module, override: Union[dict, list], cfg: dict) -> None:
    if not isinstance(override, (dict, list)):
        raise TypeError(f"init_cfg override must be a dict or a list of dicts, got {override!r}")
    for entry in [override] if isinstance(override, dict) else override:
        entry = copy.deepcopy(entry)
        name = entry.pop("name", None)
        if name is None:
            raise InitCfgError(f'init_cfg override needs "name" (a sub-module), got {entry}')
        if not entry:
            entry = dict(cfg)  # only a name: the parent's initialiser and arguments
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
        _initialize(sub, entry, wholemodule=True)


def initialize(module: nn.Module, init_cfg: Union[dict, list]) -> None:
    """Initialise ``module`` from an ``init_cfg`` dict or list of dicts (mmcv's function).

    Each dict is built from :data:`INITIALIZERS` (so initialisers registered there by users
    work too) and called on ``module``; its ``override`` entries are then applied to whole
    sub-modules.

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
        _initialize(module, cfg)
        if override is not None:
            cfg.pop("layer", None)
            _initialize_override(module, override, cfg)


def _selects_layers(cfg: dict) -> bool:
    kind = cfg.get("type")
    cls = INITIALIZERS.get(kind) if isinstance(kind, str) else kind
    if not (isinstance(cls, type) and issubclass(cls, BaseInit)):
        return True  # Pretrained, or an initialiser of the user's: it knows what it loads
    return "layer" in cfg or "override" in cfg


def apply_init_cfg(module: nn.Module, init_cfg: Union[dict, list, tuple, None]) -> None:
    """Apply ``init_cfg`` (None: nothing); every layer-wise entry must pick layers.

    Like :func:`initialize`, but an entry with neither ``layer`` nor ``override`` (which would
    initialise nothing) is an error here, since it is always a config mistake.

    Raises:
        ValueError: A missing ``layer``; an unknown ``type`` (also a KeyError).
    """
    if init_cfg is None:
        return
    for cfg in [init_cfg] if isinstance(init_cfg, dict) else list(init_cfg):
        if not _selects_layers(cfg):
            raise InitCfgError(f'init_cfg {cfg!r} needs "layer" (e.g. layer="Conv2d")')
    initialize(module, init_cfg if isinstance(init_cfg, dict) else list(init_cfg))
