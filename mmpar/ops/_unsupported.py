"""Stand-ins for the mmcv.ops names whose kernels only exist as compiled mmcv-full code.

Each stand-in imports cleanly (so ``from mmcv.ops import X`` at the top of a downstream module,
``issubclass`` checks and registry registration at import time keep working) and fails only
when it is used: calling a function, or constructing a class (or a subclass of it), raises
:class:`UnsupportedOpError` naming the op and what to use instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from torch import nn

__all__ = [
    "UnsupportedOpError",
    "unsupported_class",
    "unsupported_error",
    "unsupported_function",
]


class UnsupportedOpError(NotImplementedError):
    """An mmcv.ops op that needs a compiled mmcv-full kernel, which mmpar does not ship."""


def unsupported_error(name: str, instead: str) -> UnsupportedOpError:
    """Return the error for the mmcv.ops op ``name``, saying to use ``instead``.

    Args:
        name: The op's name in ``mmcv.ops``.
        instead: What to use in its place.

    Returns:
        The error to raise.
    """
    return UnsupportedOpError(
        f"mmcv.ops.{name} (mmpar.ops.{name}) needs a compiled mmcv-full kernel, which mmpar "
        f"does not ship; instead: {instead}."
    )


def unsupported_function(name: str, instead: str, module: str) -> Callable[..., NoReturn]:
    """Return a function that raises :class:`UnsupportedOpError` when called.

    Args:
        name: The op's name in ``mmcv.ops``.
        instead: What to use in its place, said to the user in the error.
        module: The dotted name of the module that defines it (its ``__module__``).

    Returns:
        The stand-in function, named ``name``.
    """

    def op(*args: Any, **kwargs: Any) -> NoReturn:
        raise unsupported_error(name, instead)

    op.__name__ = op.__qualname__ = name
    op.__module__ = module
    op.__doc__ = f"Not provided by mmpar (raises UnsupportedOpError): use {instead}."
    return op


def unsupported_class(name: str, instead: str, module: str, base: type = nn.Module) -> type:
    """Return a class that raises :class:`UnsupportedOpError` when it (or a subclass) is built.

    The class itself is an ordinary ``base`` subclass, so it can be registered, subclassed and
    used in ``isinstance`` checks; only creating an instance fails.

    Args:
        name: The op's name in ``mmcv.ops``.
        instead: What to use in its place, said to the user in the error.
        module: The dotted name of the module that defines it (its ``__module__``).
        base: The class to derive from (mmcv's base for this op).

    Returns:
        The stand-in class, named ``name``.
    """

    def __init__(self: Any, *args: Any, **kwargs: Any) -> NoReturn:  # noqa: N807
        raise unsupported_error(name, instead)

    return type(
        name,
        (base,),
        {
            "__init__": __init__,
            "__doc__": f"Not provided by mmpar (raises UnsupportedOpError): use {instead}.",
            "__module__": module,
        },
    )
