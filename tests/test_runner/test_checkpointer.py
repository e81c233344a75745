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


def test_configured_resume_is_the_one_decision():
    assert configured_resume(Config(dict(resume_from="a.pth", auto_resume=True))) == "a.pth"
    assert configured_resume(Config(dict(auto_resume=True))) == "auto"
    assert configured_resume(Config(dict(resume_from=None))) is None
