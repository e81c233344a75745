"""mmcv 1.x ``mmcv.utils.path`` names."""

import os
from pathlib import Path

import pytest

from mmpar.utils import check_file_exist, fopen, is_filepath, mkdir_or_exist, scandir, symlink
from mmpar.utils.path import find_vcs_root


def test_is_filepath():
    assert is_filepath("a.txt") and is_filepath(Path("a.txt"))
    assert not is_filepath(1) and not is_filepath(None) and not is_filepath(b"a")


def test_fopen_str_and_path(tmp_path):
    target = tmp_path / "f.txt"
    with fopen(str(target), "w") as f:
        f.write("hello")
    with fopen(target) as f:
        assert f.read() == "hello"
    with pytest.raises(ValueError, match="str or a Path"):
        fopen(3)


def test_check_file_exist(tmp_path):
    present = tmp_path / "x.py"
    present.write_text("")
    check_file_exist(str(present))
    check_file_exist(present)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        check_file_exist(str(tmp_path / "missing.py"))
    with pytest.raises(FileNotFoundError):  # a directory is not a file
        check_file_exist(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="^where is .*nope"):
        check_file_exist(tmp_path / "nope", msg_tmpl="where is {}")


def test_mkdir_or_exist(tmp_path, monkeypatch):
    deep = tmp_path / "a" / "b" / "c"
    mkdir_or_exist(str(deep))
    assert deep.is_dir()
    mkdir_or_exist(deep)  # exists already: fine
    mkdir_or_exist("")  # no-op
    monkeypatch.setenv("HOME", str(tmp_path))
    mkdir_or_exist("~/from_home")
    assert (tmp_path / "from_home").is_dir()
    (tmp_path / "file").write_text("")
    with pytest.raises(FileExistsError):
        mkdir_or_exist(tmp_path / "file")


def test_symlink(tmp_path):
    src = tmp_path / "src.txt"
    src.write_text("one")
    other = tmp_path / "other.txt"
    other.write_text("two")
    link = tmp_path / "link.txt"
    symlink(str(src), str(link))
    assert link.is_symlink() and link.read_text() == "one"
    symlink("other.txt", link)  # overwrite, relative target
    assert os.readlink(link) == "other.txt" and link.read_text() == "two"
    with pytest.raises(FileExistsError):
        symlink(src, link, overwrite=False)


def test_scandir(tmp_path):
    for rel in ["a.py", "b.TXT", ".hidden.py", "sub/c.py", "sub/deep/d.txt", ".git/e.py"]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    assert sorted(scandir(tmp_path)) == ["a.py", "b.TXT"]
    assert sorted(scandir(str(tmp_path), ".py")) == ["a.py"]
    assert sorted(scandir(tmp_path, ".py", recursive=True)) == [
        os.path.join(".git", "e.py"),
        "a.py",
        os.path.join("sub", "c.py"),
    ]
    assert sorted(scandir(tmp_path, (".txt", ".py"), recursive=True)) == sorted(
        [os.path.join(".git", "e.py"), "a.py", "sub/c.py", "sub/deep/d.txt"]
    )
    assert sorted(scandir(tmp_path, ".txt", case_sensitive=False)) == ["b.TXT"]
    assert sorted(scandir(tmp_path, (".TXT",), recursive=True, case_sensitive=False)) == [
        "b.TXT",
        os.path.join("sub", "deep", "d.txt"),
    ]
    with pytest.raises(TypeError, match="dir_path"):
        scandir(1)
    with pytest.raises(TypeError, match="suffix"):
        scandir(tmp_path, [".py"])


def test_find_vcs_root(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    inner = tmp_path / "repo" / "pkg" / "mod"
    inner.mkdir(parents=True)
    (inner / "f.py").write_text("")
    root = str(tmp_path / "repo")
    assert find_vcs_root(str(inner)) == root
    assert find_vcs_root(inner / "f.py") == root
    assert find_vcs_root(root) == root
    assert find_vcs_root(str(inner), markers=("pkg",)) == root
    assert find_vcs_root(str(inner), markers=("no-such-marker-xyz",)) is None
