"""FileClient: backend choice and caching, the disk backend, registering backends."""

import os
from pathlib import Path

import pytest

from mmpar.fileio import BaseStorageBackend, FileClient
from mmpar.fileio.file_client import HardDiskBackend, HTTPBackend, PetrelBackend


def test_default_is_the_disk_and_clients_are_cached_per_arguments():
    client = FileClient()
    assert isinstance(client.client, HardDiskBackend)
    assert client.name == "HardDiskBackend" and client.allow_symlink is True
    assert FileClient("disk") is client is FileClient(backend="disk")
    assert FileClient(prefix="http") is FileClient(prefix="http")
    assert FileClient(prefix="http") is not FileClient(backend="http")  # keyed as mmcv
    assert FileClient("http", timeout=5) is not FileClient("http", timeout=6)
    assert FileClient("http", timeout=5).client.timeout == 5


def test_unknown_backend_or_prefix_is_a_value_error():
    with pytest.raises(ValueError, match=r"backend 'nope' is not supported.*'disk'"):
        FileClient("nope")
    with pytest.raises(ValueError, match=r"prefix 'ftp' is not supported.*'s3'"):
        FileClient(prefix="ftp")


@pytest.mark.parametrize(
    ("uri", "prefix"),
    [
        ("a/b.json", None),
        (Path("/x/y"), None),
        ("http://h/a", "http"),
        ("https://h/a", "https"),
        ("s3://bucket/key", "s3"),
        ("cluster:s3://bucket/key", "s3"),
    ],
)
def test_parse_uri_prefix(uri, prefix):
    assert FileClient.parse_uri_prefix(uri) == prefix


def test_parse_uri_prefix_and_infer_client_check_arguments():
    with pytest.raises(AssertionError, match="str or a Path"):
        FileClient.parse_uri_prefix(3)
    with pytest.raises(AssertionError, match="both are None"):
        FileClient.infer_client()


def test_infer_client():
    assert isinstance(FileClient.infer_client(uri="a/b").client, HardDiskBackend)
    assert isinstance(FileClient.infer_client(uri="https://h/x").client, HTTPBackend)
    args = {"backend": "disk"}
    assert FileClient.infer_client(args, "http://ignored") is FileClient("disk")


def test_disk_backend_reads_writes_and_inspects(tmp_path):
    client = FileClient()
    target = tmp_path / "new" / "deeper" / "a.bin"
    client.put(b"\x00\x01", target)  # parents created
    assert client.get(target) == b"\x00\x01"
    text_file = str(tmp_path / "t" / "a.txt")
    client.put_text("héllo", text_file)
    assert client.get_text(text_file) == "héllo"
    assert client.exists(text_file) and client.isfile(text_file) and not client.isdir(text_file)
    assert client.isdir(tmp_path / "t") and not client.isfile(tmp_path / "t")
    assert client.join_path(str(tmp_path), "t", "a.txt") == text_file
    with client.get_local_path(text_file) as local:
        assert local == text_file
    client.remove(text_file)
    assert not client.exists(text_file)
    with pytest.raises(FileNotFoundError):
        client.get(text_file)


def test_put_to_a_bare_file_name_writes_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    FileClient().put_text("x", "bare.txt")
    assert (tmp_path / "bare.txt").read_text() == "x"


@pytest.fixture
def tree(tmp_path):
    for rel in ["a.txt", "b.py", ".hidden", "d1/c.txt", "d1/d2/e.py", ".hdir/f.txt"]:
        path = tmp_path / "root" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel)
    return tmp_path / "root"


