"""``torch.compile`` for training: the config key ``compile``, applied to the bare model in place.

Why in place and not ``torch.compile(model)``: the wrappers call ``model.train_step`` and
``model.val_step``, not ``model(...)``. ``torch.compile(model)`` returns an ``OptimizedModule``
whose ``train_step`` is the original, uncompiled method (measured: no graph is compiled during
training under ``MMDataParallel`` or ``MMDistributedDataParallel``), and whose state dict keys
start with ``_orig_mod.``. So :func:`compile_model` compiles ``__call__`` with the public
``nn.Module.compile()`` (``model(...)``: evaluation and every ``train_step`` that calls
``self(**data)``) and replaces ``train_step``/``val_step`` by compiled versions of themselves
(instance attributes), so a ``train_step`` that calls ``self.forward_train`` directly is
compiled too. The model keeps its class, its parameters and its state dict keys.

Checkpoints written elsewhere from a ``torch.compile(model)`` wrapper carry ``_orig_mod.`` in
their keys; checkpoint code removes it when saving and loading (the bare model:
:func:`mmpar.parallel.utils.model_layout`; keys: :mod:`mmpar.runner.checkpointing.model_state`).
"""

from __future__ import annotations

import difflib
import functools
import inspect
import time
from typing import Any

import torch
from torch import nn

from mmpar.utils.config_args import (
    ConfigArgumentError,
    check_argument_types,
    config_error_context,
    unexpected_argument_error,
)
from mmpar.utils.logging import get_logger

__all__ = [
    "CompileBackendError",
    "CompileConfigError",
    "CompiledStep",
    "compile_model",
    "compile_options",
]

# The model methods the wrappers call; compiled when the model has them.
STEP_METHODS = ("train_step", "val_step")


class CompileBackendError(RuntimeError):
    """The ``torch.compile`` backend failed to compile the model (at its first call).

    Raised from the compiled ``train_step``/``val_step`` in place of torch's
    ``BackendCompilerFailed``; the message names the config key, the backend, its error and
    what to do. ``tools/train.py`` prints it as one ``error:`` line and exits with code 1.
    """


class CompileConfigError(ValueError):
    """A value of the config key ``compile`` that ``torch.compile`` cannot use."""


def _compile_arguments() -> list[str]:
    """The keyword arguments of ``torch.compile`` (all but the model), in signature order."""
    params = inspect.signature(torch.compile).parameters
    return [name for name in params if name != "model"]


def valid_backends() -> list[str]:
    """Every backend name ``torch.compile`` knows here, debug ones (``eager``, ...) included."""
    from torch._dynamo import list_backends

    return list_backends(exclude_tags=())


def compile_options(value: Any) -> dict | None:
    """Check the config value ``compile`` and return the arguments of ``torch.compile``.

    Args:
        value: ``None``/``False`` (no compilation), ``True`` (``torch.compile``'s defaults:
            inductor) or a dict of ``torch.compile`` arguments (``backend``, ``mode``,
            ``fullgraph``, ``dynamic``, ``options``, ...).

    Returns:
        None for eager training, else the keyword arguments for ``torch.compile``.

    Raises:
        ConfigArgumentError: (a TypeError) ``value`` is not a bool, None or dict, or has an
            argument ``torch.compile`` does not take or of the wrong type
            (``compile.fullgraph must be bool ...``).
        CompileConfigError: (a ValueError) an unknown backend name; lists the valid ones.
    """
    with config_error_context("compile"):
        if value is None or value is False:
            return None
        if value is True:
            return {}
        if not isinstance(value, dict):
            raise ConfigArgumentError(
                "expected True, a dict of torch.compile arguments such as "
                f"dict(backend='inductor', mode=None), or None/False for eager; got {value!r}"
            )
        options = dict(value)
        known = _compile_arguments()
        for key in options:
            if key not in known:
                raise unexpected_argument_error("torch.compile", key, known)
        check_argument_types(torch.compile, options)
    backend = options.get("backend")
    if isinstance(backend, str):
        backends = valid_backends()
        if backend not in backends:
            close = difflib.get_close_matches(backend, backends, n=2)
            hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise CompileConfigError(
                f"compile.backend: {backend!r} is not a torch.compile backend here.{hint} Valid "
                f"backends (torch._dynamo.list_backends(exclude_tags=())): {backends}"
            )
    return options


def _backend_name(options: dict) -> str:
    backend = options.get("backend") or "inductor"
    return backend if isinstance(backend, str) else getattr(backend, "__name__", repr(backend))


