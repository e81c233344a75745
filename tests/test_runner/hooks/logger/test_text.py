"""TextLoggerHook: averaging, text and JSON format, train/val separation, out_dir backends."""

import os
import re

import pytest
import torch
from helpers.logger_runner import (
    TIMESTAMP,
    FakeRunner,
    ToyDataset,
    eval_hook,
    read_json,
    read_tb,
)
from torch.utils.data import DataLoader

from mmpar.runner.hooks import HOOKS
from mmpar.runner.hooks.evaluation import EvalHook
from mmpar.runner.hooks.logger.tensorboard import TensorboardLoggerHook
from mmpar.runner.hooks.logger.text import TextLoggerHook

torch.set_num_threads(1)


def test_registered():
    for name in ("TextLoggerHook", "TensorboardLoggerHook"):
        assert HOOKS.get(name) is not None


def test_bad_interval():
    with pytest.raises(ValueError, match="interval"):
        TextLoggerHook(interval=0)


def test_text_logger_averages_and_formats(tmp_path):
    hook = TextLoggerHook(interval=2)
    meta = {"env_info": "Python 3", "config": "model = 1", "seed": 7, "epoch": 3}
    runner = FakeRunner([hook], tmp_path, meta=meta)
    runner.run([[1.0, 2.0, 3.0, 4.0, 10.0]])
    records = read_json(tmp_path)
    # The header describes the run; counters of a resumed meta are not copied into it.
    assert records[0] == {"env_info": "Python 3", "config": "model = 1", "seed": 7}
    assert [r["iter"] for r in records[1:]] == [2, 4]  # ignore_last drops the tail (iter 5)
    assert records[1] == {
        "mode": "train",
        "epoch": 1,
        "iter": 2,
        "lr": 0.1,
        "loss": 1.5,
        "acc_train": 1.0,
        "time": 0.5,
        "data_time": 0.125,
    }
    assert records[2]["loss"] == 3.5
    assert "memory" not in records[1]  # CUDA only
    line = runner.handler.lines[0]
    assert re.fullmatch(
        r"Epoch \[1\]\[2/5\]\tlr: 1\.000e-01, eta: \d+:\d\d:\d\d, time: 0\.500, "
        r"data_time: 0\.125, loss: 1\.5000, acc_train: 1\.0000",
        line,
    ), line
    # Only the JSON file is written: the .log text file belongs to the runner's logger.
    assert sorted(os.listdir(tmp_path)) == [f"{TIMESTAMP}.log.json"]


@pytest.mark.parametrize("meta, header", [({}, [{}]), ({"hook_msgs": {}}, [{}]), (None, [])])
def test_text_logger_meta_line_whenever_meta_exists(tmp_path, meta, header):
    # mmcv writes runner.meta as the first line whenever it is not None (readers of the log,
    # mmcv's tests among them, skip that line), also when nothing of it describes the run.
    runner = FakeRunner([TextLoggerHook(interval=1)], tmp_path, meta=meta)
    runner.run([[1.0]])
    records = read_json(tmp_path)
    assert records[: len(header)] == header
    assert records[len(header)]["mode"] == "train"


def test_text_logger_rounds_floats(tmp_path):
    hook = TextLoggerHook(interval=1)
    runner = FakeRunner([hook], tmp_path)
    runner.run([[1 / 3]])
    assert read_json(tmp_path)[0]["loss"] == 0.33333


def test_text_logger_keeps_tail_when_not_ignore_last(tmp_path):
    hook = TextLoggerHook(interval=2, ignore_last=False)
    runner = FakeRunner([hook], tmp_path)
    runner.run([[1.0, 2.0, 3.0, 4.0, 10.0]])
    records = read_json(tmp_path)
    assert [r["iter"] for r in records] == [2, 4, 5]
    assert records[-1]["loss"] == 7.0  # mean of the last `interval` values (mmcv semantics)


def test_text_logger_by_iter(tmp_path):
    hook = TextLoggerHook(interval=3, by_epoch=False)
    runner = FakeRunner([hook], tmp_path, iters_per_epoch=4, max_epochs=2)
    runner.run([[1.0] * 4, [2.0] * 4])
    assert [r["iter"] for r in read_json(tmp_path)] == [3, 6]
    assert runner.handler.lines[1].startswith("Iter [6/8]\tlr: 1.000e-01, eta: ")


