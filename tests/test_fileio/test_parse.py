"""list_from_file / dict_from_file on local files."""

from pathlib import Path

import pytest

import mmpar
from mmpar.fileio import dict_from_file, list_from_file


@pytest.fixture
def lines(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_bytes("a\nb\r\nc d\né\n".encode())
    return path


def test_list_from_file(lines):
    assert list_from_file(lines) == ["a", "b", "c d", "é"]
    assert list_from_file(str(lines), prefix="p/") == ["p/a", "p/b", "p/c d", "p/é"]
    assert list_from_file(lines, offset=1, max_num=2) == ["b", "c d"]
    assert list_from_file(lines, max_num=-1) == list_from_file(lines, max_num=0)
    assert list_from_file(lines, offset=10) == []
    assert mmpar.list_from_file(lines, file_client_args={"backend": "disk"})[0] == "a"


def test_list_from_file_encoding(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("café\n".encode("latin-1"))
    assert list_from_file(path, encoding="latin-1") == ["café"]
    with pytest.raises(UnicodeDecodeError):
        list_from_file(path)


def test_dict_from_file(tmp_path):
    path = tmp_path / "map.txt"
    path.write_text("1 cat\n2\tdog  big\n")
    assert dict_from_file(path) == {"1": "cat", "2": ["dog", "big"]}
    assert dict_from_file(str(path), key_type=int) == {1: "cat", 2: ["dog", "big"]}


def test_dict_from_file_line_without_value_is_an_assertion_error(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("1 cat\nlonely\n")
    with pytest.raises(AssertionError, match=r"bad.txt, line 2: expected a key .*'lonely'"):
        dict_from_file(path)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        list_from_file(Path(tmp_path / "missing.txt"))