def test_list_dir_or_file(tree):
    client = FileClient()
    ls = lambda **kw: list(client.list_dir_or_file(tree, **kw))  # noqa: E731
    assert ls() == [".hdir", "a.txt", "b.py", "d1"]  # name order; hidden files skipped
    assert ls(list_dir=False) == ["a.txt", "b.py"]
    assert ls(list_file=False) == [".hdir", "d1"]
    assert ls(list_file=False, recursive=True) == [".hdir", "d1", os.path.join("d1", "d2")]
    assert ls(list_dir=False, recursive=True) == [
        os.path.join(".hdir", "f.txt"),
        "a.txt",
        "b.py",
        os.path.join("d1", "c.txt"),
        os.path.join("d1", "d2", "e.py"),
    ]
    assert ls(list_dir=False, suffix=".py", recursive=True) == ["b.py", "d1/d2/e.py"]
    assert ls(list_dir=False, suffix=(".txt", ".py")) == ["a.txt", "b.py"]
    with pytest.raises(TypeError, match="should be None when `list_dir` is True"):
        ls(suffix=".py")
    with pytest.raises(TypeError, match="suffix. must be a string or tuple"):
        ls(list_dir=False, suffix=[".py"])


class _MemoryBackend(BaseStorageBackend):
    """A dict-backed backend, to test registration (a test double of a user's backend)."""

    def __init__(self, store=None):
        self.store = store if store is not None else {}

    def get(self, filepath):
        return self.store[str(filepath)]

    def get_text(self, filepath, encoding="utf-8"):
        return self.get(filepath).decode(encoding)


def test_register_backend_directly_and_as_decorator_with_prefixes():
    FileClient.register_backend("memory", _MemoryBackend, prefixes="mem")
    client = FileClient.infer_client(uri="mem://x")
    assert isinstance(client.client, _MemoryBackend)
    client.client.store["mem://x"] = b"hi"
    assert client.get_text("mem://x") == "hi"

    @FileClient.register_backend("memory2", prefixes=["m2", "m3"])
    class Memory2(_MemoryBackend):
        pass

    assert isinstance(FileClient(prefix="m3").client, Memory2)
    assert isinstance(FileClient("memory2").client, Memory2)


def test_register_backend_refuses_duplicates_unless_forced():
    FileClient.register_backend("memory", _MemoryBackend)
    with pytest.raises(KeyError, match="'memory' is already registered"):
        FileClient.register_backend("memory", _MemoryBackend)
    with pytest.raises(KeyError, match="prefix 'http' is already registered"):
        FileClient.register_backend("other", _MemoryBackend, prefixes="http")
    assert "other" not in FileClient._backends  # nothing half-registered
    old = FileClient("memory")

    class Newer(_MemoryBackend):
        pass

    FileClient.register_backend("memory", Newer, force=True)
    assert isinstance(FileClient("memory").client, Newer) and FileClient("memory") is not old
    FileClient.register_backend("web", Newer, force=True, prefixes="http")
    assert isinstance(FileClient(prefix="http").client, Newer)


def test_register_backend_type_errors():
    with pytest.raises(TypeError, match="name must be a str"):
        FileClient.register_backend(1, _MemoryBackend)
    with pytest.raises(TypeError, match="subclass of BaseStorageBackend"):
        FileClient.register_backend("x", object)
    with pytest.raises(TypeError, match="subclass of BaseStorageBackend"):
        FileClient.register_backend("x", _MemoryBackend())


def test_operations_a_backend_lacks_raise_not_implemented():
    FileClient.register_backend("memory", _MemoryBackend)
    client = FileClient("memory")
    with pytest.raises(NotImplementedError, match="_MemoryBackend does not support put"):
        client.put(b"x", "k")
    with pytest.raises(NotImplementedError, match="does not support isdir"):
        client.isdir("k")
    client.client.store["k.json"] = b'{"a": 1}'
    with client.get_local_path("k.json") as local:  # the default: a temporary download
        assert Path(local).read_text() == '{"a": 1}' and local.endswith(".json")
    assert not os.path.exists(local)


def test_s3_prefix_goes_to_petrel():
    assert FileClient._prefix_to_backends["s3"] is PetrelBackend
