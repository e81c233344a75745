"""Checks for unit tests (mmcv 1.x ``mmcv.utils.testing``): each returns a bool to assert."""

from __future__ import annotations

import runpy
import shlex
import sys
from collections.abc import Iterable
from typing import Any


def check_python_script(cmd: str) -> None:
    """Run a Python script as ``__main__`` in this process, with ``sys.argv`` from ``cmd``.

    In-process (unlike :func:`os.system`) so coverage tools see the script's lines. Both
    ``'path/script.py arg ...'`` and ``'python path/script.py arg ...'`` work. Exceptions the
    script raises (including ``SystemExit``) propagate.

    Args:
        cmd: The command line, split with :func:`shlex.split`.
    """
    from unittest.mock import patch

    args = shlex.split(cmd)
    if args and args[0] == "python":
        args = args[1:]
    with patch.object(sys, "argv", args):
        runpy.run_path(args[0], run_name="__main__")


def _any_true(result: Any) -> bool:
    """``any`` over arbitrarily nested results (elementwise comparisons of arrays/tensors)."""
    if not isinstance(result, Iterable):
        return bool(result)
    try:
        return any(_any_true(element) for element in result)
    except TypeError:  # iterable type but not iterable value, e.g. a 0-d tensor
        return bool(result)


def assert_dict_contains_subset(dict_obj: dict[Any, Any], expected_subset: dict[Any, Any]) -> bool:
    """Return whether ``dict_obj`` has every key of ``expected_subset`` with an equal value.

    Values may be arrays or tensors (compared elementwise).
    """
    return all(
        key in dict_obj and not _any_true(dict_obj[key] != value)
        for key, value in expected_subset.items()
    )


def assert_attrs_equal(obj: Any, expected_attrs: dict[str, Any]) -> bool:
    """Return whether ``obj`` has every attribute of ``expected_attrs`` with an equal value."""
    return all(
        hasattr(obj, attr) and not _any_true(getattr(obj, attr) != value)
        for attr, value in expected_attrs.items()
    )


def assert_dict_has_keys(obj: dict[str, Any], expected_keys: list[str]) -> bool:
    """Return whether ``obj`` has (at least) every key in ``expected_keys``."""
    return set(expected_keys).issubset(obj.keys())


def assert_keys_equal(result_keys: list[str], target_keys: list[str]) -> bool:
    """Return whether the two collections hold the same keys (order and repeats ignored)."""
    return set(result_keys) == set(target_keys)


def assert_is_norm_layer(module: Any) -> bool:
    """Return whether ``module`` is a batch, instance, group or layer norm (imports torch)."""
    from torch.nn import GroupNorm, LayerNorm
    from torch.nn.modules.batchnorm import _BatchNorm
    from torch.nn.modules.instancenorm import _InstanceNorm

    return isinstance(module, (_BatchNorm, _InstanceNorm, GroupNorm, LayerNorm))


def assert_params_all_zeros(module: Any) -> bool:
    """Return whether ``module.weight`` (and ``module.bias``, if any) are zeros (within 1e-8)."""
    tensors = [module.weight.data]
    if getattr(module, "bias", None) is not None:
        tensors.append(module.bias.data)
    return all(tensor.allclose(tensor.new_zeros(tensor.size())) for tensor in tensors)


__all__ = [
    "assert_attrs_equal",
    "assert_dict_contains_subset",
    "assert_dict_has_keys",
    "assert_is_norm_layer",
    "assert_keys_equal",
    "assert_params_all_zeros",
    "check_python_script",
]
