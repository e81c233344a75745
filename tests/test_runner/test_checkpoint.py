import argparse
import collections
import logging
import os

import numpy as np
import pytest
import torch
import torch.nn as nn

from mmpar.parallel import MMDataParallel
from mmpar.runner import (
    CorruptCheckpointError,
    UnsafeCheckpointError,
    find_latest_checkpoint,
    load_checkpoint,
    save_checkpoint,
)
from mmpar.runner import checkpoint as ckpt_mod


class Net(nn.Module):
    def __init__(self, width=3):
        super().__init__()
        self.conv = nn.Conv2d(1, width, 1)
        self.bn = nn.BatchNorm2d(width)


@pytest.fixture
def logger():
    lg = logging.getLogger("mmpar_test_ckpt")
    lg.propagate = True
    return lg


def test_save_load_roundtrip_unwraps_and_stores_cpu_tensors(tmp_path):
    torch.manual_seed(0)
    model = Net()
    optim = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model.conv.weight.sum().backward()
    optim.step()
    path = tmp_path / "sub" / "a.pth"
    save_checkpoint(
        MMDataParallel(model), str(path), optim, meta={"epoch": 3}, extra_state={"x": 1}
    )
    raw = torch.load(path, weights_only=True)
    assert set(raw) == {"meta", "state_dict", "optimizer", "mmpar_state"}
    assert all(not k.startswith("module.") for k in raw["state_dict"])
    assert all(v.device.type == "cpu" for v in raw["state_dict"].values())
    assert raw["meta"]["epoch"] == 3 and "mmpar_version" in raw["meta"]
    assert raw["mmpar_state"] == {"x": 1}
    assert os.listdir(path.parent) == ["a.pth"]  # no temp file left behind

    fresh = Net(3)
    ckpt = load_checkpoint(fresh, str(path), strict=True)
    for k, v in model.state_dict().items():
        assert torch.equal(fresh.state_dict()[k], v)
    assert ckpt["meta"]["epoch"] == 3


def test_save_with_dict_of_optimizers(tmp_path):
    model = Net()
    opts = {
        "a": torch.optim.SGD(model.conv.parameters(), lr=1),
        "b": torch.optim.Adam(model.bn.parameters()),
    }
    save_checkpoint(model, str(tmp_path / "c.pth"), opts)
    raw = torch.load(tmp_path / "c.pth", weights_only=True)
    assert set(raw["optimizer"]) == {"a", "b"}
    assert raw["optimizer"]["a"]["param_groups"][0]["lr"] == 1
    assert "betas" in raw["optimizer"]["b"]["param_groups"][0]  # each optimizer's own state


def test_failed_save_keeps_previous_file(tmp_path, monkeypatch):
    path = str(tmp_path / "ckpt.pth")
    model = Net()
    save_checkpoint(model, path, meta={"n": 1})

    def broken_save(obj, f, *a, **k):
        f.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(model, path, meta={"n": 2})
    monkeypatch.undo()
    assert torch.load(path, weights_only=True)["meta"]["n"] == 1
    assert os.listdir(tmp_path) == ["ckpt.pth"]


def test_strict_mismatch_lists_keys_and_non_strict_warns(tmp_path, logger, caplog):
    path = str(tmp_path / "w.pth")
    save_checkpoint(Net(3), path)
    other = Net(5)  # every conv/bn tensor has another shape
    other.extra = nn.Linear(1, 1)
    with pytest.raises(
        RuntimeError, match=r"missing keys.*extra\.weight[\s\S]*size mismatch.*conv\.weight"
    ):
        load_checkpoint(other, path, strict=True)
    with caplog.at_level(logging.WARNING, logger="mmpar_test_ckpt"):
        load_checkpoint(other, path, logger=logger)
    assert "size mismatch" in caplog.text and "extra.bias" in caplog.text


class Evil:
    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def test_malicious_pickle_is_refused_without_running_code(tmp_path):
    target = tmp_path / "pwned"
    path = tmp_path / "evil.pth"
    torch.save({"state_dict": {}, "meta": Evil(str(target))}, path)
    with pytest.raises(UnsafeCheckpointError, match=r"evil\.pth[\s\S]*weights_only=False"):
        load_checkpoint(Net(), str(path))
    assert not target.exists()


def test_weights_only_false_loads_trusted_objects_with_a_warning(tmp_path):
    path = tmp_path / "obj.pth"
    model = Net()
    torch.save({"state_dict": model.state_dict(), "meta": {"c": argparse.Namespace(a=1)}}, path)
    with pytest.raises(UnsafeCheckpointError):
        load_checkpoint(Net(), str(path))
    with pytest.warns(UserWarning, match="only do this for checkpoints you trust"):
        ckpt = load_checkpoint(Net(), str(path), weights_only=False)
    assert ckpt["meta"]["c"].a == 1


def test_loads_mmcv_1x_checkpoint_with_module_prefix_and_numpy_meta(tmp_path):
    src = Net()
    mmcv_ckpt = {
        "meta": {
            "mmcv_version": "1.7.1",
            "epoch": 12,
            "iter": 900,
            "hook_msgs": {"best_score": np.float64(0.9)},
        },
        "state_dict": collections.OrderedDict(
            ("module." + k, v) for k, v in src.state_dict().items()
        ),
        "optimizer": torch.optim.SGD(src.parameters(), lr=0.1).state_dict(),
    }
    path = tmp_path / "mmcv.pth"
    torch.save(mmcv_ckpt, path)
    dst = Net()
    ckpt = load_checkpoint(dst, str(path), strict=True)
    assert torch.equal(dst.conv.weight, src.conv.weight)
    assert ckpt["meta"]["mmcv_version"] == "1.7.1"


