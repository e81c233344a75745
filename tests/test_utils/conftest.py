"""Fixtures for the utils tests."""

import textwrap
from pathlib import Path

import pytest


@pytest.fixture
def write(tmp_path):
    """Write dedented text to ``tmp_path/<relpath>`` (creating folders) and return its path."""

    def _write(relpath: str, text: str) -> Path:
        path = tmp_path / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    return _write
