"""Sharded checkpoints (DCP directories) in one process: a gloo world of 1 shards for real.

2-process runs (kill during a sharded save, auto-resume, rotation) are in
tests/reliability/test_fsdp_checkpoints.py.
"""

import logging
import os
import pickle
import shutil

import pytest
import torch
import torch.distributed as dist

from mmpar.parallel import MMFullyShardedDataParallel
from mmpar.runner import CheckpointHook, EpochBasedRunner, load_checkpoint, save_checkpoint
from mmpar.runner.checkpointing.model_state import CheckpointMismatchError
from mmpar.runner.checkpointing.run_identity import scan_checkpoints
from mmpar.runner.checkpointing.safe_load import CorruptCheckpointError, UnsafeCheckpointError
from mmpar.runner.checkpointing.sharded import (
    HEADER,
    convert_sharded_checkpoint,
    is_sharded_checkpoint,
    load_sharded_checkpoint,
    read_sharded_header,
    save_sharded_checkpoint,
)

from ._fsdp_models import Mlp, _assert_same_state, _optimizer, _steps, _trained_pair


def _save(tmp_path, name="iter_2.pth"):
    plain, plain_opt, sharded, sharded_opt = _trained_pair()
    for group in plain_opt.param_groups + sharded_opt.param_groups:
        group["initial_lr"] = group["lr"]
    path = str(tmp_path / name)
    meta = {"iter": 2, "run_id": "a" * 32}
    save_sharded_checkpoint(sharded, path, sharded_opt, meta, extra_state={"iter": 2})
    return plain, plain_opt, path


def test_sharded_checkpoint_resumes_and_converts_to_the_full_one(gloo_group, tmp_path):
    plain, plain_opt, path = _save(tmp_path)
    assert is_sharded_checkpoint(path)
    assert [n for n in os.listdir(tmp_path) if n.startswith(".")] == []  # temporary renamed
    header = read_sharded_header(path)
    assert header["meta"]["run_id"] == "a" * 32 and header["mmpar_state"] == {"iter": 2}

    model = MMFullyShardedDataParallel(Mlp(), wrap_modules=["Block"])
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    optimizer = _optimizer(model)  # no state, no initial_lr yet: the header restores them
    load_sharded_checkpoint(model, path, optimizer, strict=True)
    assert [g["initial_lr"] for g in optimizer.param_groups] == [0.05, 0.1]
    _steps(model, optimizer, start=2)
    _steps(plain, plain_opt, start=2)
    for name, value in plain.named_parameters():
        full = dict(model.module.named_parameters())[name].full_tensor()
        torch.testing.assert_close(full, value, msg=name)

    # The converted file is the full checkpoint the same training would have written.
    plain, plain_opt, _ = _save(tmp_path, "again.pth")
    save_checkpoint(plain, str(tmp_path / "full.pth"), plain_opt)
    convert_sharded_checkpoint(str(tmp_path / "again.pth"), str(tmp_path / "converted.pth"))
    want = torch.load(tmp_path / "full.pth", weights_only=True)
    got = torch.load(tmp_path / "converted.pth", weights_only=True)
    _assert_same_state(want["state_dict"], got["state_dict"])
    _assert_same_state(want["optimizer"], got["optimizer"])
    assert got["meta"]["iter"] == 2 and got["mmpar_state"] == {"iter": 2}


def test_one_process_without_a_group_loads_a_sharded_checkpoint(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'pg'}", rank=0, world_size=1)
    try:
        plain, _, path = _save(tmp_path)
    finally:
        dist.destroy_process_group()
    model = Mlp()
    header = load_checkpoint(model, path, strict=True)  # as tools/test.py does
    assert header["meta"]["iter"] == 2
    for name, value in plain.state_dict().items():
        torch.testing.assert_close(model.state_dict()[name], value, msg=name)


def test_mismatches_are_reported_as_for_files(gloo_group, tmp_path, caplog):
    _, _, path = _save(tmp_path)
    other = Mlp()
    other.head = torch.nn.Linear(4, 2)
    model = MMFullyShardedDataParallel(other)
    with pytest.raises(CheckpointMismatchError, match=r"head.weight: checkpoint \(1, 4\)"):
        load_sharded_checkpoint(model, path, strict=True)
    before = model.module.head.weight.full_tensor().detach().clone()
    with caplog.at_level(logging.WARNING, logger="mmpar"):
        load_sharded_checkpoint(model, path)
    assert "size mismatch (skipped): head.weight" in caplog.text
    torch.testing.assert_close(model.module.head.weight.full_tensor(), before)


def test_auto_resume_reads_headers_and_ignores_unfinished_directories(gloo_group, tmp_path):
    _, _, path = _save(tmp_path)
    shutil.copytree(path, tmp_path / ".iter_4.pth.tmp.123")  # a save killed before its rename
    (tmp_path / "iter_3.pth").mkdir()  # not a checkpoint: no header
    os.symlink("iter_2.pth", tmp_path / "latest.pth")
    found = scan_checkpoints(str(tmp_path))
    assert [(c.path, c.iter, c.run_id) for c in found] == [(path, 2, "a" * 32)]


def test_unsafe_dcp_metadata_is_refused(gloo_group, tmp_path):
    _, _, path = _save(tmp_path)

    class Payload:
        def __reduce__(self):
            return (print, ("pwned",))

    with open(os.path.join(path, ".metadata"), "wb") as f:
        pickle.dump(Payload(), f)
    with pytest.raises(UnsafeCheckpointError, match="builtins.print"):
        load_sharded_checkpoint(Mlp(), path)


def test_a_missing_or_truncated_shard_file_is_named(gloo_group, tmp_path):
    _, _, path = _save(tmp_path)
    shards = sorted(n for n in os.listdir(path) if n.endswith(".distcp"))
    assert shards
    with open(os.path.join(path, shards[0]), "r+b") as f:
        f.truncate(os.path.getsize(os.path.join(path, shards[0])) // 2)
    with pytest.raises(
        CorruptCheckpointError, match=f"{shards[0]}.* is truncated .*copy the whole"
    ):
        load_sharded_checkpoint(Mlp(), path)
    os.remove(os.path.join(path, shards[0]))
    with pytest.raises(CorruptCheckpointError, match=f"misses its shard file {shards[0]}: copy"):
        load_checkpoint(Mlp(), path)  # as tools/test.py loads it (one error: line, exit 2)


def test_sharded_needs_a_sharded_model(tmp_path):
    runner = EpochBasedRunner(Mlp(), work_dir=str(tmp_path), max_epochs=1)
    with pytest.raises(ValueError, match="sharded checkpoints .* need a sharded model"):
        runner.register_checkpoint_hook(dict(interval=1, sharded=True))
    with pytest.raises(TypeError, match="sharded must be True or False"):
        CheckpointHook(sharded="yes")
    assert HEADER == "mmpar_header.pth"