def test_top_level_state_dict(tmp_path):
    src = Net()
    src.bn.running_var.fill_(3.0)  # a fresh Net holds ones: loading must bring the 3s
    torch.save(src.state_dict(), tmp_path / "plain.pth")
    dst = Net()
    load_checkpoint(dst, str(tmp_path / "plain.pth"), strict=True)
    for key, value in src.state_dict().items():
        assert torch.equal(dst.state_dict()[key], value), key


def test_missing_truncated_and_random_files(tmp_path):
    missing = tmp_path / "nope.pth"
    with pytest.raises(FileNotFoundError, match="nope.pth"):
        load_checkpoint(Net(), str(missing))
    good = tmp_path / "good.pth"
    save_checkpoint(Net(), str(good))
    data = good.read_bytes()
    (tmp_path / "trunc.pth").write_bytes(data[: len(data) // 2])
    (tmp_path / "rand.pth").write_bytes(np.random.default_rng(0).bytes(500))
    (tmp_path / "empty.pth").write_bytes(b"")
    for name in ("trunc.pth", "rand.pth", "empty.pth"):
        with pytest.raises(
            CorruptCheckpointError, match=rf"{name}.*not a valid checkpoint, truncated or corrupt"
        ):
            load_checkpoint(Net(), str(tmp_path / name))


def test_torchvision_scheme_maps_to_weights_url_without_network(monkeypatch):
    urls = []

    def fake_download(url, **kwargs):
        urls.append((url, kwargs))
        return {}

    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", fake_download)
    load_checkpoint(Net(), "torchvision://resnet18")
    assert urls[0][0].startswith("https://download.pytorch.org/models/resnet18")
    assert urls[0][1]["map_location"] == "cpu"
    with pytest.raises(ValueError, match='no model named "notamodel"'):
        load_checkpoint(Net(), "torchvision://notamodel")
    # s3:// is a registered scheme (as in mmcv); without its client package it says which.
    with pytest.raises(ImportError, match="petrel_client"):
        load_checkpoint(Net(), "s3://bucket/x.pth")


def _save_at(path, it):
    save_checkpoint(Net(), str(path), extra_state={"iter": it})


def test_find_latest_checkpoint_ranks_by_iter_and_skips_corrupt(tmp_path, logger, caplog):
    assert find_latest_checkpoint(str(tmp_path)) is None
    _save_at(tmp_path / "iter_20.pth", 20)
    _save_at(tmp_path / "iter_10.pth", 10)  # newer mtime, older iter
    data = (tmp_path / "iter_20.pth").read_bytes()
    (tmp_path / "iter_30.pth").write_bytes(data[:100])  # crashed during a save
    (tmp_path / "notes.txt").write_text("x")
    with caplog.at_level(logging.WARNING, logger="mmpar_test_ckpt"):
        found = find_latest_checkpoint(str(tmp_path), logger=logger)
    assert found == str(tmp_path / "iter_20.pth")
    assert "iter_30.pth" in caplog.text


def test_latest_link_is_relative_and_replaced(tmp_path):
    (tmp_path / "a.pth").write_bytes(b"a")
    (tmp_path / "b.pth").write_bytes(b"b")
    ckpt_mod.update_latest_link(str(tmp_path), "a.pth")
    ckpt_mod.update_latest_link(str(tmp_path), "b.pth")
    latest = tmp_path / "latest.pth"
    assert latest.read_bytes() == b"b"
    # Symlinks work here (the copy fallback is tested below): the link names the file relatively.
    assert latest.is_symlink() and os.readlink(latest) == "b.pth"
    assert sorted(os.listdir(tmp_path)) == ["a.pth", "b.pth", "latest.pth"]


@pytest.mark.parametrize("links", [True, False], ids=["symlink", "copy"])
def test_latest_link_removes_temporaries_of_killed_processes(tmp_path, monkeypatch, links):
    """A process killed between making the temporary link and renaming it left it behind."""
    (tmp_path / "a.pth").write_bytes(b"a")
    (tmp_path / "b.pth").write_bytes(b"b")
    os.symlink("a.pth", tmp_path / ".latest.pth.tmp.999999")  # a killed symlinking process
    (tmp_path / ".latest.pth.tmp.999998").write_bytes(b"a")  # a killed copying process
    # Our own pid's temporary, left by a killed process that had it: a symlink to a.pth,
    # which the copy fallback must not write through.
    os.symlink("a.pth", tmp_path / f".latest.pth.tmp.{os.getpid()}")
    (tmp_path / ".latest.pth.tmp.notes").write_bytes(b"not ours")
    if not links:

        def no_symlinks(*args):
            raise OSError("symlinks not supported")

        monkeypatch.setattr(os, "symlink", no_symlinks)
    ckpt_mod.update_latest_link(str(tmp_path), "b.pth")
    latest = tmp_path / "latest.pth"
    assert latest.is_symlink() == links
    if links:
        assert os.readlink(latest) == "b.pth"
    assert latest.read_bytes() == b"b" and (tmp_path / "a.pth").read_bytes() == b"a"
    assert sorted(os.listdir(tmp_path)) == [".latest.pth.tmp.notes", "a.pth", "b.pth", "latest.pth"]


def test_latest_link_falls_back_to_copy(tmp_path, monkeypatch):
    (tmp_path / "a.pth").write_bytes(b"a")

    def no_symlinks(*args):
        raise OSError("symlinks not supported")

    monkeypatch.setattr(os, "symlink", no_symlinks)
    ckpt_mod.update_latest_link(str(tmp_path), "a.pth")
    latest = tmp_path / "latest.pth"
    assert not latest.is_symlink() and latest.read_bytes() == b"a"
