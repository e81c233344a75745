"""Full checkpoints of FSDP-sharded models, in one process (a gloo world of 1).

The world of 1 still shards with ``fully_shard`` (parameters are ``DTensor``s, the gather and
scatter go through torch's state-dict APIs), so the layout and loading paths are the real
ones; the 2-process runs (kill and resume) are in tests/reliability/test_fsdp_checkpoints.py.
"""

import logging
import types

import pytest
import torch

from mmpar.parallel import MMDataParallel, MMFullyShardedDataParallel
from mmpar.runner import EpochBasedRunner, load_checkpoint, save_checkpoint
from mmpar.runner.checkpointing.atomic_file import remove_checkpoint
from mmpar.runner.checkpointing.checkpointer import Checkpointer
from mmpar.runner.checkpointing.fsdp_state import (
    optimizer_state_by_ids,
    optimizer_state_by_names,
)
from mmpar.runner.checkpointing.model_state import CheckpointMismatchError
from mmpar.runner.hooks import EMAHook

from ._fsdp_models import Mlp, _assert_same_state, _optimizer, _steps, _trained_pair


def test_full_checkpoint_has_the_plain_models_layout(gloo_group, tmp_path):
    plain, plain_opt, sharded, sharded_opt = _trained_pair()
    assert Checkpointer(types.SimpleNamespace(model=sharded)).collective
    assert not Checkpointer(types.SimpleNamespace(model=plain)).collective
    save_checkpoint(plain, str(tmp_path / "plain.pth"), plain_opt)
    save_checkpoint(sharded, str(tmp_path / "sharded.pth"), sharded_opt)
    want = torch.load(tmp_path / "plain.pth", weights_only=True)
    got = torch.load(tmp_path / "sharded.pth", weights_only=True)
    assert list(got["state_dict"]) == list(want["state_dict"])  # no prefix, same order
    _assert_same_state(want["state_dict"], got["state_dict"])
    # torch's numbered layout, numbered in the order of the param groups (head first).
    assert [g["params"] for g in got["optimizer"]["param_groups"]] == [[0, 1], [2, 3, 4, 5]]
    _assert_same_state(want["optimizer"], got["optimizer"])


def test_checkpoints_move_between_sharded_and_plain_models(gloo_group, tmp_path):
    plain, plain_opt, sharded, sharded_opt = _trained_pair()
    for group in plain_opt.param_groups + sharded_opt.param_groups:
        group["initial_lr"] = group["lr"]  # what LR hooks add once the run starts
    save_checkpoint(plain, str(tmp_path / "plain.pth"), plain_opt)
    save_checkpoint(sharded, str(tmp_path / "sharded.pth"), sharded_opt)

    # A plain (DDP / one-process) checkpoint resumes a sharded model, and vice versa.
    fresh_sharded = MMFullyShardedDataParallel(Mlp(), wrap_modules=["Block"])
    fresh_plain = Mlp()
    with torch.no_grad():
        for p in list(fresh_plain.parameters()) + list(fresh_sharded.parameters()):
            p.zero_()
    runners = {}
    for name, model, source in (
        ("sharded", fresh_sharded, "plain.pth"),
        ("plain", MMDataParallel(fresh_plain, device_ids=[-1]), "sharded.pth"),
    ):
        runner = EpochBasedRunner(
            model, optimizer=_optimizer(model), work_dir=str(tmp_path / name), max_epochs=1
        )
        runner.resume(str(tmp_path / source))
        runners[name] = runner
    assert [g["initial_lr"] for g in runners["sharded"].optimizer.param_groups] == [0.05, 0.1]
    _steps(runners["sharded"].model, runners["sharded"].optimizer, start=2)
    _steps(runners["plain"].model, runners["plain"].optimizer, start=2)
    _steps(plain, plain_opt, start=2)  # the uninterrupted run
    shards = dict(fresh_sharded.module.named_parameters())
    for name, value in plain.named_parameters():
        torch.testing.assert_close(shards[name].full_tensor(), value, msg=name)
        torch.testing.assert_close(dict(fresh_plain.named_parameters())[name], value, msg=name)


def test_loading_into_a_sharded_model_reports_mismatches(gloo_group, tmp_path, caplog):
    plain = Mlp()
    state = plain.state_dict()
    state["extra.weight"] = torch.zeros(1)
    del state["head.bias"]
    path = str(tmp_path / "odd.pth")
    torch.save({"state_dict": state}, path)
    sharded = MMFullyShardedDataParallel(Mlp(), wrap_modules=["Block"])
    with pytest.raises(CheckpointMismatchError, match="extra.weight.*\n.*head.bias"):
        load_checkpoint(sharded, path, strict=True)
    with caplog.at_level(logging.WARNING, logger="mmpar"):
        load_checkpoint(sharded, path)
    assert "unexpected key in source state_dict: extra.weight" in caplog.text
    full = dict(sharded.module.named_parameters())["block.fc.weight"].full_tensor()
    torch.testing.assert_close(full, plain.block.fc.weight)


def test_optimizer_layout_conversion_round_trips_and_checks_counts():
    named = {
        "state": {"b": {"m": 1}, "a": {"m": 2}},
        "param_groups": [{"lr": 1, "params": ["b"]}, {"lr": 2, "params": ["a", "c"]}],
    }
    numbered = optimizer_state_by_ids(named)
    assert numbered == {
        "state": {0: {"m": 1}, 1: {"m": 2}},
        "param_groups": [{"lr": 1, "params": [0]}, {"lr": 2, "params": [1, 2]}],
    }
    assert optimizer_state_by_names(numbered, ["b", "a", "c"]) == named
    with pytest.raises(ValueError, match="ckpt.pth: the optimizer state has 3 parameters.*2"):
        optimizer_state_by_names(numbered, ["b", "a"], "ckpt.pth")


def test_remove_checkpoint_takes_files_and_directories(tmp_path):
    (tmp_path / "a.pth").write_bytes(b"x")
    (tmp_path / "b.pth").mkdir()
    (tmp_path / "b.pth" / "__0_0.distcp").write_bytes(b"x")
    assert remove_checkpoint(str(tmp_path / "a.pth"))
    assert remove_checkpoint(str(tmp_path / "b.pth"))
    assert not remove_checkpoint(str(tmp_path / "c.pth"))
    assert list(tmp_path.iterdir()) == []


def test_ema_hook_refuses_a_sharded_model(gloo_group):
    runner = types.SimpleNamespace(model=MMFullyShardedDataParallel(Mlp()))
    with pytest.raises(NotImplementedError, match="EMAHook does not support a sharded model"):
        EMAHook().before_run(runner)
