"""mmpar's promises hold when a project runs its own tools (issue 35).

mmcls 0.25's and mmdet 2.28's own ``tools/train.py`` (zero-edit, ``python -m mmpar.as_mmcv``)
build a runner and call ``runner.run`` through their own ``apis/train.py``; they register no
PreemptionHook and never heard of a work-dir lock. What they get from mmpar's runner:

- a second, fresh run into a work dir that holds a run's checkpoints is refused: one line, the
  last of the output, exit status non-zero, and the work dir byte-identical;
- SIGTERM (mmcls) and Ctrl-C/SIGINT (mmdet) mid-epoch save a checkpoint, the message names the
  project's own resume option (mmcls: ``--resume-from PATH``, it has no ``--auto-resume``;
  mmdet: ``--auto-resume``), and that option continues to weights bit-identical to an
  uninterrupted run.

Readiness: the tests read the run's output until its logger printed an iteration of the first
epoch (``Epoch [1][3/...]``), so the signal lands in the training loop, mid-epoch (the saved
``inner_iter`` proves it).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
import torch
from helpers import tree_bytes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

MMCLS_TRAIN, MMDET_TRAIN = 256, 32  # images: 32 and 16 iterations in the epoch
SAVED = re.compile(r"saved (\S+) \(latest\.pth\); to resume, run the same command and (.*)$")


def mim(package_dir, package, what):
    return package_dir / package / ".mim" / what


def start_and_signal(cmd, env, cwd, marker, signum, timeout=600):
    """Run ``cmd``; once a line of its output contains ``marker``, send it ``signum``.

    Returns ``(exit code, output lines)`` (stdout and stderr merged, in order).
    """
    proc = subprocess.Popen(
        [str(c) for c in cmd],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    try:
        for line in proc.stdout:  # readiness: the loop is running
            lines.append(line.rstrip("\n"))
            if marker in line:
                proc.send_signal(signum)
                break
        rest, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, lines + rest.splitlines()


def weights(path):
    return torch.load(path, map_location="cpu", weights_only=False)["state_dict"]


def assert_bit_identical(a, b):
    wa, wb = weights(a), weights(b)
    assert wa.keys() == wb.keys()
    different = [k for k in wa if not torch.equal(wa[k], wb[k])]
    assert not different, different[:5]


def saved_checkpoint(lines, said):
    """The checkpoint path and the resume hint of the one save message."""
    (line,) = [line for line in lines if said in line]
    found = SAVED.search(line)
    assert found, line
    return found.group(1), found.group(2)


def mid_epoch(path):
    state = torch.load(path, map_location="cpu", weights_only=False)["mmpar_state"]
    return state["epoch"] == 0 and state["inner_iter"] > 0


@pytest.fixture(scope="module")
def mmcls(downloads, tmp_path_factory, clients):
    """mmcls: an uninterrupted 1-epoch run, a second fresh run into it, a SIGTERM'd run."""
    root = tmp_path_factory.mktemp("mmcls_guarantees")
    clients.write_cifar_digits(root / "data", MMCLS_TRAIN, 50)
    package = downloads["mmcls"]
    config = clients.write_mmcls_config(
        root / "digits.py", mim(package, "mmcls", "configs"), root / "data", epochs=1
    )
    env = clients.client_env(package, clients.HELPERS)

    def train(work_dir, *extra):
        args = [mim(package, "mmcls", "tools") / "train.py", config, "--work-dir", work_dir]
        args += ["--seed", "0", "--deterministic", "--cfg-options", "log_config.interval=1"]
        return [sys.executable, *clients.as_mmcv(*args, *extra)]

    ref, pre = root / "reference", root / "preempted"
    start = time.perf_counter()
    with ThreadPoolExecutor(1) as pool:  # the uninterrupted run beside: one core each
        reference = pool.submit(clients.run, train(ref), env=env, cwd=root, timeout=600)
        code, lines = start_and_signal(train(pre), env, root, "Epoch [1][3/", signal.SIGTERM)
        reference.result()
    before = tree_bytes(ref)
    second = subprocess.run(
        [str(c) for c in train(ref)], env=env, cwd=root, capture_output=True, text=True
    )
    after = tree_bytes(ref)
    checkpoint, hint = saved_checkpoint(lines, "Preempted by SIGTERM")
    resumed = clients.run(train(pre, "--resume-from", checkpoint), env=env, cwd=root)
    print(f"mmcls: 4 runs in {time.perf_counter() - start:.1f} s")
    return SimpleNamespace(
        ref=ref, pre=pre, second=second, before=before, after=after, code=code,
        lines=lines, checkpoint=checkpoint, hint=hint, resumed=resumed,
    )  # fmt: skip


