"""FLOPs and parameter counts of a model, per layer (mmcv 1.x's ``get_model_complexity_info``).

One multiply-add counts as one FLOP. Counting works through forward hooks on the layer types
of :func:`get_modules_mapping` (matched by exact type, as mmcv does, so the numbers agree with
model-zoo tables computed with mmcv); other modules sum their children. The counters live in
the attributes mmcv used (``__flops__``, ``__params__``, ``__batch_counter__``) because tools
written for mmcv read them.
"""

from __future__ import annotations

import math
import sys
import warnings
from typing import Any, Callable, TextIO

import torch
from torch import nn

from ..bricks import wrappers

__all__ = [
    "add_batch_counter_hook_function",
    "add_batch_counter_variables_or_reset",
    "add_flops_counter_variable_or_reset",
    "add_flops_counting_methods",
    "batch_counter_hook",
    "compute_average_flops_cost",
    "conv_flops_counter_hook",
    "deconv_flops_counter_hook",
    "empty_flops_counter_hook",
    "flops_to_string",
    "get_model_complexity_info",
    "get_model_parameters_number",
    "get_modules_mapping",
    "is_supported_instance",
    "linear_flops_counter_hook",
    "norm_flops_counter_hook",
    "params_to_string",
    "pool_flops_counter_hook",
    "print_model_with_flops",
    "relu_flops_counter_hook",
    "remove_batch_counter_hook_function",
    "remove_flops_counter_hook_function",
    "reset_flops_count",
    "start_flops_count",
    "stop_flops_count",
    "upsample_flops_counter_hook",
]


def get_model_complexity_info(
    model: nn.Module,
    input_shape: tuple,
    print_per_layer_stat: bool = True,
    as_strings: bool = True,
    input_constructor: Callable | None = None,
    flush: bool = False,
    ost: TextIO | None = None,
) -> tuple:
    """Count the FLOPs and parameters of ``model`` for one input of ``input_shape``.

    Counted layers: Conv1d/2d/3d, ConvTranspose2d, Linear, ReLU/PReLU/ELU/LeakyReLU/ReLU6,
    max/avg/adaptive pools (1d/2d/3d), BatchNorm1d/2d/3d, GroupNorm, InstanceNorm1d/2d/3d,
    LayerNorm, Upsample, and mmpar's ``Conv2d``/``Conv3d``/``ConvTranspose2d``/``Linear``/
    ``MaxPool2d``/``MaxPool3d`` wrappers. Parameters count those with ``requires_grad``.

    Args:
        model: The model; its forward runs once, in eval mode and without gradients (the
            training mode is restored afterwards).
        input_shape: Shape of one sample without the batch dimension, e.g. ``(3, 224, 224)``.
        print_per_layer_stat: Print the model with each layer's share of parameters and FLOPs.
        as_strings: Return strings (``'0.29 GFLOPs'``, ``'11.69 M'``) instead of numbers.
        input_constructor: ``f(input_shape) -> dict`` of keyword arguments for ``forward``;
            None feeds a zero tensor of shape ``(1, *input_shape)`` (the parameters' dtype and
            device).
        flush: ``flush`` of the printing.
        ost: Stream to print to (default: ``sys.stdout`` at call time).

    Returns:
        ``(flops, params)``: per-sample FLOPs and the parameter count, as strings or floats.

    Raises:
        AssertionError: ``input_shape`` is not a non-empty tuple or ``model`` not a module.
    """
    assert type(input_shape) is tuple, f"input_shape must be a tuple, got {input_shape!r}"
    assert len(input_shape) >= 1, "input_shape must not be empty"
    assert isinstance(model, nn.Module), f"model must be an nn.Module, got {type(model)}"
    flops_model = add_flops_counting_methods(model)
    was_training = flops_model.training
    flops_model.eval()
    flops_model.start_flops_count()
    try:
        with torch.no_grad():
            if input_constructor:
                flops_model(**input_constructor(input_shape))
            else:
                param = next(flops_model.parameters(), None)
                options = {} if param is None else {"dtype": param.dtype, "device": param.device}
                flops_model(torch.zeros((1, *input_shape), **options))
        flops_count, params_count = flops_model.compute_average_flops_cost()
        if print_per_layer_stat:
            print_model_with_flops(
                flops_model, flops_count, params_count, ost=ost or sys.stdout, flush=flush
            )
    finally:
        flops_model.stop_flops_count()
        flops_model.train(was_training)
    if as_strings:
        return flops_to_string(flops_count), params_to_string(params_count)
    return flops_count, params_count


