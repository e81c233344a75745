"""Backends that need packages mmpar does not install: clear ImportErrors; LMDB for real."""

import sys
import types

import pytest

from mmpar.fileio import FileClient
from mmpar.fileio.file_client import CephBackend, LmdbBackend, MemcachedBackend, PetrelBackend


@pytest.mark.parametrize(
    ("backend", "module", "kwargs"),
    [
        ("petrel", "petrel_client", {}),
        ("memcached", "mc", {"server_list_cfg": "s.conf", "client_cfg": "c.conf"}),
        ("ceph", "ceph", {}),
        ("lmdb", "lmdb", {"db_path": "x.lmdb"}),
    ],
)
def test_missing_package_is_an_import_error_saying_what_to_install(
    monkeypatch, backend, module, kwargs
):
    monkeypatch.setitem(sys.modules, module, None)  # "import <module>" now fails
    with pytest.raises(ImportError, match=f"needs the Python package '{module}") as info:
        FileClient(backend, **kwargs)
    assert "install" in str(info.value)
    assert backend not in {key.split(":")[0] for key in FileClient._instances}


def test_lmdb_backend_reads_a_real_database(tmp_path):
    import lmdb  # part of the test extra (pip install -e .[test])

    env = lmdb.open(str(tmp_path / "db"), map_size=1 << 20)
    with env.begin(write=True) as txn:
        txn.put(b"img/0.png", b"\x89PNG")
        txn.put("labels/é.txt".encode(), b"cat\n")
    env.close()

    client = FileClient("lmdb", db_path=tmp_path / "db")
    assert isinstance(client.client, LmdbBackend)
    assert bytes(client.get("img/0.png")) == b"\x89PNG"
    assert client.get_text("labels/é.txt") == "cat\n"
    assert client.get("missing") is None
    with pytest.raises(KeyError, match="no key 'missing'"):
        client.get_text("missing")
    with pytest.raises(NotImplementedError, match="LmdbBackend does not support put"):
        client.put(b"x", "k")


class _StandInPetrelClient:
    """In-memory stand-in for ``petrel_client.client.Client`` (the SDK is not installable)."""

    def __init__(self, conf_path=None, enable_mc=True):
        self.conf = (conf_path, enable_mc)
        self.objects = {}

    def Get(self, key):  # noqa: N802 - the SDK's name
        return self.objects[key]

    def put(self, key, data):
        self.objects[key] = bytes(data)

    def contains(self, key):
        return key in self.objects

    def isdir(self, key):
        prefix = key.rstrip("/") + "/"
        return any(k.startswith(prefix) for k in self.objects)

    def delete(self, key):
        del self.objects[key]

    def list(self, prefix):
        names = {
            k[len(prefix) :].split("/")[0] + ("/" if "/" in k[len(prefix) :] else "")
            for k in self.objects
            if k.startswith(prefix)
        }
        return sorted(names)


@pytest.fixture
def petrel_sdk(monkeypatch):
    package = types.ModuleType("petrel_client")
    client_module = types.ModuleType("petrel_client.client")
    client_module.Client = _StandInPetrelClient
    package.client = client_module
    monkeypatch.setitem(sys.modules, "petrel_client", package)
    monkeypatch.setitem(sys.modules, "petrel_client.client", client_module)


def test_petrel_backend_maps_paths_and_forwards_to_the_sdk(petrel_sdk):
    client = FileClient.infer_client(
        {"backend": "petrel", "path_mapping": {"data/": "s3://bucket/"}, "enable_mc": False}
    )
    assert isinstance(client.client, PetrelBackend)
    assert client.client._client.conf == (None, False)
    client.put_text("héllo", "data/sub\\a.txt")  # mapped, then backslashes made "/"
    assert client.client._client.objects == {"s3://bucket/sub/a.txt": "héllo".encode()}
    assert client.get_text("s3://bucket/sub/a.txt") == "héllo"
    assert bytes(client.get("data/sub/a.txt")) == "héllo".encode()
    assert client.isfile("data/sub/a.txt") and not client.isdir("data/sub/a.txt")
    assert client.isdir("s3://bucket/sub") and client.exists("s3://bucket/sub")
    client.put(b"1", "s3://bucket/sub/deeper/b.py")
    assert list(client.list_dir_or_file("s3://bucket")) == ["sub"]
    assert list(client.list_dir_or_file("s3://bucket", list_dir=False, recursive=True)) == [
        "sub/a.txt",
        "sub/deeper/b.py",
    ]
    assert list(
        client.list_dir_or_file("s3://bucket/", list_dir=False, suffix=".py", recursive=True)
    ) == ["sub/deeper/b.py"]
    assert client.join_path("s3://bucket/", "sub", "a.txt") == "s3://bucket/sub/a.txt"
    with client.get_local_path("s3://bucket/sub/a.txt") as local:
        with open(local, encoding="utf-8") as f:
            assert f.read() == "héllo"
    client.remove("s3://bucket/sub/a.txt")
    assert not client.exists("s3://bucket/sub/a.txt")
    with pytest.raises(AssertionError, match="path_mapping must be a dict"):
        PetrelBackend(path_mapping=["data/"])


def test_backends_keep_mmcv_constructor_signatures():
    import inspect

    assert list(inspect.signature(PetrelBackend).parameters) == [
        "path_mapping",
        "enable_mc",
        "conf_path",
    ]
    assert list(inspect.signature(MemcachedBackend).parameters) == [
        "server_list_cfg",
        "client_cfg",
        "sys_path",
    ]
    assert list(inspect.signature(CephBackend).parameters) == ["path_mapping"]
    assert list(inspect.signature(LmdbBackend).parameters)[:4] == [
        "db_path",
        "readonly",
        "lock",
        "readahead",
    ]