def backend_failure_message(options: dict, err: BaseException) -> str:
    """One line: the backend, its error, and how to train without it."""
    inner = getattr(err, "inner_exception", err)
    lines = str(inner).strip().splitlines()
    detail = f"{type(inner).__name__}: {lines[0] if lines else ''}".rstrip(": ")
    return (
        f"compile: torch.compile backend {_backend_name(options)!r} failed to compile the model "
        f"({detail}); fix the backend's toolchain (inductor on CPU needs a working C++ compiler, "
        "see the CXX environment variable), or set compile=dict(backend='aot_eager') or "
        "dict(backend='eager'), or remove compile from the config to train eagerly"
    )


class CompiledStep:
    """A model's ``train_step``/``val_step`` run through ``torch.compile`` (an instance attribute).

    The class's method is compiled and called with the model, so the model keeps its class. A
    copy of the model (``copy.deepcopy``, pickling) gets the plain method back, bound to the
    copy, never a step of the original model: as for ``nn.Module.compile()``, whose compiled
    ``__call__`` is dropped from copies, a copy runs eagerly until compiled itself.

    The first call compiles (often tens of seconds before the first log record of a run), so
    it logs a line before and one after, with the time it took.

    Args:
        model: The model.
        name: The method, ``'train_step'`` or ``'val_step'``.
        options: The ``torch.compile`` arguments.
    """

    def __init__(self, model: nn.Module, name: str, options: dict) -> None:
        step = getattr(type(model), name)
        functools.update_wrapper(self, step)
        self.model, self.name, self.options = model, name, options
        # The loss parsing of a step logs floats (.item()), which breaks the graph by design:
        # fullgraph applies to model(...) (the forward), not to the steps around it.
        self._compiled = torch.compile(step, **{**options, "fullgraph": False})
        self._called = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the compiled step; a backend failure becomes :class:`CompileBackendError`."""
        from torch._dynamo.exc import BackendCompilerFailed

        first, self._called = not self._called, True
        if first:
            logger = get_logger("mmpar")
            logger.info(
                "compile: torch.compile (backend %r) is compiling %s; its first call waits for "
                "it (often tens of seconds)",
                _backend_name(self.options),
                self.name,
            )
            started = time.perf_counter()
        try:
            out = self._compiled(self.model, *args, **kwargs)
        except BackendCompilerFailed as err:
            raise CompileBackendError(backend_failure_message(self.options, err)) from err
        if first:
            elapsed = time.perf_counter() - started
            logger.info("compile: %s compiled and ran in %.1f s", self.name, elapsed)
        return out

    def __reduce__(self) -> tuple:
        return getattr, (self.model, self.name)


def compile_model(model: nn.Module, value: Any, replicas: int = 1) -> nn.Module:
    """Compile ``model`` in place as the config value ``compile`` asks; return it.

    ``model.compile(**options)`` compiles ``model(...)``; ``train_step`` and ``val_step`` (when
    the model has them) become instance attributes that run compiled code. Call it on the bare
    model, before it is wrapped (``MMDataParallel``, ``MMDistributedDataParallel``). Nothing is
    compiled until the first call (the first training iteration).

    Args:
        model: The bare model.
        value: The config value ``compile`` (see :func:`compile_options`).
        replicas: How many devices one process runs the model on (``MMDataParallel`` with
            several ``gpu_ids``). Compiled models are refused there: the replicas would share
            the original model's compiled methods; use one process per device (MMDDP).

    Returns:
        ``model`` itself (compiled when ``value`` asks for it).

    Raises:
        ConfigArgumentError: A bad ``compile`` value (see :func:`compile_options`).
        CompileConfigError: An unknown backend, options ``torch.compile`` refuses (e.g. an
            unknown ``mode``), or ``replicas > 1``.
    """
    options = compile_options(value)
    if options is None:
        return model
    if replicas > 1:
        raise CompileConfigError(
            f"compile: a compiled model cannot be replicated over {replicas} devices in one "
            "process (MMDataParallel with several gpu_ids); launch one process per device "
            "(tools/dist_train.sh, MMDistributedDataParallel) or remove compile"
        )
    with config_error_context("compile"):
        try:
            model.compile(**options)
            for name in STEP_METHODS:
                if callable(getattr(type(model), name, None)):
                    setattr(model, name, CompiledStep(model, name, options))
        except (RuntimeError, ValueError) as err:  # e.g. mode='fast': torch lists the modes
            raise CompileConfigError(f"torch.compile refused {options}: {err}") from err
    return model
