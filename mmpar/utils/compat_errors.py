"""Exception types for mmcv 1.x compatibility, and the mmcv names mmpar leaves out.

mmcv checks many arguments with ``assert``; mmpar raises a clearer error that is still an
:class:`AssertionError`, so ported ``except AssertionError:`` blocks keep working.
"""

from __future__ import annotations


class MessageKeyError(KeyError):
    """A KeyError whose ``str()`` is its message as written.

    ``str(KeyError('no such key'))`` quotes the message (KeyError assumes it is a key); mmpar's
    KeyErrors carry sentences, so they print them unquoted.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class CheckValueError(ValueError, AssertionError):
    """A bad argument value where mmcv 1.x raised :class:`AssertionError`."""


class CheckTypeError(TypeError, AssertionError):
    """A bad argument type where mmcv 1.x raised :class:`AssertionError`."""


class NotProvidedError(ImportError):
    """An mmcv 1.x name that mmpar deliberately does not provide.

    Attributes:
        reason (str): What to use instead (a value of :data:`NOT_PROVIDED` or
            :data:`MODULES_NOT_PROVIDED`); empty when unknown.
    """

    reason: str = ""


_USE_TORCH_EXTENSIONS = (
    "mmpar builds no C++/CUDA extensions; use torch.utils.cpp_extension directly "
    "(from torch.utils.cpp_extension import {name})"
)

#: mmcv 1.x names that mmpar leaves out, with what to use instead.
NOT_PROVIDED: dict[str, str] = {
    "BuildExtension": _USE_TORCH_EXTENSIONS.format(name="BuildExtension"),
    "CppExtension": _USE_TORCH_EXTENSIONS.format(name="CppExtension"),
    "CUDAExtension": _USE_TORCH_EXTENSIONS.format(name="CUDAExtension"),
    "_get_cuda_home": (
        "mmpar builds no C++/CUDA extensions; use torch.utils.cpp_extension directly "
        "(from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME)"
    ),
    "register_torch_npu_optimizers": (
        "Ascend NPU device internals are not part of mmpar, which trains on CPU and CUDA"
    ),
}

#: mmcv 1.x subpackages (below ``mmcv``) that mmpar does not have, with what to use instead.
MODULES_NOT_PROVIDED: dict[str, str] = {
    "onnx": "use torch.onnx",
    "tensorrt": "use Torch-TensorRT (torch_tensorrt)",
}


def not_provided(module: str, name: str) -> NotProvidedError:
    """Return the error for an attribute ``name`` of ``module`` that mmpar leaves out.

    Meant for a module-level ``__getattr__``: an :class:`ImportError` (not an
    :class:`AttributeError`) is what keeps its message when raised during
    ``from module import name``; Python replaces an AttributeError's message there.

    Args:
        module: The module's dotted name.
        name: A key of :data:`NOT_PROVIDED`.

    Returns:
        The error to raise.
    """
    err = NotProvidedError(
        f"{module}.{name} (mmcv{module[len('mmpar') :]}.{name}) is not provided: "
        f"{NOT_PROVIDED[name]}.",
        name=name,
    )
    err.reason = NOT_PROVIDED[name]
    return err


_RETYPED: dict[tuple[type, type], type] = {}


def same_type_error(err: BaseException, message: str, marker: type) -> BaseException:
    """``err`` again with ``message``: an instance of ``type(err)`` that is also a ``marker``.

    For errors raised by code mmpar runs for the user (a config file's code, an image
    decoder): the message can name the file and line, while ``except <the original type>:``
    in the user's code keeps working. The subclass has the original's name, so
    ``error: ZeroDivisionError: ...`` still says what was raised.

    Args:
        err: The error raised.
        message: The new message, printed as written (no quotes for a KeyError).
        marker: An exception class to mix in, by which mmpar recognizes these errors.

    Returns:
        The new error; ``err`` itself when its type cannot be subclassed.
    """
    cls = type(err)
    sub = _RETYPED.get((cls, marker))
    if sub is None:
        try:
            sub = type(cls.__name__, (cls, marker), {"__str__": _first_arg})
        except TypeError:  # a type that cannot be subclassed or mixed with the marker
            return err
        _RETYPED[cls, marker] = sub
    new = sub.__new__(sub)
    new.args = (message,)
    return new


def _first_arg(self: BaseException) -> str:
    # One message for every type: KeyError's str() would quote it, OSError's reformat it.
    return str(self.args[0])
