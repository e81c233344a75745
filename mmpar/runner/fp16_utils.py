"""Mixed precision helpers of mmcv 1.x (``auto_fp16``, ``force_fp32``, ...) on ``torch.autocast``.

As mmcv does on torch >= 1.6, the model is never cast to half: :func:`wrap_fp16_model` only
sets ``fp16_enabled = True`` on the modules that declare that attribute, and the decorators
then run the decorated method under ``torch.autocast`` for the device of its inputs
(``auto_fp16``) or with autocast turned off and its inputs in float32 (``force_fp32``).

The low-precision dtype is float16 on CUDA and bfloat16 on the CPU (and other devices), the
dtype PyTorch's CPU autocast is built for and that needs no loss scaling (see
:func:`autocast_dtype`).
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any

import torch
from torch import nn

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import IS_NPU_AVAILABLE as IS_NPU_AVAILABLE
from mmpar.utils import TORCH_VERSION as TORCH_VERSION
from mmpar.utils import digit_version as digit_version
from mmpar.utils.compat_errors import CheckValueError
from mmpar.utils.dist import allreduce_grads

__all__ = [
    "LossScaler",
    "allreduce_grads",
    "auto_fp16",
    "autocast_dtype",
    "cast_tensor_type",
    "force_fp32",
    "patch_forward_method",
    "patch_norm_fp32",
    "wrap_fp16_model",
]

_LOW_PRECISION = (torch.float16, torch.bfloat16)


def autocast_dtype(device_type: str) -> torch.dtype:
    """The autocast dtype mmpar uses on ``device_type``: float16 on CUDA, else bfloat16."""
    return torch.float16 if device_type == "cuda" else torch.bfloat16


def cast_tensor_type(inputs: Any, src_type: torch.dtype, dst_type: torch.dtype) -> Any:
    """Return ``inputs`` with every tensor of dtype ``src_type`` converted to ``dst_type``.

    Recurses into mappings, lists, tuples (named tuples too) and sets; tensors of other dtypes,
    modules, strings, arrays and other objects are returned as they are.

    Args:
        inputs: A tensor or a nested structure holding tensors.
        src_type: Dtype of the tensors to convert.
        dst_type: Dtype to convert them to.

    Returns:
        A structure of the same type as ``inputs``.
    """
    if isinstance(inputs, torch.Tensor):
        return inputs.to(dst_type) if inputs.dtype == src_type else inputs
    if isinstance(inputs, (str, bytes, nn.Module)):
        return inputs
    if isinstance(inputs, MutableMapping):
        out = copy.copy(inputs)  # keeps the mapping type (OrderedDict, defaultdict, ...)
        for key, value in inputs.items():
            out[key] = cast_tensor_type(value, src_type, dst_type)
        return out
    if isinstance(inputs, Mapping):
        # call-arg: the abstract Mapping takes no argument, but a concrete mapping type is
        # built from a dict (as in mmcv).
        converted = {k: cast_tensor_type(v, src_type, dst_type) for k, v in inputs.items()}
        return type(inputs)(converted)  # type: ignore[call-arg]
    if isinstance(inputs, (list, tuple, set, frozenset)):
        items = [cast_tensor_type(item, src_type, dst_type) for item in inputs]
        if isinstance(inputs, tuple) and hasattr(inputs, "_fields"):  # named tuple
            return type(inputs)(*items)
        return type(inputs)(items)
    return inputs


def _first_tensor(obj: Any) -> torch.Tensor | None:
    if isinstance(obj, torch.Tensor):
        return obj
    if isinstance(obj, Mapping):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        for item in obj:
            found = _first_tensor(item)
            if found is not None:
                return found
    return None


def _device_type(owner: Any, args: tuple, kwargs: dict) -> str:
    """The device type of the first tensor argument, else of the module's parameters."""
    tensor = _first_tensor([args, kwargs])
    if tensor is None and isinstance(owner, nn.Module):
        tensor = next(owner.parameters(), None)
    return tensor.device.type if tensor is not None else "cpu"


def _positional_names(func: Callable) -> list[str]:
    params = inspect.signature(func).parameters.values()
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in kinds]


def _cast_arguments(
    names: list[str],
    selected: Iterable[str] | None,
    args: tuple,
    kwargs: dict,
    cast: Callable[[Any], Any],
) -> tuple[list, dict]:
    """Apply ``cast`` to the arguments named in ``selected``; to every argument when None."""
    if selected is None:
        return [cast(a) for a in args], {k: cast(v) for k, v in kwargs.items()}
    chosen = set(selected)
    new_args = [cast(a) if n in chosen else a for n, a in zip(names, args)]
    new_args += list(args[len(new_args) :])  # extra *args have no name to select them by
    return new_args, {k: cast(v) if k in chosen else v for k, v in kwargs.items()}


