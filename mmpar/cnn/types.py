"""Type aliases of the arguments mmpar.cnn's layers and mmpar.ops' layers share."""

from typing import Union

#: A size, stride, padding or dilation: one int for both dimensions, or ``(h, w)``.
IntPair = Union[int, tuple[int, int]]

__all__ = ["IntPair"]
