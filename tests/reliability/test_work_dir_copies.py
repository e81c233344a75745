"""A run never touches another work dir: copies, moves and read-only originals (issue 36).

A work dir is copied to branch an experiment (or moved) and the copy auto-resumed. Its
checkpoints record the best checkpoint's path; when that path was absolute, a new best in the
copy deleted the *original* work dir's best checkpoint. Real runners here (EvalHook with
scripted scores, CheckpointHook, ``resume('auto')`` as ``--auto-resume`` calls it).
"""

import logging
import os
import shutil
import stat

import pytest
import torch
from helpers import TinyModel
from torch.utils.data import DataLoader, Dataset

import mmpar.runner as R

torch.set_num_threads(1)

FIRST_BEST = "best_accuracy_epoch_1.pth"


class ScriptedScores(Dataset):
    """Two items; ``evaluate`` returns the next of ``scores`` as ``accuracy``."""

    def __init__(self, scores):
        self.scores = list(scores)

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return {"x": torch.tensor([float(i)])}

    def evaluate(self, results, logger=None):
        return {"accuracy": self.scores.pop(0)}


def _train(work_dir, scores, max_epochs, resume=False):
    """Train ``max_epochs`` (resuming with ``'auto'``); return the runner and its log text."""
    torch.manual_seed(0)
    model = TinyModel(in_dim=1)
    logger = logging.getLogger(f"test_work_dir_copies.{work_dir}")
    records = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    runner = R.EpochBasedRunner(
        model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        work_dir=str(work_dir),
        logger=logger,
        max_epochs=max_epochs,
    )
    runner.register_hook(R.OptimizerHook(), priority="ABOVE_NORMAL")
    runner.register_hook(R.CheckpointHook(interval=1, max_keep_ckpts=1), priority="NORMAL")
    if resume:  # epoch 2 was saved before its evaluation ran: the resumed run evaluates it
        scores = [0.25, *scores]
    val = DataLoader(ScriptedScores(scores), batch_size=2)
    runner.register_hook(R.EvalHook(val, save_best="accuracy", test_fn=_predict), priority="LOW")
    if resume:
        assert runner.resume("auto") is not None
    data = [{"x": torch.tensor([[0.5]]), "y": torch.tensor([[1.5]])}] * 2
    try:
        runner.run([data], [("train", 1)])
    finally:
        logger.removeHandler(handler)
    return runner, "\n".join(records)


def _predict(model, loader):
    return [0.0] * len(loader.dataset)


def _snapshot(root):
    """Every entry below ``root``: its bytes (or link target) and mtime."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if os.path.islink(path):
                content = os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    content = f.read()
            else:
                content = None
            found[os.path.relpath(path, root)] = (content, st.st_mtime_ns)
    return found


@pytest.fixture
def original(tmp_path):
    """A finished 2-epoch run whose best checkpoint is epoch 1's."""
    work_dir = tmp_path / "original"
    _train(work_dir, [0.5, 0.25], max_epochs=2)
    assert FIRST_BEST in os.listdir(work_dir)
    return work_dir


def _best_files(work_dir):
    return sorted(n for n in os.listdir(work_dir) if n.startswith("best_"))


def test_the_best_checkpoint_is_recorded_relative_to_the_work_dir(original):
    ckpt = torch.load(original / "epoch_2.pth", map_location="cpu", weights_only=False)
    assert ckpt["meta"]["hook_msgs"]["best_ckpt"] == FIRST_BEST
    assert ckpt["mmpar_state"]["hooks"]["EvalHook"]["best_ckpt"] == FIRST_BEST


def test_a_copy_resumed_replaces_its_own_best_and_leaves_the_original(original, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    before = _snapshot(original)
    runner, _ = _train(copy, [0.75], max_epochs=3, resume=True)
    assert _best_files(copy) == ["best_accuracy_epoch_3.pth"]  # the copy's own old best went
    assert runner.meta["hook_msgs"]["best_ckpt"] == str(copy / "best_accuracy_epoch_3.pth")
    assert _snapshot(original) == before


def test_a_moved_work_dir_resumed_replaces_its_best(original, tmp_path):
    moved = tmp_path / "moved"
    shutil.move(original, moved)
    _train(moved, [0.75], max_epochs=3, resume=True)
    assert _best_files(moved) == ["best_accuracy_epoch_3.pth"]
    assert not original.exists()


def test_a_read_only_original_is_neither_read_for_writing_nor_changed(original, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    for dirpath, _, filenames in os.walk(original):
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)
    before = _snapshot(original)
    try:
        _train(copy, [0.75, 0.875], max_epochs=4, resume=True)
        assert _snapshot(original) == before
    finally:
        for dirpath, _, _ in os.walk(original):
            os.chmod(dirpath, 0o755)
    assert _best_files(copy) == ["best_accuracy_epoch_4.pth"]


def _record_absolute(work_dir, checkpoint, recorded):
    """Rewrite ``checkpoint`` as an older mmpar (or mmcv) saved it: an absolute best path."""
    path = work_dir / checkpoint
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    ckpt["meta"]["hook_msgs"]["best_ckpt"] = str(recorded)
    ckpt["mmpar_state"]["hooks"]["EvalHook"]["best_ckpt"] = str(recorded)
    torch.save(ckpt, path)


def test_an_old_absolute_record_outside_the_work_dir_is_read_but_left_alone(original, tmp_path):
    _record_absolute(original, "epoch_2.pth", original / FIRST_BEST)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    before = _snapshot(original)
    _, log = _train(copy, [0.75], max_epochs=3, resume=True)
    assert _snapshot(original) == before
    assert f"{original / FIRST_BEST} is outside {copy}" in log and "left alone" in log
    # The copy's stale best stays too: nothing proves it is the file the record names.
    assert _best_files(copy) == [FIRST_BEST, "best_accuracy_epoch_3.pth"]


def test_an_old_absolute_record_inside_the_work_dir_is_still_replaced(original):
    _record_absolute(original, "epoch_2.pth", original / FIRST_BEST)
    _train(original, [0.75], max_epochs=3, resume=True)
    assert _best_files(original) == ["best_accuracy_epoch_3.pth"]
