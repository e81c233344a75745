"""tools/train.py holds its work dir: another run (single or torchrun) exits 2, changes nothing."""

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

# Run A pauses in before_run (it holds the lock by then) until the test writes a line to its
# stdin, so the other runs meet a holder for sure, without timing assumptions.
PAUSE_HOOK = """
import sys

from mmpar.runner import HOOKS, Hook


@HOOKS.register_module()
class PauseUntilStdinHook(Hook):
    def before_run(self, runner):
        print("paused, holding the work dir", flush=True)
        sys.stdin.readline()
"""


def _listing(root):
    out = {".": os.stat(root).st_mtime_ns}
    for name in sorted(os.listdir(root)):
        st = os.lstat(os.path.join(root, name))
        out[name] = (st.st_size, st.st_mtime_ns)
    return out


def _error_lines(text):
    return [line for line in text.splitlines() if line.startswith("error:")]


def test_second_run_on_a_held_work_dir_exits_2_and_the_first_finishes(e2e, tmp_path):
    (tmp_path / "pause_hook.py").write_text(PAUSE_HOOK)
    config = tmp_path / "paused.py"
    config.write_text(
        f"_base_ = [{str(e2e.REPO / e2e.DIGITS_CONFIG)!r}]\n"
        "custom_imports = dict(imports=['pause_hook'], allow_failed_imports=False)\n"
        "custom_hooks = [dict(type='PauseUntilStdinHook')]\n"
    )
    work = tmp_path / "work"
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    env = e2e.tool_env(PYTHONPATH=path)
    options = ["--cfg-options", "runner.max_epochs=1", "data.workers_per_gpu=0"]
    first = subprocess.Popen(
        [sys.executable, "tools/train.py", str(config), "--work-dir", str(work), *options],
        cwd=e2e.REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        seen = []
        for line in first.stdout:
            seen.append(line)
            if line.startswith("paused, holding the work dir"):
                break
        assert first.poll() is None, "".join(seen[-30:])
        before = _listing(work)

        second = e2e.run_tool(
            "tools/train.py", e2e.DIGITS_CONFIG, "--work-dir", work, *options, env=env
        )
        assert second.returncode == 2, second.stderr[-3000:]
        (line,) = _error_lines(second.stderr)
        assert line.startswith(f'error: WorkDirLockedError: work_dir "{work}" is in use')
        assert f"pid {first.pid} on host " in line and "choose another --work-dir" in line

        # Under torchrun rank 0 checks the lock and every rank ends with the same line.
        dist = e2e.run_tool(
            *e2e.torchrun_args(
                2,
                "tools/train.py",
                e2e.DIGITS_CONFIG,
                "--launcher",
                "pytorch",
                "--work-dir",
                str(work),
                *options,
            ),
            env=env,
            timeout=180,
        )
        assert dist.returncode != 0
        # Both ranks print the line; their unbuffered writes to the one pipe can interleave
        # (the text, then the newline), so count the text rather than split lines.
        assert dist.stderr.count(line) == 2, dist.stderr[-5000:]
        assert dist.stderr.count("error:") == 2, dist.stderr[-5000:]
        # A rank exits 2; torchrun stops a rank that is still leaving with SIGTERM (-15).
        codes = re.findall(r"exitcode\s*:\s*(-?\d+)", dist.stderr)
        assert "2" in codes and set(codes) <= {"2", "-15"}, dist.stderr[-5000:]
        # tools/dist_train.sh checks before it starts torchrun: the line is the last one.
        env_sh = dict(env, PYTHON=sys.executable)  # torchrun must not start: no port needed
        script = subprocess.run(
            ["bash", "tools/dist_train.sh", e2e.DIGITS_CONFIG, "2", "--work-dir", str(work)]
            + options,
            cwd=e2e.REPO,
            env=env_sh,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert script.returncode == 2, script.stderr[-3000:]
        assert script.stderr.strip().splitlines() == [line], script.stderr[-3000:]
        assert _listing(work) == before  # the refused runs changed nothing

        out, _ = first.communicate("go on\n", timeout=180)
    finally:
        first.kill()
        first.wait(timeout=30)
    assert first.returncode == 0, "".join(seen[-20:]) + out[-3000:]
    assert "Run summary (work_dir: " in out and "  status:          finished" in out
    assert "  trained:         epoch 1 of 1, iteration 45 of 45" in out
    logs = sorted(n for n in os.listdir(work) if ".log" in n)
    assert len(logs) == 2 and re.fullmatch(r"\d{8}_\d{6}_[0-9a-f]{6}\.log", logs[0]), logs
    assert logs[1] == logs[0] + ".json"
    assert "status:          finished" in (work / logs[0]).read_text()  # the summary is logged


def test_failed_checkpoint_write_prints_the_summary_then_the_error(
    e2e, tmp_path, capsys, monkeypatch, restore_mmpar_logger
):
    """In-process: runner.run raises CheckpointSaveError; summary, exit 1, lock released."""
    import mmpar.runner as R
    from mmpar.cli import WorkDirLock

    def disk_full(self, *args, **kwargs):
        raise R.CheckpointSaveError(28, 'could not save checkpoint "epoch_1.pth": disk full')

    work = tmp_path / "work"
    argv = [e2e.DIGITS_CONFIG, "--work-dir", str(work), "--no-validate"]
    argv += ["--cfg-options", "runner.max_epochs=1", "data.workers_per_gpu=0"]
    monkeypatch.setattr(R.EpochBasedRunner, "run", disk_full)
    with pytest.raises(SystemExit) as info:
        e2e.load_tool("train").main(argv)
    out, err = capsys.readouterr()
    assert info.value.code == 1
    assert "  status:          failed: CheckpointSaveError" in out
    assert "  trained:         epoch 0 of 1, iteration 0\n" in out  # failed before it began
    assert "  last checkpoint: none written" in out
    assert _error_lines(err) == [
        'error: CheckpointSaveError: [Errno 28] could not save checkpoint "epoch_1.pth": disk full'
    ]
    with WorkDirLock(str(work)):  # released when main ended
        pass