def test_exp_name_printed(tmp_path):
    hook = TextLoggerHook(interval=2, interval_exp_name=4)
    runner = FakeRunner([hook], tmp_path, meta={"exp_name": "cfg.py"})
    runner.run([[1.0] * 4])
    assert runner.handler.lines.count("Exp name: cfg.py") == 1


def test_eval_by_iter_is_a_separate_val_record(tmp_path):
    """mmcv#1058: an evaluation at a logging iteration must not turn into train/<metric>."""
    text = TextLoggerHook(interval=2, by_epoch=False)
    tb = TensorboardLoggerHook(interval=2, by_epoch=False)
    ev = eval_hook([0.25, 0.75], interval=4, by_epoch=False)
    runner = FakeRunner([ev, text, tb], tmp_path, iters_per_epoch=8, max_epochs=1)
    runner.run([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]])
    records = read_json(tmp_path)
    modes = [(r["mode"], r["iter"]) for r in records]
    # Train line first, then the val record of the same step; eval_iter_num is the loader length.
    assert modes == [("train", 2), ("train", 4), ("val", 2), ("train", 6), ("train", 8), ("val", 2)]
    for r in records:
        if r["mode"] == "train":
            assert "accuracy" not in r and r["loss"] > 0
        else:
            assert set(r) == {"mode", "epoch", "iter", "lr", "accuracy"}
    assert [r["accuracy"] for r in records if r["mode"] == "val"] == [0.25, 0.75]
    assert "Iter(val) [2]\taccuracy: 0.2500" in runner.handler.lines
    scalars = read_tb(tmp_path / "tf_logs")
    assert "train/accuracy" not in scalars
    assert scalars["val/accuracy"] == [(4, 0.25), (8, 0.75)]
    assert scalars["train/loss"] == [(2, 1.5), (4, 3.5), (6, 5.5), (8, 7.5)]


class ClearingEvalHook(EvalHook):
    """mmseg 0.30's EvalHook: its ``_do_evaluate`` clears the log buffer before evaluating."""

    def _do_evaluate(self, runner, initial=False):
        runner.log_buffer.clear()
        super()._do_evaluate(runner, initial)


def test_eval_by_iter_keeps_the_train_record_a_subclass_would_clear(tmp_path):
    # mmcv's EvalHook has the loggers write the iteration's train record before evaluating, so
    # a subclass clearing the buffer loses nothing (and no empty record is written).
    text = TextLoggerHook(interval=1, by_epoch=False)
    loader = DataLoader(ToyDataset([0.25, 0.75]), batch_size=2)
    ev = ClearingEvalHook(loader, test_fn=lambda model, dl: [0] * 4, interval=2, by_epoch=False)
    runner = FakeRunner([ev, text], tmp_path, iters_per_epoch=4, max_epochs=1)
    runner.run([[1.0, 2.0, 3.0, 4.0]])
    records = read_json(tmp_path)
    assert [(r["mode"], r["iter"]) for r in records] == [
        ("train", 1),
        ("train", 2),
        ("val", 2),
        ("train", 3),
        ("train", 4),
        ("val", 2),
    ]
    assert [r["loss"] for r in records if r["mode"] == "train"] == [1.0, 2.0, 3.0, 4.0]
    assert [r["accuracy"] for r in records if r["mode"] == "val"] == [0.25, 0.75]