@pytest.fixture(scope="module")
def mmdet(downloads, tmp_path_factory, clients):
    """mmdet RetinaNet: an uninterrupted 1-epoch run and a Ctrl-C'd one, resumed."""
    root = tmp_path_factory.mktemp("mmdet_guarantees")
    digits = clients.coco_digits
    digits.write_coco_digits(root / "coco", "train", MMDET_TRAIN, seed=0)
    digits.write_coco_digits(root / "coco", "val", 4, seed=1)
    package = downloads["mmdet"]
    config = digits.write_mmdet_config(
        root / "retinanet.py", mim(package, "mmdet", "configs"), digits.RETINANET, root / "coco",
        epochs=1,
    )  # fmt: skip
    env = clients.client_env(package)

    def train(work_dir, *extra):
        args = [mim(package, "mmdet", "tools") / "train.py", config, "--work-dir", work_dir]
        return [sys.executable, *clients.as_mmcv(*args, "--seed", "0", "--deterministic", *extra)]

    ref, pre = root / "reference", root / "interrupted"
    start = time.perf_counter()
    with ThreadPoolExecutor(1) as pool:  # the uninterrupted run beside: one core each
        reference = pool.submit(clients.run, train(ref), env=env, cwd=root, timeout=600)
        code, lines = start_and_signal(train(pre), env, root, "Epoch [1][3/", signal.SIGINT)
        reference.result()
    checkpoint, hint = saved_checkpoint(lines, "Interrupted by SIGINT")
    clients.run(train(pre, *hint.removeprefix("pass ").split()), env=env, cwd=root)
    print(f"mmdet: 3 runs in {time.perf_counter() - start:.1f} s")
    return SimpleNamespace(ref=ref, pre=pre, code=code, checkpoint=checkpoint, hint=hint)


def test_mmcls_second_fresh_run_is_refused_with_one_last_line_and_changes_nothing(mmcls):
    second = mmcls.second
    assert second.returncode != 0
    output = (second.stdout + second.stderr).strip().splitlines()
    last = output[-1]
    assert last.startswith(f'error: WorkDirHasOtherRunError: work_dir "{mmcls.ref}" holds ')
    assert "pass --resume-from " in last and "pass --work-dir " in last  # mmcls's options
    assert "--auto-resume" not in last  # mmcls 0.25's tools/train.py has no such option
    assert len(output) == 1, output
    assert mmcls.after == mmcls.before


def test_mmcls_sigterm_mid_epoch_saves_and_its_resume_from_is_bit_identical(mmcls):
    assert mmcls.code == 75, mmcls.lines[-20:]
    assert mid_epoch(mmcls.checkpoint)
    assert mmcls.hint == f"pass --resume-from {mmcls.checkpoint}"
    assert_bit_identical(mmcls.ref / "epoch_1.pth", mmcls.pre / "epoch_1.pth")


def test_mmdet_ctrl_c_mid_epoch_saves_and_its_auto_resume_is_bit_identical(mmdet):
    assert mmdet.code == 130
    assert mid_epoch(mmdet.checkpoint)
    assert mmdet.hint == "pass --auto-resume"  # mmdet 2.28 has both; the shorter way
    assert_bit_identical(mmdet.ref / "epoch_1.pth", mmdet.pre / "epoch_1.pth")
