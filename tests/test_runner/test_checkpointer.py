"""Checkpointer: one owner of a runner's checkpoint names, writes, rotation and replacements."""

import os
import types

import torch
from torch import nn

from mmpar.apis.train import configured_resume
from mmpar.runner.checkpointing.checkpointer import Checkpointer, checkpointer_of
from mmpar.runner.hooks import CheckpointHook
from mmpar.utils import Config

torch.set_num_threads(1)


def test_every_periodic_save_goes_through_checkpointer_save(make_runner, make_loader, monkeypatch):
    runner = make_runner(max_epochs=3)
    runner.register_hook(CheckpointHook(interval=1, max_keep_ckpts=2))
    saved = []
    real_save = runner.checkpointer.save

    def recording_save(out_dir, filename, **kwargs):
        saved.append(filename)
        return real_save(out_dir, filename, **kwargs)

    monkeypatch.setattr(runner.checkpointer, "save", recording_save)
    runner.run([make_loader(8, 4)], [("train", 1)])
    assert saved == ["epoch_1.pth", "epoch_2.pth", "epoch_3.pth"]
    work = runner.work_dir
    names = sorted(p for p in os.listdir(work) if p.endswith(".pth"))
    assert names == ["epoch_2.pth", "epoch_3.pth", "latest.pth"]  # rotation kept two


def test_names_and_which_rank_writes(make_runner):
    checkpointer = make_runner().checkpointer
    assert checkpointer.numbered_name() == "epoch_1.pth"
    assert checkpointer.numbered_name(by_epoch=False) == "iter_1.pth"
    assert checkpointer.numbered_name("ckpt_{}.pth", by_epoch=False) == "ckpt_1.pth"
    assert Checkpointer.best_name("acc", "epoch", 3) == "best_acc_epoch_3.pth"
    assert Checkpointer.preempted_name(7) == "preempted_iter_7.pth"
    assert checkpointer.writes and not checkpointer.collective
    other_rank = Checkpointer(types.SimpleNamespace(rank=1, model=nn.Linear(1, 1)))
    assert not other_rank.writes


def test_a_replaced_checkpoint_is_deleted_once_the_new_one_is_written(make_runner, tmp_path):
    runner = make_runner()
    checkpointer = runner.checkpointer
    first = checkpointer.save(str(tmp_path), "a.pth", create_symlink=False)
    second = checkpointer.save(str(tmp_path), "b.pth", replaces=first, create_symlink=False)
    assert sorted(p.name for p in tmp_path.glob("*.pth")) == ["b.pth"]
    again = checkpointer.save(str(tmp_path), "b.pth", replaces=second, create_symlink=False)
    assert again == second and (tmp_path / "b.pth").is_file()  # never deletes what it wrote


def test_a_runner_without_a_checkpointer_saves_through_its_save_checkpoint(tmp_path):
    calls = []

    class MmcvStyleRunner:
        rank = 0
        model = nn.Linear(1, 1)

        def save_checkpoint(self, out_dir, filename_tmpl, create_symlink=True):
            calls.append((out_dir, filename_tmpl, create_symlink))

    path = checkpointer_of(MmcvStyleRunner()).save(
        str(tmp_path), "best_{x}.pth", create_symlink=False, every_rank=False
    )
    # Only the arguments that differ from mmcv's defaults; the name escaped from formatting.
    assert calls == [(str(tmp_path), "best_{{x}}.pth", False)]
    assert path == str(tmp_path / "best_{x}.pth")


def test_a_runner_class_with_its_own_save_checkpoint_is_called_by_the_hook(
    make_runner, make_loader, toy_model, tmp_path, test_logger
):
    # mmcv's CheckpointHook calls runner.save_checkpoint: a project's runner that overrides it
    # (extra files, other names) keeps being called, and its super() call still writes.
    from mmpar.runner import EpochBasedRunner

    calls = []

    class ProjectRunner(EpochBasedRunner):
        def save_checkpoint(self, out_dir, filename_tmpl="epoch_{}.pth", **kwargs):
            calls.append(filename_tmpl.format(self.epoch + 1))
            return super().save_checkpoint(out_dir, filename_tmpl, **kwargs)

    optimizer = torch.optim.SGD(toy_model.parameters(), lr=0.01)
    runner = ProjectRunner(
        toy_model, optimizer=optimizer, work_dir=str(tmp_path), logger=test_logger, max_epochs=2
    )
    runner.register_hook(CheckpointHook(interval=1, max_keep_ckpts=1))
    runner.run([make_loader()], [("train", 1)])
    assert calls == ["epoch_1.pth", "epoch_2.pth"]
    # Rotation and latest still follow the hook's saves.
    assert not (tmp_path / "epoch_1.pth").exists() and (tmp_path / "epoch_2.pth").exists()
    assert os.path.realpath(tmp_path / "latest.pth") == str(tmp_path / "epoch_2.pth")


def test_a_save_checkpoint_patched_on_the_runner_is_called(make_runner, make_loader):
    runner = make_runner(max_epochs=1)
    calls = []
    runner.save_checkpoint = lambda out_dir, filename_tmpl, **kw: calls.append(filename_tmpl)
    runner.register_hook(CheckpointHook(interval=1))
    runner.run([make_loader()], [("train", 1)])
    assert calls == ["epoch_1.pth"]


def test_configured_resume_is_the_one_decision():
    assert configured_resume(Config(dict(resume_from="a.pth", auto_resume=True))) == "a.pth"
    assert configured_resume(Config(dict(auto_resume=True))) == "auto"
    assert configured_resume(Config(dict(resume_from=None))) is None


def _weights(path):
    return torch.load(path, map_location="cpu", weights_only=True)["state_dict"]


def test_a_wrapper_registered_after_import_is_unwrapped_on_save_and_resume(
    make_runner, toy_model, tmp_path
):
    from mmpar.parallel import MODULE_WRAPPERS

    class LateWrapper(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

        def train_step(self, *args, **kwargs):
            return self.module.train_step(*args, **kwargs)

    MODULE_WRAPPERS.register_module(module=LateWrapper)
    try:
        runner = make_runner(model=LateWrapper(toy_model))
        path = runner.save_checkpoint(str(tmp_path))
        assert list(_weights(path)) == list(toy_model.state_dict())  # no 'module.' prefix
        fresh_model = type(toy_model)()
        fresh = make_runner(model=LateWrapper(fresh_model), work_dir=str(tmp_path))
        assert fresh.resume("auto") is not None  # strict: the keys fit the bare model
    finally:
        MODULE_WRAPPERS.module_dict.pop("LateWrapper")
    for key, value in toy_model.state_dict().items():
        assert torch.equal(fresh_model.state_dict()[key], value), key


def test_a_replaced_runner_model_is_unwrapped_anew(make_runner, toy_model, tmp_path):
    runner = make_runner()
    first = runner.checkpointer.layout
    assert first.bare is toy_model and runner.checkpointer.layout is first  # kept
    other = type(toy_model)()
    with torch.no_grad():
        for p in other.parameters():
            p.fill_(0.5)
    runner.model = nn.DataParallel(other)
    path = runner.save_checkpoint(str(tmp_path))
    assert runner.checkpointer.layout.bare is other
    saved = _weights(path)
    assert list(saved) == list(other.state_dict())
    assert all(torch.equal(saved[k], v) for k, v in other.state_dict().items())