def test_eval_by_epoch_logs_val_record(tmp_path):
    text = TextLoggerHook(interval=2)
    ev = eval_hook([0.5, 0.625])
    runner = FakeRunner([ev, text], tmp_path, iters_per_epoch=3)
    runner.run([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    records = read_json(tmp_path)
    assert [(r["mode"], r["epoch"], r["iter"]) for r in records] == [
        ("train", 1, 2),
        ("val", 1, 2),
        ("train", 2, 2),
        ("val", 2, 2),
    ]
    assert "loss" not in records[1] and records[1]["accuracy"] == 0.5
    assert "Epoch(val) [1][2]\taccuracy: 0.5000" in runner.handler.lines


def test_val_epoch_does_not_leak_into_train(tmp_path):
    """After a val epoch the next train record holds train values only, and vice versa."""
    hook = TextLoggerHook(interval=2)
    runner = FakeRunner([hook], tmp_path, iters_per_epoch=2)
    runner.call("before_run")
    runner.train_epoch([1.0, 3.0, 100.0])  # the unlogged tail (100.0) must not reach val
    runner.val_epoch([0.5, 1.5])
    runner.train_epoch([5.0, 7.0])
    records = read_json(tmp_path)
    assert [(r["mode"], r["epoch"]) for r in records] == [("train", 1), ("val", 1), ("train", 2)]
    assert records[1]["val_loss"] == 1.0
    assert not {"loss", "time", "acc_train"} & set(records[1])
    assert records[2]["loss"] == 6.0 and "val_loss" not in records[2]
    assert "Epoch(val) [1][2]\tval_loss: 1.0000" in runner.handler.lines


def test_iter_mode_switch_clears_other_mode_values(tmp_path):
    """An iteration runner interleaves val iterations without epoch boundaries."""
    hook = TextLoggerHook(interval=2, by_epoch=False)
    runner = FakeRunner([hook], tmp_path)
    runner.call("before_run")
    runner.mode = "val"
    hook.before_val_iter(runner)
    runner.log_buffer.update({"loss": 1000.0, "time": 9.0, "data_time": 9.0})
    runner.mode = "train"
    for loss in (2.0, 4.0):
        hook.before_train_iter(runner)
        runner.log_buffer.update({"loss": loss, "time": 0.5, "data_time": 0.125})
        hook.after_train_iter(runner)
        runner.iter += 1
    assert read_json(tmp_path)[0]["loss"] == 3.0


def test_last_logger_resets_output_and_all_log_same_records(tmp_path):
    a = TextLoggerHook(interval=2)
    b = TensorboardLoggerHook(interval=2)
    runner = FakeRunner([a, b], tmp_path, iters_per_epoch=4)
    runner.run([[1.0, 2.0, 3.0, 4.0]])
    assert (a.reset_flag, b.reset_flag) == (False, True)
    assert runner.log_buffer.output == {} and not runner.log_buffer.ready
    assert [r["loss"] for r in read_json(tmp_path)] == [1.5, 3.5]
    assert read_tb(tmp_path / "tf_logs")["train/loss"] == [(2, 1.5), (4, 3.5)]


def test_nonzero_rank_writes_nothing(tmp_path):
    text = TextLoggerHook(interval=1)
    tb = TensorboardLoggerHook(interval=1)
    runner = FakeRunner([text, tb], tmp_path, rank=1, meta={"seed": 1})
    runner.run([[1.0, 2.0]])
    assert os.listdir(tmp_path) == []
    assert runner.handler.lines == []


def test_text_logger_out_dir(tmp_path):
    work = tmp_path / "exp1"
    work.mkdir()
    (work / "cfg.py").write_text("x = 1\n")
    (work / "weights.pth").write_text("not a log")
    hook = TextLoggerHook(interval=1, out_dir=str(tmp_path / "remote"), keep_local=False)
    runner = FakeRunner([hook], work)
    runner.run([[1.0]])
    remote = tmp_path / "remote" / "exp1"
    assert sorted(os.listdir(remote)) == [f"{TIMESTAMP}.log.json", "cfg.py"]
    assert sorted(os.listdir(work)) == ["weights.pth"]


def test_text_logger_out_dir_through_a_file_client_backend(tmp_path):
    # mmcv's file_client_args: the logs go through the named FileClient backend.
    from mmpar.fileio import BaseStorageBackend, FileClient

    stored = {}

    class MemoryBackend(BaseStorageBackend):
        def get(self, filepath):
            return stored[filepath]

        def get_text(self, filepath, encoding="utf-8"):
            return stored[filepath].decode(encoding)

        def put(self, obj, filepath):
            stored[filepath] = obj

        def join_path(self, filepath, *parts):
            return "/".join([filepath, *parts])

    FileClient.register_backend("memory_for_logs", MemoryBackend, force=True)
    work = tmp_path / "exp2"
    work.mkdir()
    hook = TextLoggerHook(
        interval=1, out_dir="bucket", file_client_args=dict(backend="memory_for_logs")
    )
    runner = FakeRunner([hook], work)
    runner.run([[1.0]])
    log_json = (work / f"{TIMESTAMP}.log.json").read_bytes()
    assert stored == {f"bucket/exp2/{TIMESTAMP}.log.json": log_json}


def test_text_logger_rejects_an_unknown_backend_before_training():
    with pytest.raises(ValueError, match="no_such_backend"):
        TextLoggerHook(out_dir="x", file_client_args=dict(backend="no_such_backend"))


def test_keep_local_false_needs_out_dir():
    with pytest.raises(ValueError, match="out_dir"):
        TextLoggerHook(keep_local=False)
