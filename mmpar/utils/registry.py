"""A name → class registry and the config-driven builder that uses it (mmcv 1.x compatible)."""

from __future__ import annotations

import difflib
import functools
import inspect
import re
import warnings
from collections.abc import Sequence
from typing import Any, Callable, Union

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils.misc import deprecated_api_warning as deprecated_api_warning
from mmpar.utils.misc import is_seq_of as is_seq_of

# The argument errors and checks live in config_args; imported from here since mmcv 1.x.
from .config_args import (  # noqa: F401
    ConfigArgumentError,
    ConfigArgumentTypeError,
    _error_text,
    check_argument_names,
    check_argument_types,
    config_error_context,
    unexpected_argument_error,
)


class ScopeConflictError(KeyError, AssertionError):
    """A child registry's scope is already taken in its parent.

    A ``KeyError`` (mmpar's type) and an ``AssertionError`` (mmcv 1.x asserted).
    """

    def __str__(self) -> str:
        return _error_text(self)


class NotARegistryError(TypeError, AssertionError):
    """A registry's ``parent`` is not a :class:`Registry` (``TypeError``; mmcv asserted)."""


_UNEXPECTED_KWARG = re.compile(r"got an unexpected keyword argument '([^']+)'")


def build_from_cfg(cfg: dict, registry: Registry, default_args: dict | None = None) -> Any:
    """Build an object from a config dict.

    Args:
        cfg: Config dict; ``cfg['type']`` is a registered name (optionally ``scope.Name``),
            a class or any callable. The other keys are keyword arguments.
        registry: The registry to look the type up in.
        default_args: Keyword arguments used when ``cfg`` does not set them.

    Returns:
        The built object.

    Raises:
        TypeError: ``cfg`` is not a dict or ``type`` has the wrong kind.
        ConfigArgumentError: An argument the type does not accept, or a missing required one
            (a ``TypeError``; names the registry, the type and the argument).
        ConfigArgumentTypeError: A value the annotation of its argument refuses (a
            ``ConfigArgumentError``; names the argument, the expected type and the value).
        KeyError: ``type`` is missing or not registered (with close matches).
        Exception: Re-raised from the constructor, with the registry and type named.
    """
    if not isinstance(cfg, dict):
        raise TypeError(f"cfg must be a dict, but got {type(cfg).__name__}: {cfg!r}")
    if "type" not in cfg and (default_args is None or "type" not in default_args):
        raise KeyError(
            f'`cfg` or `default_args` must contain the key "type" to build from registry '
            f'"{registry.name}", but got {cfg}'
        )
    if not isinstance(registry, Registry):
        raise TypeError(f"registry must be a Registry, but got {type(registry).__name__}")
    if default_args is not None and not isinstance(default_args, dict):
        raise TypeError(f"default_args must be a dict or None, but got {type(default_args)}")

    args = dict(cfg)
    if default_args is not None:
        for name, value in default_args.items():
            args.setdefault(name, value)

    obj_type = args.pop("type")
    if isinstance(obj_type, str):
        obj_cls = registry.get(obj_type)
        if obj_cls is None:
            raise KeyError(registry.missing_message(obj_type))
    elif inspect.isclass(obj_type) or callable(obj_type):
        obj_cls = obj_type
    else:
        raise TypeError(f"type must be a str, class or callable, but got {type(obj_type).__name__}")
    name = getattr(obj_cls, "__name__", repr(obj_cls))
    check_argument_names(obj_cls, args, f'{name} (registry "{registry.name}")')
    check_argument_types(obj_cls, args, [k for k in default_args or () if k not in cfg])
    try:
        return obj_cls(**args)
    except Exception as err:
        err_type: type = type(err)
        bad = _UNEXPECTED_KWARG.search(str(err)) if err_type is TypeError else None
        if bad and bad.group(1) in args:
            # A **kwargs constructor passed a config argument on to one that rejects it.
            err_type = ConfigArgumentError
        try:
            wrapped = err_type(f'{name} (registry "{registry.name}"): {_error_text(err)}')
        except Exception:
            raise err from None  # its constructor takes other arguments: keep it as it is
        raise wrapped from err


