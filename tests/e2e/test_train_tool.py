"""tools/train.py end to end: Digits accuracy, resume after SIGKILL, torchrun, CIFAR format."""

import os
import pickle
import re
import signal
import subprocess
import sys

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.slow

# The short schedule (4 epochs at lr 0.2) reaches ~87% (seed 0); the full 30-epoch config >= 95%.
MIN_SHORT_ACCURACY = 80.0


def _state_dict(path):
    return torch.load(path, map_location="cpu", weights_only=True)["state_dict"]


def test_train_digits_reaches_accuracy_and_writes_its_outputs(e2e, digits_run):
    entries = e2e.json_log(digits_run)
    val = [e for e in entries if e["mode"] == "val"]
    train = [e for e in entries if e["mode"] == "train"]
    assert [e["epoch"] for e in val] == list(range(1, e2e.DIGITS_EPOCHS + 1))
    assert val[-1]["accuracy_top-1"] >= MIN_SHORT_ACCURACY, val
    assert train[0]["loss"] > train[-1]["loss"]
    names = set(os.listdir(digits_run))
    # checkpoint_config.max_keep_ckpts=2 keeps the last two; save_best='auto' keeps the best.
    assert {f"epoch_{e2e.DIGITS_EPOCHS - 1}.pth", f"epoch_{e2e.DIGITS_EPOCHS}.pth"} <= names
    assert f"epoch_{e2e.DIGITS_EPOCHS - 2}.pth" not in names
    best = max(val, key=lambda e: e["accuracy_top-1"])["epoch"]
    assert f"best_accuracy_top-1_epoch_{best}.pth" in names
    assert "latest.pth" in names and "digits_lenet.py" in names
    assert any(n.endswith(".log") for n in names)
    ckpt = torch.load(digits_run / "latest.pth", map_location="cpu", weights_only=True)
    assert ckpt["meta"]["CLASSES"] == [str(i) for i in range(10)]
    assert ckpt["meta"]["seed"] == 0
    for key, value in _state_dict(digits_run / f"epoch_{e2e.DIGITS_EPOCHS}.pth").items():
        assert torch.equal(value, ckpt["state_dict"][key]), key


