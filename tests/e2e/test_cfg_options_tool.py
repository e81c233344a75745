"""tools/train.py --cfg-options end to end: typos, config mistakes, loggers and hooks (issue 25).

Each refused command exits with code 2 and one ``error:`` line before it writes anything; a
logger and a custom hook given as dicts on the command line train.
"""

import pytest

pytestmark = pytest.mark.slow

FAST = ["runner.max_epochs=1", "data.workers_per_gpu=0", "data.samples_per_gpu=256"]


def _error_line(stderr):
    assert "Traceback" not in stderr, stderr[-3000:]
    (line,) = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert stderr.rstrip().endswith(line)
    return line


def test_hook_missing_its_step_exits_2_with_one_line_naming_the_key(e2e, tmp_path):
    # item 3: StepLrUpdaterHook(step, ..., **kwargs) built without step: not a TypeError
    proc = e2e.run_tool(
        "tools/train.py",
        e2e.DIGITS_CONFIG,
        "--work-dir",
        tmp_path / "work",
        "--cfg-options",
        *FAST,
        "lr_config.policy=step",
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    error = _error_line(proc.stderr)
    assert error.startswith("error: ConfigArgumentError: lr_config: StepLrUpdaterHook"), error
    assert "'step'" in error
    assert not (tmp_path / "work").exists()  # nothing written


@pytest.mark.usefixtures("restore_mmpar_logger")
@pytest.mark.parametrize(
    "options,starts,says",
    [
        # item 2: a near miss of an existing sibling, found while merging the options
        (["data.samples_per_gppu=16"], "ConfigOptionKeyError: ", "Did you mean: samples_per_gpu?"),
        # item 3: a hook given as a bare name; the message shows the dict form
        (
            ["custom_hooks=[MyPluginHook]"],
            "ConfigArgumentError: custom_hooks: item [0] is str 'MyPluginHook'",
            "{type:MyPluginHook}",
        ),
    ],
)
def test_option_mistakes_exit_2_with_one_line(e2e, capsys, tmp_path, options, starts, says):
    work_dir = tmp_path / "work"
    argv = [e2e.DIGITS_CONFIG, "--work-dir", str(work_dir), "--cfg-options", *FAST, *options]
    with pytest.raises(SystemExit) as info:  # in-process: no second interpreter start-up
        e2e.load_tool("train").main(argv)
    stderr = capsys.readouterr().err
    assert info.value.code == 2, stderr[-3000:]
    error = _error_line(stderr)
    assert error.startswith(f"error: {starts}") and says in error, error
    assert not work_dir.exists()


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
