"""Check values against the type annotations of the callable they are passed to.

Used by :func:`mmpar.utils.registry.build_from_cfg` to catch a config value of the wrong type
when an object is built (``lr='fast'`` for ``SGD(lr: float | Tensor)``), instead of deep inside
training. Only what an annotation says is checked, and only where it can be read:

- builtins and classes: ``isinstance``; ``int`` is accepted for ``float`` and ``complex``
  (numpy scalars too), but ``bool`` is accepted for ``int``/``float`` only when the annotation
  also names ``bool``; ``dict`` accepts any mapping (a ``ConfigDict``); ``list`` and ``tuple``
  accept each other (JSON and YAML configs have no tuples);
- ``None``, ``Optional``, ``Union`` / ``X | Y``, ``Literal``, ``Annotated``, ``Callable``
  (``callable()``), ``type[X]``;
- containers (``list[int]``, ``tuple[float, float]``, ``dict[str, int]``, ``Sequence``,
  ``Mapping``, ``Iterable``, ...): the container's type, and the items of lists, tuples, sets
  and dicts up to :data:`MAX_ITEMS` (an iterator is never consumed).

``Any``, type variables, protocols that cannot be checked and annotations that do not resolve
(names imported only for type checkers) are not checked: the check never refuses a value the
annotation does not clearly exclude.
"""

from __future__ import annotations

import collections.abc as cabc
import inspect
import numbers
import reprlib
import types
import typing
from typing import Any, Callable

#: Items of a list/tuple/set/dict checked against an item annotation (the first ones).
MAX_ITEMS = 100

_UNION_TYPES = (typing.Union, types.UnionType)
_NONE_TYPES = (None, type(None))
_SEQUENCES = (list, tuple)
_hints_cache: dict[Any, dict[str, Any]] = {}
_repr = reprlib.Repr()
_repr.maxstring = 40
_repr.maxother = 40


def _annotated_function(obj: Any) -> Any:
    """The function whose annotations describe ``obj(**kwargs)`` (a class: its ``__init__``)."""
    if not inspect.isclass(obj):
        return inspect.unwrap(obj) if callable(obj) else None
    for klass in obj.__mro__:
        if "__init__" in vars(klass) and klass is not object:
            return inspect.unwrap(vars(klass)["__init__"])
        if "__new__" in vars(klass) and klass is not object:
            return inspect.unwrap(vars(klass)["__new__"])
    return None


def _resolve_each(func: Any) -> dict[str, Any]:
    """The annotations of ``func`` that resolve one by one (others are left out)."""
    resolved = {}
    namespace = getattr(func, "__globals__", {})
    for name, annotation in getattr(func, "__annotations__", {}).items():
        holder = types.SimpleNamespace(__annotations__={name: annotation})
        try:
            resolved[name] = typing.get_type_hints(holder, globalns=namespace)[name]
        except Exception:
            continue
    return resolved


def argument_annotations(obj: Any) -> dict[str, Any]:
    """The resolved annotations of the keyword arguments of ``obj`` (a class or a function).

    ``typing.get_type_hints`` of the class's ``__init__`` (or ``__new__``), or of the function;
    when that fails (a name imported only for type checkers), each annotation that resolves on
    its own. ``return``, ``*args`` and ``**kwargs`` are left out; an argument whose default is
    None also accepts None (``x: int = None``). Cached per callable.

    Args:
        obj: The class or function that a config builds or calls.

    Returns:
        ``{argument name: annotation}``; empty when nothing can be read.
    """
    try:
        return _hints_cache[obj]
    except (KeyError, TypeError):
        pass
    func = _annotated_function(obj)
    hints: dict[str, Any] = {}
    if func is not None:
        try:
            hints = typing.get_type_hints(func)
        except Exception:
            hints = _resolve_each(func)
    try:
        params = inspect.signature(func).parameters if func is not None else {}
    except (TypeError, ValueError):
        params = {}
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    hints = {n: a for n, a in hints.items() if n in params and params[n].kind not in variadic}
    for name, annotation in hints.items():
        if params[name].default is None:  # ``x: int = None`` takes None
            hints[name] = typing.Optional[annotation]
    try:
        _hints_cache[obj] = hints
    except TypeError:  # an unhashable callable: not cached
        pass
    return hints


def _is_bool(value: Any) -> bool:
    kind = type(value)
    return isinstance(value, bool) or (
        kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool")
    )


