"""tools/train.py --cfg-options end to end: typos, config mistakes, loggers and hooks (issue 25).

Each refused command exits with code 2 and one ``error:`` line before it writes anything; a
logger and a custom hook given as dicts on the command line train.
"""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

FAST = ["runner.max_epochs=1", "data.workers_per_gpu=0", "data.samples_per_gpu=256"]


def _error_line(stderr):
    assert "Traceback" not in stderr, stderr[-3000:]
    (line,) = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert stderr.rstrip().endswith(line)
    return line


def test_mistakes_in_options_exit_2_with_one_line_naming_the_key(e2e, tmp_path):
    cases = {
        # item 2: a near miss of an existing sibling, found while merging the options
        "typo": (["data.samples_per_gppu=16"], "error: ConfigOptionKeyError: "),
        # item 3: a hook's required argument missing, and a hook given as a bare name
        "policy": (["lr_config.policy=step"], "error: ConfigArgumentError: lr_config: "),
        "hook": (["custom_hooks=[MyPluginHook]"], "error: ConfigArgumentError: custom_hooks: "),
    }
    procs = {  # concurrently: each stops during its set-up
        name: subprocess.Popen(
            [sys.executable, "tools/train.py", e2e.DIGITS_CONFIG]
            + ["--work-dir", str(tmp_path / name), "--cfg-options", *FAST, *options],
            cwd=e2e.REPO,
            env=e2e.tool_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, (options, _) in cases.items()
    }
    errors = {}
    for name, proc in procs.items():
        _, stderr = proc.communicate(timeout=180)
        assert proc.returncode == 2, stderr[-3000:]
        errors[name] = _error_line(stderr)
        assert errors[name].startswith(cases[name][1]), errors[name]
        assert not (tmp_path / name).exists()  # nothing written
    assert "Did you mean: samples_per_gpu?" in errors["typo"]
    assert "StepLrUpdaterHook" in errors["policy"] and "'step'" in errors["policy"]
    assert "item [0] is str 'MyPluginHook'" in errors["hook"]
    assert "{type:MyPluginHook}" in errors["hook"]


def test_logger_and_custom_hook_as_dicts_train_and_unread_keys_are_named(e2e, tmp_path):
    work_dir = tmp_path / "work"
    proc = e2e.run_tool(
        "tools/train.py",
        e2e.DIGITS_CONFIG,
        "--work-dir",
        work_dir,
        "--cfg-options",
        *FAST,
        "log_config.hooks.1.type=TensorboardLoggerHook",  # one past the end: appended
        "custom_hooks=[{type:EMAHook,momentum:0.01,priority:ABOVE_NORMAL}]",
        "data.my_new_key=3",  # genuinely new (mmcv allows it), but nothing reads it
        "optimizer.nesterov=true",  # new too, and read: SGD takes it
        timeout=180,
        check=True,
    )
    assert list((work_dir / "tf_logs").glob("events.out.tfevents.*"))
    (log,) = work_dir.glob("*.log")
    text = log.read_text()
    assert "(ABOVE_NORMAL) EMAHook" in text
    assert "custom_hooks = [dict(type='EMAHook', momentum=0.01, priority='ABOVE_NORMAL')]" in text
    output = proc.stdout + proc.stderr
    warnings = [line for line in output.splitlines() if "nothing read" in line]
    assert len(warnings) == 1 and "WARNING" in warnings[0], output[-3000:]
    assert (
        warnings[0]
        .split("nothing read while setting the run up: ")[1]
        .startswith("data.my_new_key. A typo?")
    )
