"""Compiled-extension loading (mmcv 1.x ``mmcv.utils.ext_loader``).

mmpar ships no compiled extension (no ``mmpar._ext``): :func:`load_ext` raises an ImportError
saying so. :func:`check_ops_exist` answers the question projects ask it ("can I use
``mmcv.ops``?"): yes, every ``mmcv.ops`` name runs on PyTorch code.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from types import ModuleType

_PACKAGE = __name__.rsplit(".", 2)[0]  # "mmpar"


class ExtensionError(ImportError, AssertionError):
    """An extension lacks a function (an AssertionError too, as mmcv asserted it)."""


def check_ops_exist() -> bool:
    """Return whether ``mmcv.ops`` can be used: True, as ``mmpar.ops`` serves all of it.

    mmcv answered whether its compiled ``mmcv._ext`` was installed; projects (and mmcv's own
    tests) ask it to decide whether to use ``mmcv.ops`` or to replace it with a stand-in.
    """
    return importlib.util.find_spec(f"{_PACKAGE}.ops") is not None


def load_ext(name: str, funcs: Sequence[str]) -> ModuleType:
    """Import the compiled extension ``mmpar.<name>`` and check it has ``funcs``.

    Args:
        name: The extension module's name under the package (mmcv used ``'_ext'``).
        funcs: Names the extension must define.

    Returns:
        The extension module.

    Raises:
        ImportError: The extension does not exist (mmpar builds none).
        ExtensionError: The extension lacks one of ``funcs`` (an ImportError).
    """
    module_name = f"{_PACKAGE}.{name}"
    if importlib.util.find_spec(module_name) is None:
        raise ImportError(
            f"{module_name} does not exist: mmpar builds no C++/CUDA extensions. mmcv.ops's "
            "names are in mmpar.ops, on torchvision and PyTorch",
            name=module_name,
        )
    ext = importlib.import_module(module_name)
    missing = [func for func in funcs if not hasattr(ext, func)]
    if missing:
        raise ExtensionError(
            f"{module_name} lacks {missing}: rebuild it or install the version that has them",
            name=module_name,
        )
    return ext


__all__ = ["ExtensionError", "check_ops_exist", "load_ext"]
