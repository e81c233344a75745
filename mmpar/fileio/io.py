"""``load`` / ``dump``: read and write JSON, YAML and pickle files (or strings) by format."""

from __future__ import annotations

from io import BytesIO, StringIO
from pathlib import Path
from typing import Any, TextIO, Union

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import is_list_of as is_list_of

from .file_client import FileClient
from .handlers import BaseFileHandler, JsonHandler, PickleHandler, YamlHandler

FileLikeObject = Union[TextIO, StringIO, BytesIO]

# Format name (a file suffix without the dot) -> the handler that reads and writes it.
file_handlers: dict[str, BaseFileHandler] = {
    "json": JsonHandler(),
    "yaml": YamlHandler(),
    "yml": YamlHandler(),
    "pickle": PickleHandler(),
    "pkl": PickleHandler(),
}


def _handler_for(file_format: str | None, file) -> BaseFileHandler:
    if file_format not in file_handlers:
        source = "" if file is None or not isinstance(file, str) else f" (inferred from {file!r})"
        raise TypeError(
            f"Unsupported format: {file_format!r}{source}. Registered formats: "
            f"{sorted(file_handlers)}; pass file_format= or add a handler with register_handler"
        )
    return file_handlers[file_format]


def _suffix(path: str) -> str:
    """The text after the last dot of the file name ('' without one)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[1] if "." in name else ""


def load(
    file: str | Path | FileLikeObject,
    file_format: str | None = None,
    file_client_args: dict | None = None,
    **kwargs,
) -> Any:
    """Read a JSON, YAML or pickle file (or another registered format).

    Args:
        file: A path (str or Path, local or a URI such as ``http://...``) or an open file.
        file_format: The format; by default the path's suffix (``json``, ``yaml``/``yml``,
            ``pickle``/``pkl``). Required for a file object.
        file_client_args: Arguments of the :class:`FileClient` that reads the path; by default
            the client is chosen by the path's URI prefix.
        **kwargs: Passed to the handler's ``load_from_fileobj``.

    Returns:
        The loaded object.

    Raises:
        TypeError: The format is not registered, or ``file`` is neither a path nor a file.

    Example:
        >>> import mmpar
        >>> mmpar.dump({'a': 1}, '/tmp/mmpar_demo/a.json')
        >>> mmpar.load('/tmp/mmpar_demo/a.json')
        {'a': 1}
    """
    if isinstance(file, Path):
        file = str(file)
    if file_format is None and isinstance(file, str):
        file_format = _suffix(file)
    handler = _handler_for(file_format, file)
    if isinstance(file, str):
        client = FileClient.infer_client(file_client_args, file)
        if handler.str_like:
            with StringIO(client.get_text(file)) as f:
                return handler.load_from_fileobj(f, **kwargs)
        with BytesIO(client.get(file)) as f:
            return handler.load_from_fileobj(f, **kwargs)
    if hasattr(file, "read"):
        return handler.load_from_fileobj(file, **kwargs)
    raise TypeError(
        f"load: file must be a path (str or Path) or a file object, but got {type(file).__name__}"
    )


def dump(
    obj: Any,
    file: str | Path | FileLikeObject | None = None,
    file_format: str | None = None,
    file_client_args: dict | None = None,
    **kwargs,
) -> str | bytes | None:
    """Write ``obj`` as JSON, YAML or pickle to a file, or return it serialized.

    Args:
        obj: The object to write.
        file: A path (str or Path; parent folders are created on disk), an open file, or None
            to return the serialized string (bytes for pickle).
        file_format: The format; by default the path's suffix. Required without a path.
        file_client_args: Arguments of the :class:`FileClient` that writes the path.
        **kwargs: Passed to the handler (e.g. ``indent=2`` for JSON).

    Returns:
        The serialized object if ``file`` is None, else None.

    Raises:
        ValueError: ``file`` is None and ``file_format`` is not given.
        TypeError: The format is not registered, or ``file`` is neither a path nor a file.
    """
    if isinstance(file, Path):
        file = str(file)
    if file_format is None:
        if isinstance(file, str):
            file_format = _suffix(file)
        elif file is None:
            raise ValueError(
                "dump: file_format must be given when file is None (e.g. file_format='json')"
            )
    handler = _handler_for(file_format, file)
    if file is None:
        return handler.dump_to_str(obj, **kwargs)
    if isinstance(file, str):
        client = FileClient.infer_client(file_client_args, file)
        buffer = StringIO() if handler.str_like else BytesIO()
        with buffer as f:
            handler.dump_to_fileobj(obj, f, **kwargs)
            if handler.str_like:
                client.put_text(f.getvalue(), file)
            else:
                client.put(f.getvalue(), file)
        return None
    if hasattr(file, "write"):
        handler.dump_to_fileobj(obj, file, **kwargs)
        return None
    raise TypeError(
        f"dump: file must be a path (str or Path), a file object or None, but got "
        f"{type(file).__name__}"
    )


def _register_handler(handler: BaseFileHandler, file_formats: str | list[str]) -> None:
    """Make ``handler`` read and write ``file_formats`` (a suffix or a list of them)."""
    if not isinstance(handler, BaseFileHandler):
        raise TypeError(
            f"handler must be an instance of a BaseFileHandler subclass, but got {handler!r}"
        )
    if isinstance(file_formats, str):
        file_formats = [file_formats]
    if not isinstance(file_formats, (list, tuple)) or not all(
        isinstance(ext, str) for ext in file_formats
    ):
        raise TypeError(f"file_formats must be a str or a list of str, but got {file_formats!r}")
    for ext in file_formats:
        file_handlers[ext] = handler


def register_handler(file_formats, handler=None, **kwargs):
    """Register a handler for file formats: as a class decorator (mmcv's way) or directly.

    ``@register_handler('txt')`` on a :class:`BaseFileHandler` subclass instantiates it with
    ``**kwargs`` and registers the instance. ``register_handler('txt', MyHandler())`` and
    ``register_handler(MyHandler(), 'txt')`` register an instance at once.

    Args:
        file_formats: A format (file suffix without the dot) or a list of them.
        handler: A handler instance to register now; None to return a decorator.
        **kwargs: Constructor arguments of the decorated class.

    Returns:
        The decorator (when ``handler`` is None), else None.

    Raises:
        TypeError: The handler is not a BaseFileHandler (instance or subclass), or the formats
            are not a str / list of str.
    """
    if isinstance(file_formats, BaseFileHandler):  # register_handler(handler, formats)
        file_formats, handler = handler, file_formats
    if handler is not None:
        _register_handler(handler, file_formats)
        return None

    def decorator(cls):
        if not (isinstance(cls, type) and issubclass(cls, BaseFileHandler)):
            raise TypeError(
                f"@register_handler({file_formats!r}) decorates a BaseFileHandler subclass, "
                f"but got {cls!r}"
            )
        _register_handler(cls(**kwargs), file_formats)
        return cls

    return decorator


__all__ = ["FileLikeObject", "dump", "file_handlers", "load", "register_handler"]