class Registry:
    """Map names to classes or functions, optionally in a tree of scoped registries.

    Args:
        name: Registry name, used in error messages.
        build_func: Function ``(cfg, registry, default_args)`` used by :meth:`build`;
            inherited from ``parent`` when not given, else :func:`build_from_cfg`.
        parent: Parent registry; unscoped names missing here are looked up in the parent.
        scope: Scope name of this registry (defaults to the top-level package of the
            module that creates it). ``scope.Name`` lookups are routed to the child with
            that scope.

    Example:
        >>> MODELS = Registry('model')
        >>> @MODELS.register_module()
        ... class ResNet:
        ...     pass
        >>> resnet = MODELS.build(dict(type='ResNet'))
    """

    def __init__(
        self,
        name: str,
        build_func: Callable | None = None,
        parent: Registry | None = None,
        scope: str | None = None,
    ) -> None:
        self._name = name
        self._module_dict: dict[str, Any] = {}
        self._children: dict[str, Registry] = {}
        self._scope = scope if scope is not None else self.infer_scope()
        if parent is not None and not isinstance(parent, Registry):
            raise NotARegistryError(f"parent must be a Registry, but got {type(parent).__name__}")
        if build_func is None:
            build_func = parent.build_func if parent is not None else build_from_cfg
        self.build_func = build_func
        if parent is not None:
            parent._add_children(self)
        self.parent = parent

    def __len__(self) -> int:
        return len(self._module_dict)

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(name={self._name}, items={self._module_dict})"

    @staticmethod
    def infer_scope() -> str:
        """Return the top-level package name of the module that created the registry."""
        frame = inspect.currentframe()
        # Walk out of this module's frames (infer_scope, __init__, subclass __init__s).
        while frame is not None and frame.f_globals.get("__name__") == __name__:
            frame = frame.f_back
        module = frame.f_globals.get("__name__", "") if frame is not None else ""
        return module.split(".")[0] or "mmpar"

    @staticmethod
    def split_scope_key(key: str) -> tuple[str | None, str]:
        """Split ``'scope.Name'`` into ``('scope', 'Name')``; unscoped keys give ``(None, key)``."""
        scope, sep, rest = key.partition(".")
        if sep:
            return scope, rest
        return None, key

    @property
    def name(self) -> str:
        """The registry's name."""
        return self._name

    @property
    def scope(self) -> str:
        """The registry's scope."""
        return self._scope

    @property
    def module_dict(self) -> dict[str, Any]:
        """Registered names and their objects (this registry only)."""
        return self._module_dict

    @property
    def children(self) -> dict[str, Registry]:
        """Child registries by scope."""
        return self._children

    def _root(self) -> Registry:
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def _lookup(self, key: str) -> Any:
        scope, real_key = self.split_scope_key(key)
        if scope is None or scope == self._scope:
            name = real_key if scope is not None else key
            if name in self._module_dict:
                return self._module_dict[name]
            return self.parent._lookup(name) if self.parent is not None else None
        if scope in self._children:
            return self._children[scope]._lookup(real_key)
        # Not ours nor a child's: let the root route it down its own tree.
        root = self._root()
        if root is not self:
            return root._lookup(key)
        return None

    def get(self, key: str) -> Any:
        """Return the object registered as ``key`` (``'Name'`` or ``'scope.Name'``), or None.

        When a name is missing, installed plugins (entry-point group ``mmpar.plugins``) are
        imported once and the lookup is retried.
        """
        found = self._lookup(key)
        if found is None:
            from mmpar.utils.plugins import load_entry_point_plugins

            if load_entry_point_plugins():
                found = self._lookup(key)
        return found

    def _all_names(self) -> list[str]:
        names = list(self._module_dict)
        node = self.parent
        while node is not None:
            names.extend(node._module_dict)
            node = node.parent
        for scope, child in self._children.items():
            names.extend(f"{scope}.{n}" for n in child._module_dict)
        return names

    def missing_message(self, key: str) -> str:
        """Return the error text for an unknown ``key``, with close matches when there are any."""
        close = difflib.get_close_matches(key, self._all_names(), n=3, cutoff=0.6)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        return (
            f'"{key}" is not in the {self._name} registry (scope "{self._scope}").{hint} '
            f"If it is defined in your own module, import it via "
            f"custom_imports=dict(imports=[...]) in the config."
        )

    def build(self, cfg: dict, default_args: dict | None = None, **kwargs: Any) -> Any:
        """Build an object from ``cfg`` with this registry's ``build_func``."""
        return self.build_func(cfg, registry=self, default_args=default_args, **kwargs)

    def _add_children(self, registry: Registry) -> None:
        """Make ``registry`` a child: ``'<its scope>.Name'`` lookups here are routed to it.

        Raises:
            NotARegistryError: ``registry`` is not a Registry.
            ScopeConflictError: A child with the same scope exists (a ``KeyError``).
        """
        if not isinstance(registry, Registry):
            raise NotARegistryError(f"a child must be a Registry, but got {type(registry)}")
        if registry.scope in self._children:
            raise ScopeConflictError(
                f'scope "{registry.scope}" already exists in registry "{self._name}"; give the '
                f"child registry another scope"
            )
        self._children[registry.scope] = registry

    def _register_module(
        self,
        module: Any = None,
        module_name: Union[str, Sequence[str], None] = None,
        force: bool = False,
        **deprecated: Any,
    ) -> None:
        if "module_class" in deprecated:
            # mmcv 1.x renamed this argument; the old keyword still works, with a warning.
            if module is not None:
                raise AssertionError(
                    "_register_module got both module_class (the old name) and module; "
                    "pass module only"
                )
            warnings.warn(
                f"{self._name} registry: _register_module(module_class=...) is deprecated; "
                "pass module=... instead",
                DeprecationWarning,
                stacklevel=2,
            )
            module = deprecated.pop("module_class")
        if deprecated:
            raise TypeError(f"_register_module() got unexpected arguments {sorted(deprecated)}")
        if not (inspect.isclass(module) or inspect.isfunction(module)):
            raise TypeError(
                f"{self._name} registry: module must be a class or a function, but got "
                f"{type(module).__name__}: {module!r}"
            )
        if module_name is None:
            module_name = module.__name__
        names = [module_name] if isinstance(module_name, str) else list(module_name)
        for name in names:
            if not force and name in self._module_dict:
                raise KeyError(
                    f'"{name}" is already registered in the {self._name} registry '
                    f"(by {self._module_dict[name]!r}); pass force=True to override it"
                )
            self._module_dict[name] = module

    def deprecated_register_module(self, cls: Any = None, force: bool = False) -> Any:
        """Register with the old API, ``register_module(cls, force=False)``; warns on each call.

        Args:
            cls: The class to register under its own name; when None, a decorator is returned
                (which warns again when it is applied).
            force: Replace an existing entry of the same name instead of raising KeyError.

        Returns:
            ``cls``, or the decorator.
        """
        warnings.warn(
            f"{self._name} registry: the old form register_module(cls, force=False) is "
            "deprecated and will go; use register_module(name=None, force=False, module=None) "
            "or the @register_module() decorator",
            DeprecationWarning,
            stacklevel=2,
        )
        if cls is None:
            return functools.partial(self.deprecated_register_module, force=force)
        self._register_module(cls, force=force)
        return cls

    def register_module(
        self,
        name: Union[str, list, None] = None,
        force: bool = False,
        module: Any = None,
    ) -> Any:
        """Register a class or function, as a decorator or a plain call.

        Args:
            name: Name or list of names to register under (default: ``module.__name__``).
                A class passed here is registered under its own name, as mmcv's old API
                ``register_module(SomeClass)`` did (with a ``DeprecationWarning``).
            force: Replace an existing entry of the same name instead of raising KeyError.
            module: The object to register; when None, a decorator is returned.

        Returns:
            The module itself, or a decorator.

        Raises:
            TypeError: ``force`` is not a bool, ``name`` is not a str or a sequence of str,
                or the module is not a class or a function.
            KeyError: A name is already registered and ``force`` is False.
        """
        if not isinstance(force, bool):
            raise TypeError(f"force must be a bool, but got {type(force).__name__}")
        if inspect.isclass(name):  # the old form register_module(SomeClass)
            return self.deprecated_register_module(name, force=force)
        names_ok = isinstance(name, (list, tuple)) and all(isinstance(n, str) for n in name)
        if not (name is None or isinstance(name, str) or names_ok):
            hint = " (pass a function as module=...)" if inspect.isfunction(name) else ""
            raise TypeError(
                f"name must be None, a str or a list of str, but got {type(name).__name__}{hint}"
            )
        if module is not None:
            self._register_module(module, name, force)
            return module

        def _decorator(obj: Any) -> Any:
            self._register_module(obj, name, force)
            return obj

        return _decorator
