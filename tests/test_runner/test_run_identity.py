"""Run identity (runner.run_id, last_run.json) and the checkpoint auto-resume continues."""

import json
import logging
import os
import re
import socket

import pytest
import torch

from mmpar.runner import CheckpointError, find_latest_checkpoint, save_checkpoint
from mmpar.runner.checkpointing.run_identity import (
    RUN_RECORD,
    MixedRunsError,
    choose_resume_checkpoint,
    read_run_record,
    write_run_record,
)

RUN_A, RUN_B = "a" * 32, "b" * 32


def _train(runner, loader, epochs_interval=1):
    runner.register_checkpoint_hook(dict(interval=epochs_interval))
    runner.run([loader], [("train", 1)])
    return runner


def _meta(path):
    return torch.load(path, weights_only=True)["meta"]


def _record(work):
    return json.loads((work / RUN_RECORD).read_text())


# ---------------------------------------------------------------- the runner's identity
def test_run_id_is_recorded_in_checkpoints_and_last_run_json(make_runner, make_loader, tmp_path):
    runner = _train(make_runner(max_epochs=2), make_loader())
    work = tmp_path / "work"
    assert re.fullmatch(r"[0-9a-f]{32}", runner.run_id)
    for name in ("epoch_1.pth", "epoch_2.pth", "latest.pth"):
        assert _meta(work / name)["run_id"] == runner.run_id
    record = _record(work)
    assert record["run_id"] == runner.run_id
    assert record["resumed"] is False and record["resumed_from"] is None
    assert (record["pid"], record["host"], record["world_size"]) == (
        os.getpid(),
        socket.gethostname(),
        1,
    )
    assert record["started"]
    with pytest.raises(AttributeError):
        runner.run_id = RUN_A  # read-only
    assert make_runner().run_id != runner.run_id  # every runner starts a new run


def test_resume_adopts_the_checkpoint_run_id(make_runner, make_loader, tmp_path):
    work = tmp_path / "work"
    first = _train(make_runner(max_epochs=1), make_loader())
    resumed = make_runner(max_epochs=2)
    assert resumed.run_id != first.run_id
    resumed.resume(str(work / "epoch_1.pth"))
    assert resumed.run_id == first.run_id
    _train(resumed, make_loader())
    assert _meta(work / "epoch_2.pth")["run_id"] == first.run_id
    record = _record(work)
    assert record["run_id"] == first.run_id and record["resumed"] is True
    assert record["resumed_from"] == "epoch_1.pth"  # relative: the work dir can be moved
    assert read_run_record(str(work))["resumed_from"] == str(work / "epoch_1.pth")


def test_the_choice_names_the_file_not_latest_pth(make_runner, make_loader, tmp_path):
    runner = _train(make_runner(max_epochs=1), make_loader())
    work = tmp_path / "work"
    # A later checkpoint whose name sorts after "latest.pth", as the preemption one does.
    path = runner.save_checkpoint(str(work), filename_tmpl="preempted_iter_{}.pth")
    assert os.readlink(work / "latest.pth") == os.path.basename(path)
    assert choose_resume_checkpoint(str(work)) == path


def test_checkpoint_without_run_id_keeps_the_new_id(
    make_runner, toy_model, tmp_path, test_logger, caplog
):
    path = tmp_path / "mmcv.pth"  # an mmcv 1.x checkpoint: no run_id, no mmpar_state
    torch.save({"meta": {"epoch": 1, "iter": 3}, "state_dict": toy_model.state_dict()}, path)
    runner = make_runner(max_epochs=2)
    new_id = runner.run_id
    with caplog.at_level(logging.INFO, logger=test_logger.name):
        runner.resume(str(path))
    assert runner.run_id == new_id
    said = "records no run id (saved by mmcv 1.x or an older mmpar): continuing it as run"
    assert f"{path} {said} {new_id}" in caplog.text


# ---------------------------------------------------------------- the choice, file by file
def _save(work, name, it, run_id=None, mtime=None):
    meta = {"iter": it} if run_id is None else {"iter": it, "run_id": run_id}
    path = work / name
    save_checkpoint(torch.nn.Linear(2, 1), str(path), meta=meta)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return str(path)


@pytest.fixture
def two_runs(tmp_path):
    """Run A (older) saved more iterations than run B (newer, finished)."""
    work = tmp_path / "work"
    work.mkdir()
    t = 1_700_000_000
    _save(work, "epoch_2.pth", 40, RUN_A, t)
    _save(work, "best_acc_epoch_2.pth", 40, RUN_A, t + 1)
    b_old = _save(work, "epoch_1.pth", 5, RUN_B, t + 10)
    b_new = _save(work, "epoch_3.pth", 15, RUN_B, t + 20)
    return work, b_old, b_new


def test_record_names_the_run_to_continue(two_runs, test_logger, caplog):
    work, _, b_new = two_runs
    write_run_record(str(work), RUN_B)
    assert find_latest_checkpoint(str(work)) == str(work / "best_acc_epoch_2.pth")  # any run
    assert find_latest_checkpoint(str(work), run_id=RUN_B) == b_new
    with caplog.at_level(logging.INFO, logger=test_logger.name):
        assert choose_resume_checkpoint(str(work), test_logger) == b_new
    assert f"continuing run {RUN_B} from {b_new}" in caplog.text
    assert f"left alone: run {RUN_A} (newest {work / 'best_acc_epoch_2.pth'}, iter 40)" in (
        caplog.text
    )
    assert "--resume-from FILE" in caplog.text