_FLOPS_SCALES = (("GFLOPs", 1e9), ("MFLOPs", 1e6), ("KFLOPs", 1e3))


def flops_to_string(flops: float, units: str | None = "GFLOPs", precision: int = 2) -> str:
    """Format a FLOPs count: ``flops_to_string(1e9) == '1.0 GFLOPs'``.

    Args:
        flops: The count.
        units: ``'GFLOPs'``, ``'MFLOPs'``, ``'KFLOPs'``, ``'FLOPs'``, or None to pick the
            largest unit the count reaches.
        precision: Decimal places to round to.
    """
    for name, scale in _FLOPS_SCALES:
        if units == name or (units is None and flops // scale > 0):
            return f"{round(flops / scale, precision)} {name}"
    return f"{flops} FLOPs"


def params_to_string(num_params: float, units: str | None = None, precision: int = 2) -> str:
    """Format a parameter count: ``params_to_string(2e5) == '200.0 k'``.

    Args:
        num_params: The count.
        units: ``'M'``, ``'K'``, ``''`` (none), or None to pick ``' M'``, ``' k'`` or none by
            size (mmcv's spelling: lower-case ``k`` when picked, ``K`` when asked for).
        precision: Decimal places to round to.
    """
    if units is None:
        if num_params // 1e6 > 0:
            return f"{round(num_params / 1e6, precision)} M"
        if num_params // 1e3 > 0:
            return f"{round(num_params / 1e3, precision)} k"
        return str(num_params)
    if units in ("M", "K"):
        return f"{round(num_params / (1e6 if units == 'M' else 1e3), precision)} {units}"
    return str(num_params)


def _share(part: float, total: float) -> float:
    return part / total if total else 0.0


def print_model_with_flops(
    model: nn.Module,
    total_flops: float,
    total_params: float,
    units: str | None = "GFLOPs",
    precision: int = 3,
    ost: TextIO | None = None,
    flush: bool = False,
) -> None:
    """Print ``model`` with each module's parameters and FLOPs (and its share of the totals).

    Each module's line starts ``<params> M, <p>% Params, <flops> <units>, <f>% FLOPs, `` and
    continues with its usual ``extra_repr``. Needs the counters of a counting run
    (:func:`get_model_complexity_info` calls this).

    Args:
        model: A model whose FLOPs were counted.
        total_flops: The model's total FLOPs (the 100% of the FLOPs column).
        total_params: The model's total parameters.
        units: FLOPs units (see :func:`flops_to_string`).
        precision: Decimal places.
        ost: Stream to print to (default: ``sys.stdout`` at call time).
        flush: ``flush`` of the printing.
    """
    batches = max(getattr(model, "__batch_counter__", 1), 1)

    def params_of(module: nn.Module) -> float:
        if is_supported_instance(module):
            return module.__params__
        return sum(params_of(child) for child in module.children())

    def flops_of(module: nn.Module) -> float:
        if is_supported_instance(module):
            return module.__flops__ / batches
        return sum(flops_of(child) for child in module.children())

    def with_counts(module: nn.Module) -> Callable[[], str]:
        original = module.extra_repr

        def extra_repr() -> str:
            params, flops = params_of(module), flops_of(module)
            return ", ".join(
                [
                    params_to_string(params, units="M", precision=precision),
                    f"{_share(params, total_params):.3%} Params",
                    flops_to_string(flops, units=units, precision=precision),
                    f"{_share(flops, total_flops):.3%} FLOPs",
                    original(),
                ]
            )

        return extra_repr

    # An instance attribute shadows the class's extra_repr while printing; removed after.
    patched = [m for m in model.modules() if "extra_repr" not in m.__dict__]
    for module in patched:
        module.extra_repr = with_counts(module)
    try:
        print(model, file=ost or sys.stdout, flush=flush)
    finally:
        for module in patched:
            del module.extra_repr


def get_model_parameters_number(model: nn.Module) -> float:
    """Number of trainable parameters (``requires_grad``) of ``model``."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def add_flops_counting_methods(net_main_module: nn.Module) -> nn.Module:
    """Attach ``start/stop/reset_flops_count`` and ``compute_average_flops_cost`` methods.

    The counters are reset. Returns the same module.
    """
    for method in (
        start_flops_count,
        stop_flops_count,
        reset_flops_count,
        compute_average_flops_cost,
    ):
        setattr(net_main_module, method.__name__, method.__get__(net_main_module))
    net_main_module.reset_flops_count()
    return net_main_module


def compute_average_flops_cost(self: nn.Module) -> tuple[float, float]:
    """``(FLOPs per sample seen since the last reset, trainable parameters)`` of ``self``."""
    flops = sum(m.__flops__ for m in self.modules() if is_supported_instance(m))
    batches = self.__batch_counter__
    if not batches:
        # mmcv divided by zero here; same type, with a message that says what to do.
        raise ZeroDivisionError(
            "no forward pass was counted: call start_flops_count() and run the model first"
        )
    return flops / batches, get_model_parameters_number(self)


def start_flops_count(self: nn.Module) -> None:
    """Start counting: hook the batch counter on ``self`` and a FLOPs hook on each layer."""
    add_batch_counter_hook_function(self)
    for module in self.modules():
        if is_supported_instance(module) and not hasattr(module, "__flops_handle__"):
            module.__flops_handle__ = module.register_forward_hook(_MAPPING[type(module)])


def stop_flops_count(self: nn.Module) -> None:
    """Stop counting: remove the hooks (the counts so far stay)."""
    remove_batch_counter_hook_function(self)
    self.apply(remove_flops_counter_hook_function)


def reset_flops_count(self: nn.Module) -> None:
    """Zero the batch counter and every layer's FLOPs (and recount its parameters)."""
    add_batch_counter_variables_or_reset(self)
    self.apply(add_flops_counter_variable_or_reset)


# ------------------------------------------------------------------ per-layer FLOPs hooks
# Each is a forward hook ``(module, inputs, output)`` adding the FLOPs of one call.


def empty_flops_counter_hook(module: nn.Module, input: tuple, output: Any) -> None:
    """Count nothing (a supported layer without FLOPs)."""
    module.__flops__ += 0


def upsample_flops_counter_hook(module: nn.Module, input: tuple, output: torch.Tensor) -> None:
    """One FLOP per element of ``output[0]`` (mmcv counts the first sample's output)."""
    module.__flops__ += int(output[0].numel())


def relu_flops_counter_hook(module: nn.Module, input: tuple, output: torch.Tensor) -> None:
    """One FLOP per output element."""
    module.__flops__ += int(output.numel())


def linear_flops_counter_hook(module: nn.Module, input: tuple, output: torch.Tensor) -> None:
    """``input elements x out_features`` (the bias is not counted)."""
    module.__flops__ += int(input[0].numel() * output.shape[-1])


def pool_flops_counter_hook(module: nn.Module, input: tuple, output: torch.Tensor) -> None:
    """One FLOP per input element."""
    module.__flops__ += int(input[0].numel())


def norm_flops_counter_hook(module: nn.Module, input: tuple, output: torch.Tensor) -> None:
    """One FLOP per input element, two with an affine transform."""
    affine = getattr(module, "affine", False) or getattr(module, "elementwise_affine", False)
    module.__flops__ += int(input[0].numel() * (2 if affine else 1))


def deconv_flops_counter_hook(conv_module: nn.Module, input: tuple, output: torch.Tensor) -> None:
    """Transposed 2-D conv: kernel x in x out/groups per input position, plus the bias."""
    batch_size, _, height, width = input[0].shape
    per_position = (
        math.prod(conv_module.kernel_size)
        * conv_module.in_channels
        * (conv_module.out_channels // conv_module.groups)
    )
    flops = per_position * batch_size * height * width
    if conv_module.bias is not None:
        flops += conv_module.out_channels * batch_size * math.prod(output.shape[2:])
    conv_module.__flops__ += int(flops)


def conv_flops_counter_hook(conv_module: nn.Module, input: tuple, output: torch.Tensor) -> None:
    """Conv: kernel x in x out/groups per output position, plus one per output for the bias."""
    positions = input[0].shape[0] * math.prod(output.shape[2:])
    per_position = (
        math.prod(conv_module.kernel_size)
        * conv_module.in_channels
        * (conv_module.out_channels // conv_module.groups)
    )
    flops = per_position * positions
    if conv_module.bias is not None:
        flops += conv_module.out_channels * positions
    conv_module.__flops__ += int(flops)


def batch_counter_hook(module: nn.Module, input: tuple, output: Any) -> None:
    """Add the batch size (length of the first positional input; 1 without one)."""
    if len(input) > 0:
        batch_size = len(input[0])
    else:
        warnings.warn(
            "No positional inputs found for a module, assuming batch size is 1.", stacklevel=2
        )
        batch_size = 1
    module.__batch_counter__ += batch_size


def add_batch_counter_variables_or_reset(module: nn.Module) -> None:
    """Set ``module.__batch_counter__`` to 0."""
    module.__batch_counter__ = 0


def add_batch_counter_hook_function(module: nn.Module) -> None:
    """Hook :func:`batch_counter_hook` on ``module`` (once)."""
    if not hasattr(module, "__batch_counter_handle__"):
        module.__batch_counter_handle__ = module.register_forward_hook(batch_counter_hook)


def remove_batch_counter_hook_function(module: nn.Module) -> None:
    """Remove the batch counter hook of ``module``, if any."""
    if hasattr(module, "__batch_counter_handle__"):
        module.__batch_counter_handle__.remove()
        del module.__batch_counter_handle__


def add_flops_counter_variable_or_reset(module: nn.Module) -> None:
    """Zero a supported layer's ``__flops__`` and set ``__params__`` to its parameter count."""
    if is_supported_instance(module):
        if hasattr(module, "__flops__") or hasattr(module, "__params__"):
            warnings.warn(
                f"variables __flops__ or __params__ are already defined for the module "
                f"{type(module).__name__}; counting FLOPs overwrites them",
                stacklevel=2,
            )
        module.__flops__ = 0
        module.__params__ = get_model_parameters_number(module)


def is_supported_instance(module: nn.Module) -> bool:
    """Whether ``module``'s exact type has a FLOPs hook."""
    return type(module) in _MAPPING


def remove_flops_counter_hook_function(module: nn.Module) -> None:
    """Remove the FLOPs hook of a supported layer, if any."""
    if is_supported_instance(module) and hasattr(module, "__flops_handle__"):
        module.__flops_handle__.remove()
        del module.__flops_handle__


_MAPPING: dict[type, Callable] = {
    **dict.fromkeys(
        (nn.Conv1d, nn.Conv2d, wrappers.Conv2d, nn.Conv3d, wrappers.Conv3d),
        conv_flops_counter_hook,
    ),
    **dict.fromkeys((nn.ReLU, nn.PReLU, nn.ELU, nn.LeakyReLU, nn.ReLU6), relu_flops_counter_hook),
    **dict.fromkeys(
        (
            nn.MaxPool1d,
            nn.AvgPool1d,
            nn.AvgPool2d,
            nn.MaxPool2d,
            wrappers.MaxPool2d,
            nn.MaxPool3d,
            wrappers.MaxPool3d,
            nn.AvgPool3d,
            nn.AdaptiveMaxPool1d,
            nn.AdaptiveAvgPool1d,
            nn.AdaptiveMaxPool2d,
            nn.AdaptiveAvgPool2d,
            nn.AdaptiveMaxPool3d,
            nn.AdaptiveAvgPool3d,
        ),
        pool_flops_counter_hook,
    ),
    **dict.fromkeys(
        (
            nn.BatchNorm1d,
            nn.BatchNorm2d,
            nn.BatchNorm3d,
            nn.GroupNorm,
            nn.InstanceNorm1d,
            nn.InstanceNorm2d,
            nn.InstanceNorm3d,
            nn.LayerNorm,
        ),
        norm_flops_counter_hook,
    ),
    nn.Linear: linear_flops_counter_hook,
    wrappers.Linear: linear_flops_counter_hook,
    nn.Upsample: upsample_flops_counter_hook,
    nn.ConvTranspose2d: deconv_flops_counter_hook,
    wrappers.ConvTranspose2d: deconv_flops_counter_hook,
}


def get_modules_mapping() -> dict:
    """Layer type -> its FLOPs hook (a copy; exact types, subclasses are not matched)."""
    return dict(_MAPPING)
