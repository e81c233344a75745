"""Read text files as a list of lines or a ``key value...`` mapping, through ``FileClient``."""

from __future__ import annotations

import itertools
from io import StringIO
from pathlib import Path

from .file_client import FileClient


def list_from_file(
    filename: str | Path,
    prefix: str = "",
    offset: int = 0,
    max_num: int = 0,
    encoding: str = "utf-8",
    file_client_args: dict | None = None,
) -> list[str]:
    """Return the lines of a text file, without line endings.

    Args:
        filename: A local path or a URI.
        prefix: A string put before every line.
        offset: How many lines to skip first.
        max_num: At most this many lines; 0 or less: no limit.
        encoding: The file's encoding.
        file_client_args: Arguments of the :class:`FileClient` that reads the file (by default
            chosen by the URI prefix).

    Returns:
        The lines.
    """
    client = FileClient.infer_client(file_client_args, filename)
    with StringIO(client.get_text(filename, encoding)) as f:  # lines end at "\n" only
        lines = itertools.islice(f, offset, offset + max_num if max_num > 0 else None)
        return [prefix + line.rstrip("\n\r") for line in lines]


def dict_from_file(
    filename: str | Path,
    key_type: type = str,
    encoding: str = "utf-8",
    file_client_args: dict | None = None,
) -> dict:
    """Read a text file of ``key value [value ...]`` lines (whitespace-separated) as a dict.

    A line with one value maps the key to that string, with more to the list of them.

    Args:
        filename: A local path or a URI.
        key_type: Applied to each key (e.g. ``int``).
        encoding: The file's encoding.
        file_client_args: Arguments of the :class:`FileClient` that reads the file.

    Returns:
        The mapping, in file order.

    Raises:
        AssertionError: A line has fewer than two columns (as mmcv); the message names the
            file and line.
    """
    client = FileClient.infer_client(file_client_args, filename)
    mapping = {}
    with StringIO(client.get_text(filename, encoding)) as f:
        lines = list(f)
    for number, line in enumerate(lines, 1):
        items = line.split()
        if len(items) < 2:
            raise AssertionError(
                f"dict_from_file: {filename}, line {number}: expected a key and at least one "
                f"value separated by whitespace, got {line.rstrip()!r}"
            )
        mapping[key_type(items[0])] = items[1:] if len(items) > 2 else items[1]
    return mapping
