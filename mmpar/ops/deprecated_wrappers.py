"""The old ``mmcv.ops`` spellings of the empty-tensor-safe layers, which live in ``mmpar.cnn``.

Constructing one warns (``DeprecationWarning``) and builds the ``mmpar.cnn`` layer.
"""

from __future__ import annotations

import warnings

from mmpar.cnn import Conv2d, ConvTranspose2d, Linear, MaxPool2d

__all__ = [
    "Conv2d_deprecated",
    "ConvTranspose2d_deprecated",
    "Linear_deprecated",
    "MaxPool2d_deprecated",
]


def _warn(name: str) -> None:
    warnings.warn(
        f'Importing {name} from "mmcv.ops" (mmpar.ops) is deprecated; import it from '
        '"mmcv.cnn" (mmpar.cnn) instead',
        DeprecationWarning,
        stacklevel=3,
    )


class Conv2d_deprecated(Conv2d):  # noqa: N801 (mmcv's name)
    """:class:`mmpar.cnn.Conv2d`, warning that it moved there."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _warn("Conv2d")


class ConvTranspose2d_deprecated(ConvTranspose2d):  # noqa: N801
    """:class:`mmpar.cnn.ConvTranspose2d`, warning that it moved there."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _warn("ConvTranspose2d")


class MaxPool2d_deprecated(MaxPool2d):  # noqa: N801
    """:class:`mmpar.cnn.MaxPool2d`, warning that it moved there."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _warn("MaxPool2d")


class Linear_deprecated(Linear):  # noqa: N801
    """:class:`mmpar.cnn.Linear`, warning that it moved there."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _warn("Linear")