def _precision_method(
    func: Callable, decorator: str, supported_types: tuple, run: Callable[..., Any]
) -> Callable:
    """Wrap method ``func``: check its owner's type; call it plainly until ``fp16_enabled``.

    Once the owner's ``fp16_enabled`` is True, ``run(device_type, args, kwargs)`` calls it.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        owner = args[0] if args else None
        if not isinstance(owner, supported_types):
            raise TypeError(
                f"@{decorator} decorates methods of {supported_types} only, but "
                f"{func.__qualname__} was called on a {type(owner).__name__}"
            )
        if not getattr(owner, "fp16_enabled", False):
            return func(*args, **kwargs)
        return run(_device_type(owner, args[1:], kwargs), args, kwargs)

    return wrapper


def auto_fp16(
    apply_to: Iterable[str] | None = None,
    out_fp32: bool = False,
    supported_types: tuple = (nn.Module,),
) -> Callable:
    """Decorate a module method to run in mixed precision once ``fp16_enabled`` is True.

    Until the module's ``fp16_enabled`` attribute is True (see :func:`wrap_fp16_model`) the
    method runs unchanged. Then its float32 tensor arguments named in ``apply_to`` are cast to
    the low-precision dtype and it runs under ``torch.autocast`` for the device of its inputs:
    float16 on CUDA, bfloat16 on the CPU.

    Args:
        apply_to: Names of the arguments to cast; None casts them all.
        out_fp32: Cast low-precision tensors in the result back to float32.
        supported_types: Classes whose methods may be decorated.

    Raises:
        TypeError: The method is called on an object that is not an instance of
            ``supported_types``.

    Example:
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fp16_enabled = False
        ...         self.fc = nn.Linear(4, 2)
        ...     @auto_fp16(apply_to=('x',), out_fp32=True)
        ...     def forward(self, x):
        ...         return self.fc(x)
    """

    def decorator(func: Callable) -> Callable:
        names = _positional_names(func)

        def run(device_type: str, args: tuple, kwargs: dict) -> Any:
            low = autocast_dtype(device_type)
            new_args, new_kwargs = _cast_arguments(
                names, apply_to, args, kwargs, lambda x: cast_tensor_type(x, torch.float32, low)
            )
            with torch.autocast(device_type=device_type, dtype=low):
                output = func(*new_args, **new_kwargs)
            return cast_tensor_type(output, low, torch.float32) if out_fp32 else output

        return _precision_method(func, "auto_fp16", supported_types, run)

    return decorator


def _to_fp32(value: Any) -> Any:
    for low in _LOW_PRECISION:
        value = cast_tensor_type(value, low, torch.float32)
    return value


def force_fp32(apply_to: Iterable[str] | None = None, out_fp16: bool = False) -> Callable:
    """Decorate a module method to run in float32 once ``fp16_enabled`` is True.

    Until the module's ``fp16_enabled`` attribute is True the method runs unchanged. Then its
    float16/bfloat16 tensor arguments named in ``apply_to`` are cast to float32 and it runs with
    autocast turned off (e.g. a loss inside an ``auto_fp16`` forward).

    Args:
        apply_to: Names of the arguments to cast; None casts them all.
        out_fp16: Cast float32 tensors in the result to the low-precision dtype of the device
            (float16 on CUDA, bfloat16 on the CPU).

    Raises:
        TypeError: The method is called on an object that is not an ``nn.Module``.
    """

    def decorator(func: Callable) -> Callable:
        names = _positional_names(func)

        def run(device_type: str, args: tuple, kwargs: dict) -> Any:
            new_args, new_kwargs = _cast_arguments(names, apply_to, args, kwargs, _to_fp32)
            with torch.autocast(device_type=device_type, enabled=False):
                output = func(*new_args, **new_kwargs)
            if out_fp16:
                output = cast_tensor_type(output, torch.float32, autocast_dtype(device_type))
            return output

        return _precision_method(func, "force_fp32", (nn.Module,), run)

    return decorator


def wrap_fp16_model(model: nn.Module) -> None:
    """Turn on ``auto_fp16``/``force_fp32`` in ``model``: set ``fp16_enabled = True``.

    Only modules that have an ``fp16_enabled`` attribute are changed; the weights stay float32
    (autocast chooses the precision of each operation), as in mmcv on torch >= 1.6.
    """
    for module in model.modules():
        if hasattr(module, "fp16_enabled"):
            # assignment: torch types a module's attributes as Tensor | Module; this one is
            # the plain bool flag that auto_fp16/force_fp32 read.
            module.fp16_enabled = True  # type: ignore[assignment]


def patch_forward_method(
    func: Callable, src_type: torch.dtype, dst_type: torch.dtype, convert_output: bool = True
) -> Callable:
    """Wrap ``func`` so its ``src_type`` tensor inputs arrive as ``dst_type``.

    Args:
        func: The forward method to wrap.
        src_type: Dtype of the inputs to convert.
        dst_type: Dtype the wrapped function receives.
        convert_output: Convert ``dst_type`` tensors of the result back to ``src_type``.
    """

    @functools.wraps(func)
    def forward(*args: Any, **kwargs: Any) -> Any:
        output = func(
            *cast_tensor_type(args, src_type, dst_type),
            **cast_tensor_type(kwargs, src_type, dst_type),
        )
        return cast_tensor_type(output, dst_type, src_type) if convert_output else output

    return forward


def patch_norm_fp32(module: nn.Module) -> nn.Module:
    """Keep normalisation layers of a half-precision model in float32 (in place).

    BatchNorm and GroupNorm layers are cast to float32; GroupNorm's forward also takes float16
    inputs to float32 and its outputs back. Only needed for a model cast with ``.half()``.

    Returns:
        ``module``.
    """
    for sub in module.modules():
        if isinstance(sub, (nn.modules.batchnorm._BatchNorm, nn.GroupNorm)):
            sub.float()
            if isinstance(sub, nn.GroupNorm):
                # method-assign: patching this instance's forward is the point (as mmcv does).
                sub.forward = patch_forward_method(  # type: ignore[method-assign]
                    sub.forward, torch.half, torch.float
                )
    return module


class LossScaler:
    """Loss scaling for float16 training: static, or dynamic (halve on overflow, then grow).

    In dynamic mode, a step whose gradients hold inf/NaN divides the scale by
    ``scale_factor`` (not below 1); after ``scale_window`` steps without overflow it is
    multiplied by ``scale_factor`` again. mmpar's :class:`Fp16OptimizerHook` uses
    ``torch.amp.GradScaler``; this class is kept for code that drives scaling itself.

    Args:
        init_scale: Initial scale.
        mode: ``'dynamic'`` or ``'static'``.
        scale_factor: Factor of each change.
        scale_window: Overflow-free steps before the scale grows.

    Raises:
        AssertionError: ``mode`` is neither (a ValueError too).
    """

    def __init__(
        self,
        init_scale: float = 2**32,
        mode: str = "dynamic",
        scale_factor: float = 2.0,
        scale_window: int = 1000,
    ) -> None:
        if mode not in ("dynamic", "static"):
            raise CheckValueError(f"LossScaler mode must be 'dynamic' or 'static', got {mode!r}")
        self.cur_scale = init_scale
        self.cur_iter = 0
        self.mode = mode
        self.last_overflow_iter = -1
        self.scale_factor = scale_factor
        self.scale_window = scale_window

    def has_overflow(self, params: Iterable[torch.Tensor]) -> bool:
        """Whether any gradient of ``params`` holds inf or NaN (always False when static)."""
        if self.mode != "dynamic":
            return False
        return any(p.grad is not None and self._has_inf_or_nan(p.grad) for p in params)

    @staticmethod
    def _has_inf_or_nan(x: torch.Tensor) -> bool:
        return not bool(torch.isfinite(x.detach()).all())

    def update_scale(self, overflow: bool) -> None:
        """Record one step: shrink the scale on ``overflow``, grow it after a clean window."""
        if self.mode != "dynamic":
            return
        if overflow:
            self.cur_scale = max(self.cur_scale / self.scale_factor, 1)
            self.last_overflow_iter = self.cur_iter
        elif (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
            self.cur_scale *= self.scale_factor
        self.cur_iter += 1

    _STATE = ("cur_scale", "cur_iter", "mode", "last_overflow_iter", "scale_factor", "scale_window")

    def state_dict(self) -> dict:
        """The scaler's state (scale, counters and settings)."""
        return {key: getattr(self, key) for key in self._STATE}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict`.

        Raises:
            KeyError: An entry is missing.
        """
        for key in self._STATE:
            setattr(self, key, state_dict[key])

    @property
    def loss_scale(self) -> float:
        """The current scale."""
        return self.cur_scale
