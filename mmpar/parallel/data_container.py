"""DataContainer: a sample field plus the flags telling ``collate``/``scatter`` how to batch it."""

from __future__ import annotations

import copy
import functools
from typing import Any, Callable, TypeVar

import numpy as np
import torch

__all__ = ["DataContainer", "assert_tensor_type"]

_F = TypeVar("_F", bound=Callable[..., Any])


class _NotATensorError(AttributeError, TypeError):
    """A tensor-only DataContainer method was called on non-tensor data.

    An ``AttributeError`` as in mmcv (the container has no such method for its data type), and
    a ``TypeError`` as mmpar raised before.
    """


def assert_tensor_type(func: _F) -> _F:
    """Decorate a ``DataContainer`` method that only makes sense for tensor data.

    The decorated method raises ``AttributeError`` (also a ``TypeError``) naming the method and
    the data type when the container's ``data`` is not a ``torch.Tensor``.

    Args:
        func: A method whose first argument is the DataContainer.

    Returns:
        The wrapped method.

    Example:
        >>> class Boxes(DataContainer):
        ...     @assert_tensor_type
        ...     def numel(self):
        ...         return self.data.numel()
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        container = args[0]
        if not isinstance(container.data, torch.Tensor):
            raise _NotATensorError(
                f"{type(container).__name__} has no attribute {func.__name__} for data of type "
                f"{container.datatype}: DataContainer.{func.__name__}() needs tensor data, but "
                f"this container holds {type(container.data).__name__}"
            )
        return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _pin(data: Any) -> Any:
    """``data`` with every tensor in it pinned (lists, tuples and dicts rebuilt, rest kept)."""
    if isinstance(data, torch.Tensor):
        return data.pin_memory()
    if isinstance(data, (list, tuple)):
        return type(data)(_pin(item) for item in data)
    if isinstance(data, dict):
        return {key: _pin(value) for key, value in data.items()}
    return data


def _check_pad_dims(pad_dims: int | None) -> None:
    # bool is an int subclass; True/False as pad_dims is always a mistake.
    if pad_dims is None:
        return
    if isinstance(pad_dims, bool) or not isinstance(pad_dims, int) or pad_dims < 1:
        raise ValueError(
            f"DataContainer pad_dims must be None (stack as is) or a positive int (number of "
            f"trailing dims to pad), but got {pad_dims!r}"
        )


class DataContainer:
    """Wrap one field of a sample and say how ``collate`` and ``scatter`` treat it.

    Args:
        data: The wrapped object (a tensor, an array, a dict of metadata, a list of boxes, ...).
        stack: Pad and stack the samples of a device chunk into one tensor (``data`` must be a
            tensor or a numpy array then).
        padding_value: Value used to pad the last ``pad_dims`` dims when ``stack`` is True.
        cpu_only: Never move this field to a device (e.g. image metadata).
        pad_dims: Number of trailing dims padded to the chunk's maximum before stacking
            (``2`` pads H and W of a CHW image), or None to stack without padding.

    Example:
        >>> dc = DataContainer(torch.zeros(3, 4, 5), stack=True)
        >>> dc.size(), dc.dim()
        (torch.Size([3, 4, 5]), 3)
    """

    def __init__(
        self,
        data: Any,
        stack: bool = False,
        padding_value: float = 0,
        cpu_only: bool = False,
        pad_dims: int | None = 2,
    ) -> None:
        _check_pad_dims(pad_dims)
        self._data = data
        self._stack = bool(stack)
        self._padding_value = padding_value
        self._cpu_only = bool(cpu_only)
        self._pad_dims = pad_dims

    def __repr__(self) -> str:
        data = self._data
        if isinstance(data, torch.Tensor):
            desc = f"Tensor(shape={tuple(data.shape)}, dtype={data.dtype}, device={data.device})"
        elif isinstance(data, np.ndarray):
            desc = f"ndarray(shape={data.shape}, dtype={data.dtype})"
        elif isinstance(data, (list, tuple)):
            desc = f"{type(data).__name__}(len={len(data)})"
        else:
            desc = repr(data)
            if len(desc) > 80:
                desc = desc[:77] + "..."
        return (
            f"{self.__class__.__name__}({desc}, stack={self._stack}, "
            f"padding_value={self._padding_value}, cpu_only={self._cpu_only}, "
            f"pad_dims={self._pad_dims})"
        )

    def pin_memory(self) -> DataContainer:
        """A container of the same kind whose tensors are in page-locked memory.

        ``DataLoader(pin_memory=True)`` calls this from its pin thread on every object of a
        batch that has it, so the copy to the GPU (``scatter``, non-blocking) starts from
        pinned memory without pinning on the training thread. A ``cpu_only`` container never
        goes to a device and is returned as it is.

        Returns:
            ``self`` if ``cpu_only``, else a new container with the same flags.
        """
        if self._cpu_only:
            return self
        pinned = copy.copy(self)  # keeps the flags (and a subclass's own attributes)
        pinned._data = _pin(self._data)
        return pinned

    @property
    def data(self) -> Any:
        """The wrapped object."""
        return self._data

    @property
    def datatype(self) -> Any:
        """``data.type()`` for tensors (e.g. ``'torch.FloatTensor'``), else ``type(data)``."""
        if isinstance(self._data, torch.Tensor):
            return self._data.type()
        return type(self._data)

    @property
    def cpu_only(self) -> bool:
        """Whether the field stays on the CPU when scattered."""
        return self._cpu_only

    @property
    def stack(self) -> bool:
        """Whether ``collate`` pads and stacks the field."""
        return self._stack

    @property
    def padding_value(self) -> float:
        """Value used for padding when stacking."""
        return self._padding_value

    @property
    def pad_dims(self) -> int | None:
        """Number of trailing dims padded when stacking (None: stack as is)."""
        return self._pad_dims

    def __len__(self) -> int:
        """``len(data)``: the number of chunks once collated."""
        return len(self._data)

    @assert_tensor_type
    def size(self, *args: Any, **kwargs: Any) -> Any:
        """Return ``data.size(*args)``; only for tensor data (else ``AttributeError``)."""
        return self._data.size(*args, **kwargs)

    @assert_tensor_type
    def dim(self) -> int:
        """Return ``data.dim()``; only for tensor data (else ``AttributeError``)."""
        return self._data.dim()