def _accepts_class(cls: Any, value: Any) -> bool:
    if cls is bool:
        return _is_bool(value)
    if cls in (int, float, complex):
        if _is_bool(value):
            return False
        abc = {int: numbers.Integral, float: numbers.Real, complex: numbers.Complex}[cls]
        return isinstance(value, abc)
    if cls is dict:
        return isinstance(value, cabc.Mapping)
    if cls in _SEQUENCES:
        return isinstance(value, _SEQUENCES)
    try:
        return isinstance(value, cls)
    except TypeError:  # a protocol that is not runtime-checkable, a special form, ...
        return True


def _accepts_items(origin: Any, args: tuple, value: Any) -> bool:
    """Check the items of a list/tuple/set/dict ``value`` against ``origin[args]``."""
    if not args:
        return True
    if isinstance(value, cabc.Mapping):
        if len(args) != 2 or not issubclass(origin, cabc.Mapping):
            return True
        pairs = list(value.items())[:MAX_ITEMS]
        return all(accepts(args[0], k) and accepts(args[1], v) for k, v in pairs)
    if not isinstance(value, (list, tuple, set, frozenset)):
        return True  # an iterator, a string, a tensor ...: never consumed
    items = list(value)[:MAX_ITEMS]
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            args = args[:1]
        elif args == ((),):
            return len(value) == 0
        else:
            return len(value) == len(args) and all(map(accepts, args, items))
    if len(args) != 1:
        return True
    return all(accepts(args[0], item) for item in items)


def accepts(annotation: Any, value: Any) -> bool:
    """Whether ``value`` fits ``annotation`` (True where the annotation cannot be checked).

    Args:
        annotation: A resolved annotation (a class, ``int | None``, ``list[str]``, ...).
        value: The value.

    Example:
        >>> accepts(float | None, 1), accepts(float, True), accepts(tuple[int, int], [1, 2])
        (True, False, True)
    """
    if annotation in _NONE_TYPES:
        return value is None
    if annotation is Any or annotation is object or annotation is inspect.Parameter.empty:
        return True
    supertype = getattr(annotation, "__supertype__", None)  # typing.NewType
    if supertype is not None:
        return accepts(supertype, value)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in _UNION_TYPES:
        return any(accepts(arg, value) for arg in args)
    if origin is typing.Literal:
        return any(isinstance(value, type(arg)) and value == arg for arg in args)
    if origin is typing.Annotated:
        return accepts(args[0], value)
    if origin is cabc.Callable or annotation is typing.Callable:
        return callable(value)
    if origin is type:
        if not inspect.isclass(value):
            return False
        target = args[0] if args else object
        return not inspect.isclass(target) or issubclass(value, target)
    if inspect.isclass(origin):
        return _accepts_class(origin, value) and _accepts_items(origin, args, value)
    if inspect.isclass(annotation):
        return _accepts_class(annotation, value)
    return True  # TypeVar, ForwardRef, an unresolved string, other special forms


def describe(annotation: Any) -> str:
    """A short text of ``annotation`` for messages: ``float | Tensor``, ``list[int]``, ...

    Example:
        >>> describe(typing.Optional[typing.Sequence[int]])
        'Sequence[int] | None'
    """
    if annotation in _NONE_TYPES:
        return "None"
    if annotation is Ellipsis:
        return "..."
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in _UNION_TYPES:
        return " | ".join(describe(arg) for arg in args)
    if origin is typing.Literal:
        return " | ".join(repr(arg) for arg in args)
    if origin is typing.Annotated:
        return describe(args[0])
    if origin is not None:
        name = getattr(origin, "__name__", None) or str(origin).replace("typing.", "")
        if origin is cabc.Callable:
            return "callable"
        return f"{name}[{', '.join(describe(a) for a in args)}]" if args else name
    if inspect.isclass(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def describe_value(value: Any) -> str:
    """``'<type name> <short repr>'`` of ``value``, e.g. ``"str 'fast'"``."""
    return f"{type(value).__name__} {_repr.repr(value)}"


def first_mismatch(obj: Callable, kwargs: dict) -> tuple[str, Any] | None:
    """The first keyword argument of ``kwargs`` that ``obj``'s annotations refuse.

    Arguments without a readable annotation (and those a ``**kwargs`` takes) are not checked.

    Args:
        obj: The class or function to be called with ``**kwargs``.
        kwargs: The keyword arguments.

    Returns:
        ``(argument name, annotation)``, or None when every annotated argument fits.
    """
    hints = argument_annotations(obj)
    if not hints:
        return None
    for name, value in kwargs.items():
        if name in hints and not accepts(hints[name], value):
            return name, hints[name]
    return None