def test_sigkilled_run_resumes_with_auto_resume_to_the_same_weights(e2e, digits_run, tmp_path):
    """Kill training in epoch 2, rerun with --auto-resume: same final weights as uninterrupted."""
    work_dir = tmp_path / "work"
    cmd = [
        sys.executable,
        "tools/train.py",
        e2e.DIGITS_CONFIG,
        "--work-dir",
        str(work_dir),
        "--cfg-options",
        *e2e.DIGITS_OPTIONS,
    ]
    child = subprocess.Popen(
        cmd,
        cwd=e2e.REPO,
        env=e2e.tool_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen = []
    try:
        for line in child.stdout:
            seen.append(line)
            if "Epoch [2][" in line:  # epoch 1 (and its checkpoint) is done
                child.send_signal(signal.SIGKILL)
                break
    finally:
        child.kill()
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL, "".join(seen[-30:])
    assert (work_dir / "epoch_1.pth").exists()
    assert not (work_dir / f"epoch_{e2e.DIGITS_EPOCHS}.pth").exists()

    resumed = e2e.run_tool(
        "tools/train.py",
        e2e.DIGITS_CONFIG,
        "--work-dir",
        work_dir,
        "--auto-resume",
        "--cfg-options",
        *e2e.DIGITS_OPTIONS,
        timeout=180,
        check=True,
    )
    # The config dump also says "resume_from = None": look for the runner's own line.
    assert re.search(r"resumed from \S+ at epoch 1, iter \d+", resumed.stdout + resumed.stderr)
    final = _state_dict(work_dir / "latest.pth")
    reference = _state_dict(digits_run / "latest.pth")
    assert final.keys() == reference.keys()
    for key in reference:
        assert torch.equal(final[key], reference[key]), f"{key} differs after resume"
    val = [e for e in e2e.json_log(work_dir) if e["mode"] == "val"]
    assert val[-1]["epoch"] == e2e.DIGITS_EPOCHS


def test_torchrun_two_processes_writes_the_same_outputs_as_one(e2e, digits_run, tmp_path):
    work_dir = tmp_path / "work"
    options = [o for o in e2e.DIGITS_OPTIONS if not o.startswith("runner.max_epochs")]
    proc = e2e.run_tool(
        *e2e.torchrun_args(
            2,
            "tools/train.py",
            e2e.DIGITS_CONFIG,
            "--launcher",
            "pytorch",
            "--work-dir",
            str(work_dir),
            "--cfg-options",
            "runner.max_epochs=2",
            *options,
        ),
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    names = set(os.listdir(work_dir))
    assert {"epoch_1.pth", "epoch_2.pth", "latest.pth", "digits_lenet.py"} <= names
    assert len([n for n in names if n.endswith(".log.json")]) == 1  # rank 0 only
    entries = e2e.json_log(work_dir)
    single = e2e.json_log(digits_run)
    for mode in ("train", "val"):
        keys = {k for e in entries if e["mode"] == mode for k in e}
        assert keys == {k for e in single if e["mode"] == mode for k in e}, mode
    val = [e for e in entries if e["mode"] == "val"]
    assert [e["epoch"] for e in val] == [1, 2]
    train = [e for e in entries if e["mode"] == "train"]
    # Each rank runs half of the 45 batches of an epoch: ceil(1438 / 2 / 32) = 23.
    assert max(e["iter"] for e in train) <= 23
    assert train[-1]["loss"] < train[0]["loss"]
    ckpt = _state_dict(work_dir / "latest.pth")
    assert ckpt.keys() == _state_dict(digits_run / "latest.pth").keys()


def _write_cifar10(root, per_batch=16, seed=0):
    """A tiny CIFAR-10 in the published on-disk format (pickled dicts, uint8 N×3072 rows)."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    names = [
        "airplane",
        "automobile",
        "bird",
        "cat",
        "deer",
        "dog",
        "frog",
        "horse",
        "ship",
        "truck",
    ]
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        labels = rng.integers(0, 10, per_batch).tolist()
        data = rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8)
        with open(folder / name, "wb") as f:
            pickle.dump(
                {
                    "batch_label": name,
                    "labels": labels,
                    "data": data,
                    "filenames": [f"{name}_{i}.png" for i in range(per_batch)],
                },
                f,
            )
    with open(folder / "batches.meta", "wb") as f:
        pickle.dump({"num_cases_per_batch": per_batch, "label_names": names, "num_vis": 3072}, f)


def test_cifar10_resnet_config_trains_one_epoch_on_the_pickle_format(e2e, tmp_path):
    _write_cifar10(tmp_path / "cifar")
    work_dir = tmp_path / "work"
    options = [
        "runner.max_epochs=1",
        "data.samples_per_gpu=16",
        "data.workers_per_gpu=0",
        "model.backbone.stem_channels=8",
        "model.backbone.base_channels=8",
        "model.head.in_channels=64",
        "log_config.interval=1",
    ]
    for split in ("train", "val", "test"):
        options += [
            f"data.{split}.data_prefix={tmp_path / 'cifar'}",
            f"data.{split}.check_integrity=False",
        ]
    e2e.run_tool(
        "tools/train.py",
        "configs/cifar10_resnet.py",
        "--work-dir",
        work_dir,
        "--cfg-options",
        *options,
        timeout=180,
        check=True,
    )
    entries = e2e.json_log(work_dir)
    train = [e for e in entries if e["mode"] == "train"]
    val = [e for e in entries if e["mode"] == "val"]
    assert len(train) == 5  # 80 training images / 16 per batch, logged every iteration
    assert len(val) == 1 and 0.0 <= val[0]["accuracy_top-1"] <= 100.0
    ckpt = torch.load(work_dir / "epoch_1.pth", map_location="cpu", weights_only=True)
    assert ckpt["meta"]["CLASSES"][0] == "airplane"
    assert ckpt["state_dict"]["backbone.stem.0.weight"].shape[0] == 8  # stem_channels
