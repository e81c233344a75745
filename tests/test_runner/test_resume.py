"""Exact resume with real processes: SIGKILL a training run, resume it, compare bit for bit."""

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from mmpar.runner import Hook, find_latest_checkpoint

SCRIPT = Path(__file__).with_name("_resume_script.py")


def _cmd(tmp_path, name, runner, workers, sampler="dist", resume=False, extra=()):
    cmd = [
        sys.executable,
        str(SCRIPT),
        "--runner",
        runner,
        "--workers",
        str(workers),
        "--sampler",
        sampler,
        "--work-dir",
        str(tmp_path / name),
        "--out",
        str(tmp_path / f"{name}.pth"),
    ]
    if resume:
        cmd.append("--resume")
    return cmd + list(extra)


def _run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _run_and_kill_at(cmd, kill_at):
    """Start the child, read its markers and SIGKILL it once iteration ``kill_at`` is done."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        for line in proc.stdout:
            if line.strip() == f"ITER {kill_at}":
                proc.send_signal(signal.SIGKILL)
                break
        else:
            pytest.fail(f"child ended before iteration {kill_at}")
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Final state of uninterrupted runs, one per (runner, sampler), computed once."""
    cache = {}

    def get(runner, sampler="dist"):
        if (runner, sampler) not in cache:
            root = tmp_path_factory.mktemp(f"ref_{runner}_{sampler}")
            _run(_cmd(root, "reference", runner, 0, sampler))
            cache[runner, sampler] = root / "reference.pth"
        return cache[runner, sampler]

    return get


def _assert_same_final_state(a_path, b_path):
    a, b = torch.load(a_path, weights_only=True), torch.load(b_path, weights_only=True)
    assert a["iter"] == b["iter"]
    assert a["model"].keys() == b["model"].keys()
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key
    a_state, b_state = a["optimizer"]["state"], b["optimizer"]["state"]
    assert a_state and a_state.keys() == b_state.keys()  # every parameter has a momentum buffer
    for pid, state in a_state.items():
        assert torch.equal(state["momentum_buffer"], b_state[pid]["momentum_buffer"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "runner, workers, sampler, kill_at",
    [
        ("epoch", 0, "dist", 8),  # mid-epoch 2 (6 batches per epoch)
        ("epoch", 2, "dist", 6),  # after the epoch's last, partial batch
        ("iter", 0, "dist", 9),  # the loader restarted once already
        ("iter", 2, "dist", 5),
        ("iter", 0, "infinite", 7),
    ],
)
def test_killed_run_resumes_bit_exact(tmp_path, reference, runner, workers, sampler, kill_at):
    # The reference runs with num_workers=0: worker processes must not change the result.
    killed = _cmd(tmp_path, "killed", runner, workers, sampler)
    _run_and_kill_at(killed, kill_at)
    latest = find_latest_checkpoint(str(tmp_path / "killed"))
    saved_iter = torch.load(latest, weights_only=True)["mmpar_state"]["iter"]
    assert saved_iter >= kill_at  # killed somewhere at or after iteration kill_at
    proc = _run(_cmd(tmp_path, "killed", runner, workers, sampler, resume=True))
    assert proc.stdout.split()[1] == str(saved_iter + 1)  # continued with the next iteration
    _assert_same_final_state(reference(runner, sampler), tmp_path / "killed.pth")


@pytest.mark.slow
def test_kill_during_save_keeps_previous_latest(tmp_path, reference):
    cmd = _cmd(tmp_path, "crash", "epoch", 0, extra=["--kill-during-save", "4"])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    work = tmp_path / "crash"
    latest = work / "latest.pth"
    ckpt = torch.load(latest, weights_only=True)  # loads: it is still the previous one
    assert ckpt["mmpar_state"]["iter"] == 3 and os.path.realpath(latest).endswith("iter_3.pth")
    assert not (work / "iter_4.pth").exists()  # the half-written file never got its name
    assert find_latest_checkpoint(str(work)) == str(work / "iter_3.pth")
    # ... and training resumes from it to the same result as an uninterrupted run.
    _run(_cmd(tmp_path, "crash", "epoch", 0, resume=True))
    _assert_same_final_state(reference("epoch"), tmp_path / "crash.pth")


# --------------------------------------------------------------- hook state across resume
class Counter(Hook):
    def __init__(self):
        self.count = 0

    def after_train_iter(self, runner):
        self.count += 1

    def state_dict(self):
        return {"count": self.count}

    def load_state_dict(self, state):
        self.count = state["count"]


def test_hook_states_saved_by_key_and_restored_after_late_registration(
    make_runner, make_loader, tmp_path
):
    runner = make_runner(max_epochs=1)
    c1, c2 = Counter(), Counter()
    runner.register_hook(c1)
    runner.register_hook(c2)
    c2.count = 100
    runner.run([make_loader(8, 4)], [("train", 1)])
    path = runner.save_checkpoint(str(tmp_path / "work"))
    assert torch.load(path, weights_only=True)["mmpar_state"]["hooks"] == {
        "Counter": {"count": 2},
        "Counter#1": {"count": 102},
    }
    resumed = make_runner(max_epochs=2)
    resumed.resume(path)
    n1, n2 = Counter(), Counter()  # registered after resume
    resumed.register_hook(n1)
    resumed.register_hook(n2)
    resumed.run([make_loader(8, 4)], [("train", 1)])
    assert (n1.count, n2.count) == (4, 104)
    assert (resumed.epoch, resumed.iter) == (2, 4)


def test_resume_from_mmcv_checkpoint_uses_meta_and_warns(
    make_runner, make_loader, toy_model, tmp_path, test_logger, caplog
):
    path = tmp_path / "mmcv.pth"
    torch.save(
        {
            "meta": {"epoch": 1, "iter": 2, "mmcv_version": "1.7.0"},
            "state_dict": toy_model.state_dict(),
        },
        path,
    )
    runner = make_runner(max_epochs=2)
    with caplog.at_level(logging.WARNING, logger=test_logger.name):
        runner.resume(str(path))
    assert (runner.epoch, runner.iter) == (1, 2)
    assert "no mmpar_state" in caplog.text
    fresh = make_runner(max_epochs=2, work_dir=str(tmp_path / "empty"))
    assert fresh.resume("auto") is None and fresh.iter == 0  # nothing to resume: start fresh
    runner.save_checkpoint(str(tmp_path / "empty"))
    fresh = make_runner(max_epochs=2, work_dir=str(tmp_path / "empty"))
    assert fresh.resume("auto")["meta"]["iter"] == 2 and (fresh.epoch, fresh.iter) == (1, 2)
