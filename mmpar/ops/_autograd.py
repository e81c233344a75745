"""mmcv's ``torch.autograd.Function`` classes, over mmpar's differentiable PyTorch ops.

mmcv 1.7.2 wraps each compiled kernel in a ``Function`` (``RoIAlignFunction``, ``NMSop``,
``KNN``, ...) and some downstream code calls ``SomeFunction.apply(...)`` directly. mmpar's ops
are PyTorch code that autograd already differentiates, so each of those classes here runs the
op in its ``forward`` and records the op's own autograd graph; its ``backward`` differentiates
that graph. The gradients are exactly the functional op's.

Each class is made by :func:`op_function` from a function with mmcv's parameter list (the op
itself, or a small adapter where mmcv's ``Function`` takes other arguments than the op)::

    RoIPoolFunction = op_function("RoIPoolFunction", roi_pool, __name__)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torch.autograd import Function
from torch.autograd.function import once_differentiable

__all__ = ["op_function", "record", "replay"]


def op_function(
    name: str, op: Callable[..., Any], module: str, doc: str | None = None
) -> type[Function]:
    """Make mmcv's ``Function`` class ``name`` whose ``apply(*args)`` is ``op(*args)``.

    ``forward`` records ``op``'s autograd graph and ``backward`` differentiates it, so the
    gradients are exactly the op's (once: no double backward). Non-floating outputs (indices,
    flags) carry no gradient.

    Args:
        name: The class name, as in mmcv.
        op: The computation, taking mmcv's ``forward`` arguments (after ``ctx``) in order.
        module: The ``__module__`` of the class (the mmcv module it stands at).
        doc: The class docstring; by default, one naming ``op``.

    Returns:
        The ``torch.autograd.Function`` subclass.
    """
    label = getattr(op, "__name__", type(op).__name__)

    def forward(ctx: Any, *args: Any) -> Any:
        return record(ctx, op, *args)

    # Shown by help() and inspect: mmcv's parameter list after ctx, positional only (torch
    # binds keywords of apply() by the names in forward's code, which here has none; mmcv's
    # own calls are positional, as torch 1.x's apply() took no keywords).
    positional = inspect.Parameter.POSITIONAL_ONLY
    params = [p.replace(kind=positional) for p in inspect.signature(op).parameters.values()]
    ctx_param = inspect.Parameter("ctx", positional)
    forward.__signature__ = inspect.signature(op).replace(parameters=[ctx_param, *params])  # type: ignore[attr-defined]
    forward.__doc__ = f"Run ``{label}`` on mmcv's arguments, recording it for ``backward``."
    forward.__qualname__ = f"{name}.forward"
    return type(
        name,
        (Function,),
        {
            "forward": staticmethod(forward),
            "backward": replay,
            "__doc__": inspect.cleandoc(doc)
            if doc
            else f"mmcv's autograd ``Function`` of ``{label}``.",
            "__module__": module,
            "__qualname__": name,
        },
    )


def record(ctx: Any, op: Callable[..., Any], *args: Any) -> Any:
    """Run ``op(*args)`` inside a ``Function.forward``, keeping its graph for :func:`replay`.

    Args:
        ctx: The ``Function``'s context.
        op: The mmpar op; its positional arguments are ``args``.
        *args: The arguments ``forward`` was given (tensors and settings).

    Returns:
        What ``op`` returns (a tensor or a tuple), detached from the recorded graph.
    """
    # The op sees fresh leaves, so the graph it builds ends at them (not at the caller's
    # tensors, which the outer Function node already connects).
    leaves = tuple(
        arg.detach().requires_grad_() if needs else arg
        for arg, needs in zip(args, ctx.needs_input_grad)
    )
    ctx.leaves = leaves
    if not any(ctx.needs_input_grad):
        ctx.outputs = ()
        return op(*leaves)
    with torch.enable_grad():
        result = op(*leaves)
    ctx.outputs = result if isinstance(result, tuple) else (result,)
    if isinstance(result, tuple):
        return tuple(out.detach() if isinstance(out, Tensor) else out for out in result)
    return result.detach()


@staticmethod  # type: ignore[misc]
@once_differentiable
def replay(ctx: Any, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
    """The ``backward`` of a :func:`record` ``Function``: the gradient of each input.

    Args:
        ctx: The context :func:`record` filled.
        *grads: The gradient of each output (None where it has none).

    Returns:
        One gradient (or None) per argument of ``forward``.
    """
    pairs = [
        (out, grad)
        for out, grad in zip(ctx.outputs, grads)
        if isinstance(out, Tensor) and out.requires_grad and grad is not None
    ]
    wanted = [i for i, needs in enumerate(ctx.needs_input_grad) if needs]
    result: list[Tensor | None] = [None] * len(ctx.leaves)
    if pairs and wanted:
        found = torch.autograd.grad(
            [out for out, _ in pairs],
            [ctx.leaves[i] for i in wanted],
            [grad for _, grad in pairs],
            # Kept for a second backward of the outer graph (retain_graph there); the inner
            # graph goes when the outer one frees this context.
            retain_graph=True,
            allow_unused=True,
        )
        for i, grad in zip(wanted, found):
            # An input the outputs do not depend on gets a zero gradient, as a kernel gives.
            result[i] = torch.zeros_like(ctx.leaves[i]) if grad is None else grad
    return tuple(result)
