"""tools/train.py --auto-resume in a work dir two runs wrote into: it continues the newer run.

The trap of issue 12: an older run saved more iterations (small batches) than the newer,
finished run (big batches) into the same --work-dir, and auto-resume took the older run's best
checkpoint and trained again. Both runs are real single-process runs here. A new run is now
refused in a work dir holding another run's checkpoints (issue 25), so the newer run trains
in a folder of its own and its files are moved in, as an older mmpar or mmcv left them.
"""

import os
import shutil

import pytest
import torch

pytestmark = pytest.mark.slow

COMMON = ["data.workers_per_gpu=0", "checkpoint_config.interval=1", "log_config.interval=50"]
# 90 iterations in 1 epoch; evaluates and keeps best_accuracy_top-1_epoch_1.pth (iter 90).
OLDER = ["runner.max_epochs=1", "data.samples_per_gpu=16", *COMMON]
# 3 iterations per epoch, 2 epochs, no evaluation: epoch_1.pth (replacing the older run's
# file of that name) and epoch_2.pth (iter 6). The older run's best checkpoint stays.
NEWER = ["runner.max_epochs=2", "data.samples_per_gpu=512", *COMMON]
BEST = "best_accuracy_top-1_epoch_1.pth"


def _train(e2e, work_dir, options, *flags):
    args = ["tools/train.py", e2e.DIGITS_CONFIG, "--work-dir", work_dir, *flags]
    return e2e.run_tool(*args, "--cfg-options", *options, timeout=120)


def _run_id(path):
    return torch.load(path, map_location="cpu", weights_only=True)["meta"]["run_id"]


def _snapshot(work_dir):
    return {n: os.stat(work_dir / n).st_mtime_ns for n in os.listdir(work_dir)}


def test_auto_resume_continues_the_newer_run_and_refuses_without_a_record(e2e, tmp_path):
    work_dir = tmp_path / "work"
    older = _train(e2e, work_dir, OLDER)
    assert older.returncode == 0, older.stderr[-4000:]
    older_files = _snapshot(work_dir)
    # A new run never writes beside another run's checkpoints, changed or not: one line.
    for options, says, passes in (
        (NEWER, "trained with a different config (this one has: samples_per_gpu=512", "--work-dir"),
        (OLDER, "trained with this same config", "--auto-resume to continue that run"),
    ):
        refused = _train(e2e, work_dir, options)
        assert refused.returncode == 2, refused.stderr[-4000:]
        assert "Traceback" not in refused.stderr
        (error,) = [line for line in refused.stderr.splitlines() if line.startswith("error: ")]
        assert error.startswith(f'error: WorkDirHasOtherRunError: work_dir "{work_dir}" holds ')
        assert says in error and passes in error and "Nothing was written" in error
        assert _snapshot(work_dir) == older_files
    newer_dir = tmp_path / "newer"
    newer = _train(e2e, newer_dir, NEWER, "--no-validate")
    assert newer.returncode == 0, newer.stderr[-4000:]
    for name in os.listdir(newer_dir):
        if name.endswith(".pth") or name == "last_run.json":
            if os.path.lexists(work_dir / name):
                os.remove(work_dir / name)
            shutil.copy2(newer_dir / name, work_dir / name, follow_symlinks=False)
    older_id, newer_id = _run_id(work_dir / BEST), _run_id(work_dir / "epoch_2.pth")
    assert older_id != newer_id
    assert torch.load(work_dir / BEST, weights_only=True)["meta"]["iter"] == 90  # > 6

    before = _snapshot(work_dir)
    resumed = _train(e2e, work_dir, NEWER, "--no-validate", "--auto-resume")
    out = resumed.stdout + resumed.stderr
    assert resumed.returncode == 0, out[-4000:]
    assert f"auto-resume: continuing run {newer_id} from {work_dir / 'epoch_2.pth'}" in out
    assert f"left alone: run {older_id} (newest {work_dir / BEST}, iter 90)" in out
    assert f"resumed from {work_dir / 'epoch_2.pth'} at epoch 2, iter 6" in out
    assert "Epoch [" not in out  # nothing was left to train
    after = _snapshot(work_dir)
    for name in (BEST, "epoch_1.pth", "epoch_2.pth"):  # no checkpoint was written again
        assert after[name] == before[name], name

    # Without the record of which run started last, two runs' checkpoints are refused.
    os.remove(work_dir / "last_run.json")
    before = _snapshot(work_dir)
    refused = _train(e2e, work_dir, NEWER, "--auto-resume")
    assert refused.returncode == 2, refused.stderr[-4000:]
    assert "Traceback" not in refused.stderr
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and refused.stderr.rstrip().endswith(errors[0]), refused.stderr
    assert errors[0].startswith("error: MixedRunsError: auto-resume: ")
    for expected in (
        f"run {newer_id} (newest {work_dir / 'epoch_2.pth'}, iter 6)",
        f"run {older_id} (newest {work_dir / BEST}, iter 90)",
        "--resume-from FILE",
        "another --work-dir",
    ):
        assert expected in errors[0]
    assert _snapshot(work_dir) == before  # nothing was written
