"""Checkpoint URL schemes (mmcv's CheckpointLoader), revise_keys and map_location.

Downloads are served by a real HTTP server on localhost; the model-zoo tables are pointed at it
(the ``$MMCV_HOME/open_mmlab.json`` override, or the table function replaced in the test).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import threading
from collections import OrderedDict

import pytest
import torch
import torch.nn as nn

from mmpar.runner import (
    CheckpointLoader,
    CorruptCheckpointError,
    UnsafeCheckpointError,
    _load_checkpoint,
    _load_checkpoint_with_prefix,
    load_checkpoint,
    save_checkpoint,
)
from mmpar.runner import checkpoint as ckpt_mod
from mmpar.runner.checkpointing import sources as loader_mod


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 1)
        self.bn = nn.BatchNorm2d(2)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def served(tmp_path, monkeypatch):
    """``(directory, base_url)``: files written to ``directory`` are served at ``base_url``."""
    root = tmp_path / "www"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    # downloads are cached under $TORCH_HOME/hub/checkpoints: keep them in the test's directory
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def schemes(monkeypatch):
    """Let a test register schemes without leaking them into other tests."""
    monkeypatch.setattr(CheckpointLoader, "_schemes", OrderedDict(CheckpointLoader._schemes))
    return CheckpointLoader


@pytest.fixture
def mmcv_home(tmp_path, monkeypatch):
    home = tmp_path / "mmcv_home"
    monkeypatch.setenv("MMCV_HOME", str(home))
    return home


def _state(**keys):
    return OrderedDict((k, torch.full((2,), float(v))) for k, v in keys.items())


# ----------------------------------------------------------------------------- registry
def test_register_scheme_plain_decorator_force_and_longest_prefix(schemes, tmp_path):
    calls = []

    @schemes.register_scheme("mytest://")
    def load_from_mytest(filename, map_location=None):
        calls.append(("short", filename, map_location))
        return {"which": "short"}

    def load_from_special(filename, map_location=None):
        calls.append(("long", filename, map_location))
        return {"which": "long"}

    schemes.register_scheme(["mytest://special/"], load_from_special)
    assert _load_checkpoint("mytest://a.pth", "cpu") == {"which": "short"}
    assert _load_checkpoint("mytest://special/b.pth") == {"which": "long"}
    assert calls == [("short", "mytest://a.pth", "cpu"), ("long", "mytest://special/b.pth", "cpu")]
    with pytest.raises(KeyError, match="already registered.*force=True"):
        schemes.register_scheme("mytest://", load_from_special)
    schemes.register_scheme("mytest://", load_from_special, force=True)
    assert _load_checkpoint("mytest://a.pth") == {"which": "long"}
    # a path without a registered prefix is a local file
    with pytest.raises(FileNotFoundError, match="nowhere.pth"):
        CheckpointLoader.load_checkpoint(str(tmp_path / "nowhere.pth"))


def test_builtin_schemes_are_registered():
    get = CheckpointLoader._get_checkpoint_loader
    assert get("/a/b.pth") is loader_mod.load_from_local
    assert get("https://x/y.pth") is loader_mod.load_from_http
    assert get("torchvision://resnet50") is loader_mod.load_from_torchvision
    assert get("modelzoo://resnet50") is loader_mod.load_from_torchvision
    assert get("open-mmlab://x") is get("openmmlab://x") is loader_mod.load_from_openmmlab
    assert get("mmcls://resnet50") is loader_mod.load_from_mmcls
    assert get("pavi://x") is loader_mod.load_from_pavi
    assert get("s3://b/x") is get("bucket1:s3://b/x") is loader_mod.load_from_ceph
    for name in ("load_from_local", "load_from_http", "ENV_MMCV_HOME", "DEFAULT_CACHE_DIR"):
        assert getattr(ckpt_mod, name) is getattr(loader_mod, name)


# ------------------------------------------------------------------------------ local
def test_local_missing_file_and_user_expansion(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError):
        loader_mod.load_from_local(str(tmp_path / "missing.pth"))
    with pytest.raises(OSError):  # mmcv's IOError is OSError
        load_checkpoint(Net(), str(tmp_path / "missing.pth"))
    monkeypatch.setenv("HOME", str(tmp_path))
    torch.save({"state_dict": _state(w=1)}, tmp_path / "home.pth")
    assert loader_mod.load_from_local("~/home.pth")["state_dict"]["w"].tolist() == [1.0, 1.0]


class _Payload:
    pass


def test_every_scheme_keeps_safe_loading(tmp_path, served, schemes):
    root, url = served
    torch.save({"state_dict": {}, "obj": _Payload()}, root / "evil.pth")
    torch.save({"state_dict": {}, "obj": _Payload()}, tmp_path / "evil.pth")
    with pytest.raises(UnsafeCheckpointError, match="_Payload"):
        _load_checkpoint(str(tmp_path / "evil.pth"))
    with pytest.raises(UnsafeCheckpointError, match="_Payload"):
        _load_checkpoint(f"{url}/evil.pth")
    with pytest.warns(UserWarning, match="can run code"):
        trusted = _load_checkpoint(f"{url}/evil.pth", weights_only=False)
    assert isinstance(trusted["obj"], _Payload)
    (root / "junk.pth").write_bytes(b"not a checkpoint")
    with pytest.raises(CorruptCheckpointError, match="junk.pth"):
        _load_checkpoint(f"{url}/junk.pth")


# ------------------------------------------------------------------------------- http
def test_http_downloads_once_into_model_dir(served, tmp_path):
    root, url = served
    model = Net()
    save_checkpoint(model, str(root / "net.pth"), meta={"epoch": 3})
    cache = tmp_path / "cache"
    ckpt = loader_mod.load_from_http(f"{url}/net.pth", map_location="cpu", model_dir=str(cache))
    assert ckpt["meta"]["epoch"] == 3 and (cache / "net.pth").is_file()
    (root / "net.pth").unlink()  # served no more: the cached copy is read
    again = loader_mod.load_from_http(f"{url}/net.pth", model_dir=str(cache))
    assert torch.equal(again["state_dict"]["conv.weight"], model.conv.weight.detach())
    fresh = Net()
    save_checkpoint(model, str(root / "net2.pth"))
    load_checkpoint(fresh, f"{url}/net2.pth", strict=True)  # default cache: $TORCH_HOME
    assert torch.equal(fresh.conv.weight, model.conv.weight)
    assert (tmp_path / "torch_home" / "hub" / "checkpoints" / "net2.pth").is_file()


# ------------------------------------------------------------------------ torchvision
def test_torchvision_table_has_mmcv_names_and_every_weight_enum():
    from torchvision.models import ResNet50_Weights

    urls = ckpt_mod.get_torchvision_models()
    # plain names: mmcv 1.x's ImageNet weights (torchvision's original, V1, files)
    assert urls["resnet50"] == "https://download.pytorch.org/models/resnet50-0676ba61.pth"
    assert urls["resnet50"] == ResNet50_Weights.IMAGENET1K_V1.url

    assert urls["resnet50.default"] == ResNet50_Weights.DEFAULT.url
    assert urls["resnet50.imagenet1k_v2"] == ResNet50_Weights.IMAGENET1K_V2.url


def test_torchvision_scheme_downloads_the_table_url(served, monkeypatch):
    root, url = served
    torch.save(_state(w=5), root / "tv.pth")
    monkeypatch.setattr(loader_mod, "get_torchvision_models", lambda: {"mynet": f"{url}/tv.pth"})
    assert _load_checkpoint("torchvision://MyNet_Weights")["w"].tolist() == [5.0, 5.0]
    with pytest.warns(DeprecationWarning, match="modelzoo"):
        _load_checkpoint("modelzoo://mynet")
    with pytest.raises(KeyError, match='no model named "mynt".*mynet'):
        _load_checkpoint("torchvision://mynt")
    with pytest.raises(ValueError):  # also a ValueError, as mmpar raised before
        _load_checkpoint("torchvision://mynt")


# ------------------------------------------------------------------------ open-mmlab
def test_openmmlab_override_file_local_paths_and_deprecated_names(mmcv_home, served):
    root, url = served
    mmcv_home.mkdir()
    (mmcv_home / "weights").mkdir()
    torch.save(_state(a=1), mmcv_home / "weights" / "local.pth")
    torch.save(_state(b=2), root / "remote.pth")
    shipped = loader_mod.get_external_models()
    (mmcv_home / "open_mmlab.json").write_text(
        json.dumps(
            {
                "my_local": "weights/local.pth",
                "my_remote": f"{url}/remote.pth",
                "my_missing": "weights/none.pth",
                # replaces a shipped entry: what the deprecated resnet50_caffe resolves to
                "detectron/resnet50_caffe": "weights/local.pth",
            }
        )
    )
    table = ckpt_mod.get_external_models()
    assert table["vgg16_caffe"] == shipped["vgg16_caffe"]  # shipped names stay
    assert table["my_local"] == "weights/local.pth"
    assert _load_checkpoint("open-mmlab://my_local")["a"].tolist() == [1.0, 1.0]
    assert _load_checkpoint("openmmlab://my_remote")["b"].tolist() == [2.0, 2.0]
    with pytest.warns(DeprecationWarning, match="resnet50_caffe is deprecated"):
        assert "a" in _load_checkpoint("open-mmlab://resnet50_caffe")
    with pytest.raises(FileNotFoundError, match="none.pth"):
        _load_checkpoint("open-mmlab://my_missing")
    with pytest.raises(KeyError, match="my_locl.*Did you mean: my_local"):
        _load_checkpoint("open-mmlab://my_locl")
    (mmcv_home / "open_mmlab.json").write_text("[1, 2]")
    with pytest.raises(TypeError, match="open_mmlab.json"):
        ckpt_mod.get_external_models()
    with pytest.raises(AssertionError):  # mmcv asserted the type
        ckpt_mod.get_external_models()


def test_model_zoo_tables_ship_and_mmcv_home_default(monkeypatch, tmp_path):
    assert ckpt_mod.get_deprecated_model_names()["resnet50_caffe"] == "detectron/resnet50_caffe"
    assert ckpt_mod.get_mmcls_models()["resnet50"].startswith("https://download.openmmlab.com/")
    monkeypatch.delenv("MMCV_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert loader_mod._get_mmcv_home() == str(tmp_path / "xdg" / "mmcv")
    assert (tmp_path / "xdg" / "mmcv").is_dir()
    assert (ckpt_mod.ENV_MMCV_HOME, ckpt_mod.ENV_XDG_CACHE_HOME) == ("MMCV_HOME", "XDG_CACHE_HOME")
    assert ckpt_mod.DEFAULT_CACHE_DIR == "~/.cache"


def test_model_zoo_json_is_package_data():
    import tomllib

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(repo, "pyproject.toml"), "rb") as f:
        package_data = tomllib.load(f)["tool"]["setuptools"]["package-data"]["mmpar"]
    assert "runner/model_zoo/*.json" in package_data


# ----------------------------------------------------------------------------- mmcls
def test_mmcls_scheme_keeps_the_backbone_without_its_prefix(served, monkeypatch):
    root, url = served
    torch.save({"state_dict": _state(**{"backbone.w": 1, "head.fc": 2})}, root / "cls.pth")
    monkeypatch.setattr(loader_mod, "get_mmcls_models", lambda: {"net": f"{url}/cls.pth"})
    ckpt = _load_checkpoint("mmcls://net")
    assert list(ckpt) == ["state_dict"] and list(ckpt["state_dict"]) == ["w"]


# ---------------------------------------------------------------- schemes without clients
def test_pavi_and_s3_name_the_package_they_need():
    with pytest.raises(ImportError, match="pavi"):
        _load_checkpoint("pavi://project/model.pth")
    for path in ("s3://bucket/x.pth", "bucket1:s3://bucket/x.pth"):
        with pytest.raises(ImportError, match="petrel_client"):
            _load_checkpoint(path)
    with pytest.raises(ValueError, match="backend must be"):
        loader_mod.load_from_ceph("s3://bucket/x.pth", backend="disk")


# ---------------------------------------------------------------------------- prefix
def test_load_checkpoint_with_prefix(tmp_path):
    path = str(tmp_path / "p.pth")
    torch.save({"state_dict": _state(**{"backbone.a": 1, "backbone.b.c": 2, "head.d": 3})}, path)
    part = _load_checkpoint_with_prefix("backbone", path)
    assert sorted(part) == ["a", "b.c"]
    assert sorted(_load_checkpoint_with_prefix("backbone.b.", path)) == ["c"]
    for error in (KeyError, AssertionError):
        with pytest.raises(error, match="no weights under \"neck.\".*'backbone', 'head'"):
            _load_checkpoint_with_prefix("neck", path)


# ------------------------------------------------------------------- revise_keys / load
def test_revise_keys_default_strips_module_and_custom_rules_apply_in_order(tmp_path):
    src = Net()
    wrapped = OrderedDict((f"module.{k}", v) for k, v in src.state_dict().items())
    path = str(tmp_path / "wrapped.pth")
    torch.save({"state_dict": wrapped}, path)
    dst = Net()
    load_checkpoint(dst, path, strict=True)
    assert torch.equal(dst.conv.weight, src.conv.weight)
    # renamed keys: each (pattern, replacement) sees the result of the previous one
    renamed = OrderedDict((f"enc.{k}", v) for k, v in src.state_dict().items())
    torch.save({"state_dict": renamed}, path)
    dst = Net()
    rules = [(r"^enc\.", "tmp."), (r"^tmp\.", "")]
    load_checkpoint(dst, path, strict=True, revise_keys=rules)
    assert torch.equal(dst.bn.running_var, src.bn.running_var)
    with pytest.raises(RuntimeError, match="missing keys"):  # no rule: nothing matches
        load_checkpoint(Net(), path, strict=True, revise_keys=[])


def test_map_location_forms(tmp_path):
    src = Net()
    path = str(tmp_path / "m.pth")
    save_checkpoint(src, path)
    seen = []

    def to_cpu(storage, location):
        seen.append(location)
        return storage

    for where in ("cpu", torch.device("cpu"), {"cpu": "cpu"}, to_cpu, None):
        ckpt = load_checkpoint(Net(), path, map_location=where, strict=True)
        assert ckpt["state_dict"]["conv.weight"].device.type == "cpu"
    assert seen and set(seen) == {"cpu"}


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_map_location_cuda(tmp_path):
    path = str(tmp_path / "m.pth")
    save_checkpoint(Net(), path)
    ckpt = load_checkpoint(Net(), path, map_location="cuda:0")
    assert ckpt["state_dict"]["conv.weight"].device == torch.device("cuda", 0)


# ----------------------------------------------------------- mmcv's state-dict helpers
def test_get_state_dict_destination_prefix_keep_vars_and_weights_to_cpu():
    net = Net()
    dest = OrderedDict(existing=torch.zeros(1))
    out = ckpt_mod.get_state_dict(net, dest, prefix="model.")
    assert out is dest and "existing" in out and "model.conv.weight" in out
    kept = ckpt_mod.get_state_dict(net, keep_vars=True)
    assert kept["conv.weight"] is net.conv.weight and kept["conv.weight"].requires_grad
    plain = ckpt_mod.get_state_dict(net)
    assert not plain["conv.weight"].requires_grad and hasattr(plain, "_metadata")
    cpu = ckpt_mod.weights_to_cpu(plain)
    assert cpu._metadata == plain._metadata


def test_save_checkpoint_accepts_mmcv_file_client_args(tmp_path):
    path = str(tmp_path / "s.pth")
    save_checkpoint(Net(), path, None, None, dict(backend="disk"))
    assert os.path.isfile(path)
    with pytest.raises(NotImplementedError, match="local files only"):
        save_checkpoint(Net(), "s3://bucket/s.pth", file_client_args=dict(backend="petrel"))
