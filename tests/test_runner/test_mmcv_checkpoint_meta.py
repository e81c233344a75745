"""Checkpoint meta, load_from_pavi and the deprecated DDP wrapper, used as mmcv 1.7.2 code does."""

import logging
import sys
import types
from unittest.mock import MagicMock, patch

import pytest
import torch
import torch.nn as nn

from mmpar.parallel import is_module_wrapper
from mmpar.runner import EpochBasedRunner, load_checkpoint, save_checkpoint
from mmpar.runner.checkpoint import _load_checkpoint
from mmpar.runner.checkpointing.sources import load_from_pavi
from mmpar.version import mmcv_version


class Classifier(nn.Module):
    CLASSES = ("cat", "dog")

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)

    def train_step(self, data, optimizer, **kwargs):
        return {"loss": self.fc(data).sum(), "log_vars": {}, "num_samples": len(data)}


def test_save_checkpoint_meta_has_mmcvs_keys_and_load_returns_the_checkpoint(tmp_path):
    model = Classifier()
    path = str(tmp_path / "a.pth")
    meta = dict(epoch=3, env_info="x")
    save_checkpoint(model, path, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), meta=meta)
    target = Classifier()
    checkpoint = load_checkpoint(target, path)  # mmcv returns the whole checkpoint dict
    assert set(checkpoint) == {"meta", "state_dict", "optimizer"}
    got = checkpoint["meta"]
    assert got["epoch"] == 3 and got["env_info"] == "x"
    assert got["CLASSES"] == ("cat", "dog")  # what mmdet's init_detector reads
    assert got["mmcv_version"] == mmcv_version and isinstance(got["time"], str)
    assert torch.equal(target.fc.weight, model.fc.weight)
    # A model whose CLASSES is None (or absent) adds no CLASSES key.
    Classifier.CLASSES, saved = None, Classifier.CLASSES
    try:
        save_checkpoint(Classifier(), path)
    finally:
        Classifier.CLASSES = saved
    assert "CLASSES" not in load_checkpoint(Classifier(), path)["meta"]


def test_save_checkpoint_meta_must_be_a_dict(tmp_path):
    with pytest.raises(TypeError):
        save_checkpoint(Classifier(), str(tmp_path / "a.pth"), meta=[1])


def test_runner_checkpoint_meta_as_mmcv(tmp_path):
    model = Classifier()
    runner = EpochBasedRunner(
        model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        work_dir=str(tmp_path),
        logger=logging.getLogger("mmcv26"),
        meta=dict(exp_name="e", seed=1),
        max_epochs=1,
    )
    runner.register_checkpoint_hook(dict(interval=1))
    runner.run([torch.utils.data.DataLoader(torch.ones(2, 2), batch_size=1)], [("train", 1)])
    meta = load_checkpoint(Classifier(), str(tmp_path / "epoch_1.pth"))["meta"]
    # mmcv: epoch = runner.epoch + 1 and iter = runner.iter when the hook saves after epoch 1.
    assert (meta["epoch"], meta["iter"]) == (1, 2)
    assert (meta["exp_name"], meta["seed"], meta["CLASSES"]) == ("e", 1, ("cat", "dog"))
    assert runner.load_checkpoint(str(tmp_path / "epoch_1.pth"))["meta"]["epoch"] == 1
    with pytest.raises(TypeError):
        runner.save_checkpoint(str(tmp_path), meta=[1])


@pytest.fixture
def fake_pavi(monkeypatch, tmp_path):
    """A ``pavi`` package whose model cloud serves one checkpoint file."""
    source = tmp_path / "cloud.pth"
    torch.save({"meta": {"epoch": 1}, "state_dict": Classifier().state_dict()}, source)
    asked = []

    class Model:
        name = "latest.pth"

        def download(self, path):
            with open(source, "rb") as src, open(path, "wb") as dst:
                dst.write(src.read())

    modelcloud = types.SimpleNamespace(get=lambda path: asked.append(path) or Model())
    pavi = types.ModuleType("pavi")
    pavi.modelcloud = modelcloud
    monkeypatch.setitem(sys.modules, "pavi", pavi)
    return asked


def test_load_from_pavi_as_mmcv(fake_pavi):
    checkpoint = load_from_pavi("pavi://proj/run/latest.pth")
    assert fake_pavi == ["proj/run/latest.pth"]
    assert checkpoint["meta"] == {"epoch": 1} and "fc.weight" in checkpoint["state_dict"]
    # Through the scheme table, as load_checkpoint('pavi://...') goes.
    assert _load_checkpoint("pavi://proj/run/latest.pth")["meta"] == {"epoch": 1}
    with pytest.raises(AssertionError):  # mmcv asserts the prefix
        load_from_pavi("proj/run/latest.pth")


def test_load_from_pavi_without_pavi_is_an_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pavi", None)
    with pytest.raises(ImportError):
        load_from_pavi("pavi://proj/latest.pth")


def _mock(*args, **kwargs):
    pass


@patch("torch.distributed._broadcast_coalesced", _mock, create=True)
@patch("torch.distributed.broadcast")
@patch("torch.nn.parallel.DistributedDataParallel._ddp_init_helper", _mock)
def test_deprecated_mmddp_without_a_process_group_as_mmcv_tests_build_it(broadcast):
    from mmpar.parallel.distributed_deprecated import MMDistributedDataParallel as Deprecated

    model = Classifier()
    with pytest.warns(DeprecationWarning):
        wrapper = Deprecated(model)
    assert is_module_wrapper(wrapper) and wrapper.module is model
    # mmcv's constructor broadcast rank 0's states: every parameter went through broadcast.
    sent = [call.args[0] for call in broadcast.call_args_list]
    assert any(t is model.fc.weight.data or torch.equal(t, model.fc.weight) for t in sent)
    data = torch.ones(3, 2)
    out = wrapper.train_step(data, None)
    assert torch.allclose(out["loss"], model.fc(data).sum())
    assert torch.allclose(wrapper(data), model.fc(data))
    assert list(wrapper.state_dict()) == ["module.fc.weight", "module.fc.bias"]


def test_deprecated_mmddp_without_a_group_or_mock_fails_like_mmcv():
    from mmpar.parallel.distributed_deprecated import MMDistributedDataParallel as Deprecated

    with pytest.warns(DeprecationWarning), pytest.raises((ValueError, RuntimeError)):
        Deprecated(Classifier())


def test_new_mmddp_with_a_mock_process_group_is_a_module_wrapper():
    from mmpar.parallel import MMDistributedDataParallel

    with (
        patch("torch.distributed._broadcast_coalesced", _mock, create=True),
        patch("torch.distributed.broadcast", _mock),
        patch("torch.nn.parallel.DistributedDataParallel._ddp_init_helper", _mock),
        patch("torch.distributed._verify_params_across_processes", _mock, create=True),
    ):
        assert is_module_wrapper(MMDistributedDataParallel(Classifier(), process_group=MagicMock()))