def test_corrupt_checkpoint_of_the_run_falls_back_to_its_previous_one(two_runs, test_logger):
    work, b_old, b_new = two_runs
    write_run_record(str(work), RUN_B)
    data = open(b_new, "rb").read()
    with open(b_new, "wb") as f:
        f.write(data[:200])  # truncated by a crash during the save
    assert choose_resume_checkpoint(str(work), test_logger) == b_old  # never run A's
    with open(b_old, "wb") as f:
        f.write(data[:200])
    assert choose_resume_checkpoint(str(work), test_logger) is None  # fresh, not run A's


def test_recorded_run_without_checkpoints_starts_fresh(two_runs, test_logger, caplog):
    work, _, _ = two_runs
    write_run_record(str(work), "c" * 32)  # a run that stopped before its first checkpoint
    with caplog.at_level(logging.INFO, logger=test_logger.name):
        assert choose_resume_checkpoint(str(work), test_logger) is None
    line = caplog.records[-1].getMessage()
    assert line.startswith(f"auto-resume: no checkpoint of run {'c' * 32}")
    assert "starting fresh" in line and RUN_A in line and RUN_B in line
    assert "--resume-from FILE" in line


def test_several_runs_without_record_are_refused(two_runs, test_logger):
    work, _, b_new = two_runs
    with pytest.raises(MixedRunsError) as info:
        choose_resume_checkpoint(str(work), test_logger)
    assert isinstance(info.value, CheckpointError)  # tools/train.py: exit code 2
    message = str(info.value)
    assert "\n" not in message
    assert f"{work} holds checkpoints of 2 runs and no {RUN_RECORD}" in message
    assert f"run {RUN_B} (newest {b_new}, iter 15)" in message
    assert f"run {RUN_A} (newest {work / 'best_acc_epoch_2.pth'}, iter 40)" in message
    assert message.index(RUN_B) < message.index(RUN_A)  # the most recent run first
    assert "--resume-from FILE" in message and "another --work-dir" in message


def test_legacy_checkpoints_form_their_own_run(tmp_path, test_logger, caplog):
    work = tmp_path / "work"
    work.mkdir()
    assert choose_resume_checkpoint(str(work), test_logger) is None  # empty: fresh
    legacy = _save(work, "epoch_4.pth", 8)
    _save(work, "epoch_3.pth", 6)
    assert choose_resume_checkpoint(str(work), test_logger) == legacy  # one group: its newest
    _save(work, "iter_2.pth", 2, RUN_A)
    with pytest.raises(MixedRunsError, match="checkpoints without a run id"):
        choose_resume_checkpoint(str(work), test_logger)
    # A run resumed from the legacy file and stopped before its first save continues from it.
    write_run_record(str(work), RUN_B, resumed_from=legacy)
    assert choose_resume_checkpoint(str(work), test_logger) == legacy
    # ... and an unreadable record counts as none (warned).
    (work / RUN_RECORD).write_text("{not json")
    with caplog.at_level(logging.WARNING, logger=test_logger.name):
        assert read_run_record(str(work), test_logger) is None
        with pytest.raises(MixedRunsError):
            choose_resume_checkpoint(str(work), test_logger)
    assert "ignoring unreadable" in caplog.text


# ------------------------------------------------------------- the trap, in-process
def test_auto_resume_continues_the_newer_run_not_the_one_with_more_iterations(
    make_runner, make_loader, toy_model, tmp_path
):
    work = tmp_path / "work"
    older = _train(make_runner(max_epochs=3), make_loader(batch_size=2), epochs_interval=3)
    assert _meta(work / "epoch_3.pth")["iter"] == 18
    # A fresh run in the same folder is refused since runner.run keeps one run per work dir;
    # the mix is made as an older mmpar or mmcv left it: trained elsewhere, files moved in.
    newer = _train(
        make_runner(max_epochs=2, work_dir=str(tmp_path / "elsewhere")), make_loader(batch_size=6)
    )
    for name in ("epoch_1.pth", "epoch_2.pth", RUN_RECORD):
        os.replace(tmp_path / "elsewhere" / name, work / name)
    os.remove(work / "latest.pth")
    os.symlink("epoch_2.pth", work / "latest.pth")
    assert newer.run_id != older.run_id and _record(work)["run_id"] == newer.run_id

    continued = make_runner(max_epochs=2)
    ckpt = continued.resume("auto")
    assert ckpt["meta"]["run_id"] == newer.run_id and continued.run_id == newer.run_id
    assert (continued.epoch, continued.iter) == (2, 4)  # newer's epoch_2.pth, not epoch_3.pth
    before = os.path.getmtime(work / "epoch_3.pth")
    _train(continued, make_loader(batch_size=6))
    assert continued.iter == 4  # nothing was left to train
    assert os.path.getmtime(work / "epoch_3.pth") == before  # the older run's file is untouched

    os.remove(work / RUN_RECORD)  # nothing says which run to continue
    with pytest.raises(MixedRunsError, match=f"run {older.run_id} .*epoch_3.pth, iter 18"):
        make_runner(max_epochs=2).resume("auto")
