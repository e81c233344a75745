"""The HTTP backend against a real local HTTP server (127.0.0.1, no internet)."""

import os
import urllib.error

import pytest
from helpers import free_port

from mmpar.fileio import FileClient, dict_from_file, list_from_file, load


def test_get_and_get_text(http_root):
    root, base = http_root
    (root / "a.txt").write_text("héllo\nworld\n", encoding="utf-8")
    client = FileClient.infer_client(uri=f"{base}/a.txt")
    assert client.name == "HTTPBackend" and client.allow_symlink is False
    assert client.get(f"{base}/a.txt") == "héllo\nworld\n".encode()
    assert client.get_text(f"{base}/a.txt") == "héllo\nworld\n"
    assert FileClient("http").get_text(f"{base}/a.txt") == "héllo\nworld\n"


def test_load_and_parse_over_http(http_root):
    root, base = http_root
    (root / "cfg.json").write_text('{"a": [1, 2]}')
    (root / "cfg.yaml").write_text("a: 1\n")
    (root / "list.txt").write_text("x\ny\nz\n")
    (root / "map.txt").write_text("1 cat\n2 dog big\n")
    assert load(f"{base}/cfg.json") == {"a": [1, 2]}
    assert load(f"{base}/cfg.yaml") == {"a": 1}
    assert list_from_file(f"{base}/list.txt", offset=1) == ["y", "z"]
    assert dict_from_file(f"{base}/map.txt", key_type=int) == {1: "cat", 2: ["dog", "big"]}


def test_get_local_path_downloads_to_a_temporary_file_removed_afterwards(http_root):
    root, base = http_root
    (root / "w.pkl").write_bytes(b"\x80\x02}q\x00.")
    with FileClient(prefix="http").get_local_path(f"{base}/w.pkl") as local:
        assert os.path.isfile(local) and local.endswith(".pkl")
        with open(local, "rb") as f:
            assert f.read() == b"\x80\x02}q\x00."
    assert not os.path.exists(local)


def test_missing_url_is_an_http_error_naming_the_url(http_root):
    _, base = http_root
    with pytest.raises(urllib.error.HTTPError, match=f"GET {base}/missing.json") as info:
        FileClient(prefix="http").get(f"{base}/missing.json")
    assert info.value.code == 404


def test_unreachable_server_is_a_url_error():
    port = free_port()  # free a moment ago: nothing listens there
    with pytest.raises(urllib.error.URLError, match=f"cannot reach http://127.0.0.1:{port}/x"):
        FileClient(prefix="http").get(f"http://127.0.0.1:{port}/x")


def test_write_operations_are_not_implemented(http_root):
    _, base = http_root
    client = FileClient(prefix="https")
    for call in (
        lambda: client.put(b"x", f"{base}/a"),
        lambda: client.put_text("x", f"{base}/a"),
        lambda: client.remove(f"{base}/a"),
        lambda: client.exists(f"{base}/a"),
        lambda: list(client.list_dir_or_file(base)),
    ):
        with pytest.raises(NotImplementedError, match="HTTPBackend does not support"):
            call()
    assert client.join_path(f"{base}/", "dir/", "a.txt") == f"{base}/dir/a.txt"
