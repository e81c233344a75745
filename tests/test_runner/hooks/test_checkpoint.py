"""CheckpointHook: epoch and iteration schedules, save_last, out_dir, rotation."""

import os

import pytest
import torch

from mmpar.runner import CheckpointHook


def test_checkpoint_hook_by_epoch_and_save_last(make_runner, make_loader, tmp_path):
    runner = make_runner(max_epochs=5, meta={})
    runner.register_hook(CheckpointHook(interval=2))
    runner.run([make_loader(8, 4)], [("train", 1)])
    work = tmp_path / "work"
    assert sorted(p.name for p in work.glob("*.pth")) == [
        "epoch_2.pth",
        "epoch_4.pth",
        "epoch_5.pth",
        "latest.pth",
    ]
    assert os.path.realpath(work / "latest.pth") == str(work / "epoch_5.pth")
    ckpt = torch.load(work / "epoch_4.pth", weights_only=True)
    assert ckpt["meta"]["epoch"] == 4 and ckpt["meta"]["iter"] == 8
    assert ckpt["mmpar_state"]["inner_iter"] == 0 and ckpt["mmpar_state"]["epoch"] == 4
    assert runner.meta["hook_msgs"]["last_ckpt"] == str(work / "epoch_5.pth")


def test_checkpoint_hook_by_iter_in_epoch_runner_and_out_dir(make_runner, make_loader, tmp_path):
    runner = make_runner(max_epochs=2)
    runner.register_hook(CheckpointHook(interval=3, by_epoch=False, out_dir=str(tmp_path / "out")))
    runner.run([make_loader(8, 4)], [("train", 1)])  # 4 iterations
    out = tmp_path / "out" / "work"
    assert sorted(p.name for p in out.glob("iter_*.pth")) == ["iter_3.pth", "iter_4.pth"]
    state = torch.load(out / "iter_3.pth", weights_only=True)["mmpar_state"]
    assert (state["epoch"], state["iter"], state["inner_iter"]) == (
        1,
        3,
        1,
    )  # next: batch 1 of epoch 1


def test_rotation_deletes_only_own_files_and_never_the_best(make_runner, make_loader, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "pretrained.pth").write_bytes(b"x")
    runner = make_runner(max_epochs=6, meta={"hook_msgs": {"best_ckpt": str(work / "epoch_1.pth")}})
    hook = CheckpointHook(interval=1, max_keep_ckpts=2)
    runner.register_hook(hook)
    runner.run([make_loader(4, 4)], [("train", 1)])
    names = sorted(p.name for p in work.glob("*.pth"))
    assert names == ["epoch_1.pth", "epoch_5.pth", "epoch_6.pth", "latest.pth", "pretrained.pth"]
    assert hook.state_dict() == {"written": ["epoch_5.pth", "epoch_6.pth"]}
    with pytest.raises(TypeError, match="unknown arguments"):
        CheckpointHook(intervall=1)
