"""mmcv 1.x ``digit_version`` and ``get_git_hash``."""

import subprocess

import pytest
from packaging.version import InvalidVersion

from mmpar.utils import digit_version, get_git_hash


def test_digit_version_values():
    assert digit_version("1.7.2") == (1, 7, 2, 0, 0, 0)
    assert digit_version("2.1") == (2, 1, 0, 0, 0, 0)
    assert digit_version("1.2.3.4.5") == (1, 2, 3, 4, 0, 0)
    assert digit_version("1.2.3", length=2) == (1, 2, 0, 0)
    assert digit_version("1.10.0a2") == (1, 10, 0, 0, -3, 2)
    assert digit_version("1.10.0b1") == (1, 10, 0, 0, -2, 1)
    assert digit_version("1.10.0rc1") == (1, 10, 0, 0, -1, 1)
    assert digit_version("1.10.0.dev20210101") == (1, 10, 0, 0, -4, 0)
    assert digit_version("1.0.post2") == (1, 0, 0, 0, 1, 2)
    assert digit_version("2.14.1+cu130") == (2, 14, 1, 0, 0, 0)


def test_digit_version_orders_like_versions():
    ordered = [
        "1.9.0",
        "1.10.0.dev1",
        "1.10.0a0",
        "1.10.0b0",
        "1.10.0rc1",
        "1.10.0",
        "1.10.0.post1",
    ]
    as_tuples = [digit_version(v) for v in ordered]
    assert as_tuples == sorted(as_tuples)
    assert digit_version("1.10.0") > digit_version("1.9.9")


@pytest.mark.parametrize("bad", ["not-a-version", "", "1.x", "parrots"])
def test_digit_version_malformed(bad):
    with pytest.raises(ValueError, match="PEP 440") as info:
        digit_version(bad)
    assert isinstance(info.value, AssertionError)  # mmcv with old packaging asserted
    assert isinstance(info.value, InvalidVersion)  # mmcv with current packaging


def test_digit_version_non_str():
    with pytest.raises(TypeError, match="str"):
        digit_version(1.7)


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_get_git_hash_in_a_repo(tmp_path, monkeypatch):
    _git(tmp_path, "init", "-q")
    (tmp_path / "f.txt").write_text("x")
    _git(tmp_path, "add", "f.txt")
    _git(
        tmp_path,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-q",
        "-m",
        "first",
    )
    expected = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()
    monkeypatch.chdir(tmp_path)
    assert get_git_hash() == expected and len(expected) == 40
    assert get_git_hash(digits=7) == expected[:7]


def test_get_git_hash_outside_a_repo_returns_fallback(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert get_git_hash() == "unknown"
    assert get_git_hash(fallback="none") == "none"


def test_get_git_hash_without_git_returns_fallback(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no git executable on PATH
    assert get_git_hash(fallback="nogit") == "nogit"


def test_get_git_hash_bad_digits():
    with pytest.raises(TypeError, match="digits"):
        get_git_hash(digits="7")
