"""BestCheckpoint: the best score under a rule, new best saved before the old one is deleted."""

import logging
import os

import pytest

from mmpar.runner.hooks.best_checkpoint import BestCheckpoint


class SavingRunner:
    """Writes checkpoint files; records which files existed when each save began."""

    def __init__(self, fail_on=None):
        self.meta = {}
        self.logger = logging.getLogger("test_hooks_best_checkpoint")
        self.on_disk_before_save = []
        self.fail_on = fail_on

    def save_checkpoint(self, out_dir, filename_tmpl, create_symlink=True):
        self.on_disk_before_save.append(sorted(os.listdir(out_dir)))
        if filename_tmpl == self.fail_on:
            raise OSError("disk full")
        with open(os.path.join(out_dir, filename_tmpl), "w") as f:
            f.write("ckpt")


def test_new_best_is_written_before_the_previous_is_deleted(tmp_path):
    best = BestCheckpoint("val_loss")
    assert best.rule == "less"
    runner = SavingRunner()
    for epoch, score in enumerate([2.0, 3.0, 1.0], start=1):
        best.update(runner, score, str(tmp_path), "epoch", epoch)
    assert runner.on_disk_before_save == [[], ["best_val_loss_epoch_1.pth"]]
    assert os.listdir(tmp_path) == ["best_val_loss_epoch_3.pth"]
    path = os.path.join(str(tmp_path), "best_val_loss_epoch_3.pth")
    assert runner.meta["hook_msgs"] == {"best_score": 1.0, "best_ckpt": path}
    assert best.state_dict() == {
        "best_score": 1.0,
        "best_ckpt": path,
        "key_indicator": "val_loss",
        "rule": "less",
    }


def test_a_failed_save_leaves_the_previous_best_on_disk(tmp_path):
    best = BestCheckpoint("accuracy")
    runner = SavingRunner(fail_on="best_accuracy_iter_20.pth")
    best.update(runner, 0.5, str(tmp_path), "iter", 10)
    with pytest.raises(OSError, match="disk full"):
        best.update(runner, 0.75, str(tmp_path), "iter", 20)
    assert os.listdir(tmp_path) == ["best_accuracy_iter_10.pth"]


def test_auto_takes_the_metric_of_the_saved_run_on_resume():
    saved = BestCheckpoint("auto")
    saved.set_metric("mAP", None)
    saved.best_score = 0.25
    resumed = BestCheckpoint("auto")
    resumed.load_state_dict(saved.state_dict())
    assert (resumed.key_indicator, resumed.rule, resumed.best_score) == ("mAP", "greater", 0.25)
    assert not resumed.is_better(0.125) and resumed.is_better(0.5)
    named = BestCheckpoint("top1")  # a configured metric is not replaced by the saved one
    named.load_state_dict(saved.state_dict())
    assert named.key_indicator == "top1" and named.best_score == 0.25


def test_meta_of_an_mmcv_checkpoint_is_picked_up_unless_state_was_restored():
    class Runner:
        meta = {"hook_msgs": {"best_score": 0.5, "best_ckpt": "best_acc_epoch_1.pth"}}

    best = BestCheckpoint("acc")
    best.restore_from_meta(Runner)
    assert (best.best_score, best.best_ckpt_path) == (0.5, "best_acc_epoch_1.pth")
    restored = BestCheckpoint("acc")
    restored.load_state_dict({"best_score": 0.75, "best_ckpt": "best_acc_epoch_2.pth"})
    restored.restore_from_meta(Runner)
    assert (restored.best_score, restored.best_ckpt_path) == (0.75, "best_acc_epoch_2.pth")


def test_rules():
    assert BestCheckpoint("psnr", greater_keys="psnr").greater_keys == ("psnr",)  # replaces
    assert BestCheckpoint("psnr", greater_keys=["psnr"]).rule == "greater"
    assert BestCheckpoint(None, rule="less").rule == "less"
    with pytest.raises(ValueError, match="unknown rule 'bigger'"):
        BestCheckpoint(None, rule="bigger")
    with pytest.raises(ValueError, match="MyHook: cannot infer .* 'psnr'"):
        BestCheckpoint("psnr", owner="MyHook")
