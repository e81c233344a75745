"""Config values of the wrong type, and config files that are not UTF-8, fail before training.

tools/train.py must end with one ``error:`` line that names the config key (or the file), exit
code 2, no traceback, and nothing written into the work dir. In-process cases cover each
place a value is built from; the real-process cases (slow) check the command a user types.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import load_tool

from mmpar import Config
from mmpar.utils.config import ConfigEncodingError, ConfigError

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "configs" / "digits_lenet.py"
LATIN1 = "# a comment in Latin-1: caf\xe9\nx = 1\n".encode("latin-1")


@pytest.fixture(autouse=True)
def _logger_on_this_stderr():
    """In-process runs log through the ``mmpar`` logger: write to this test's stderr."""
    logger = logging.getLogger("mmpar")
    before = list(logger.handlers)
    for handler in before:
        if type(handler) is logging.StreamHandler:
            handler.setStream(sys.stderr)
    yield
    for handler in set(logger.handlers) - set(before):
        logger.removeHandler(handler)
        handler.close()


def _train_main():
    return load_tool("train").main


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _one_error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return errors[0]


# (option, the error line after "error: ")
IN_PROCESS_CASES = [
    (
        "log_config.interval=ten",
        "ConfigArgumentTypeError: log_config.interval must be int for TextLoggerHook, "
        "got str 'ten'",
    ),
    (
        "log_config.hooks.0.by_epoch=yes",
        "ConfigArgumentTypeError: log_config.hooks[0].by_epoch must be bool for TextLoggerHook, "
        "got str 'yes'",
    ),
    (
        "runner.max_epochs=x",
        "ConfigArgumentTypeError: runner.max_epochs must be int | None for EpochBasedRunner, "
        "got str 'x'",
    ),
    (
        "data.samples_per_gpu=8.5",
        "ConfigArgumentTypeError: data.samples_per_gpu must be int for build_dataloader, "
        "got float 8.5",
    ),
    (
        "data.train_dataloader.drop_last=1",
        "ConfigArgumentTypeError: data.train_dataloader.drop_last must be bool for "
        "build_dataloader, got int 1",
    ),
    (
        "evaluation.interval=1.5",
        "ConfigArgumentTypeError: evaluation.interval must be int for EvalHook, got float 1.5",
    ),
    (
        "optimizer.momentum=[0.9]",
        "ConfigArgumentTypeError: optimizer.momentum must be float for SGD, got list [0.9]",
    ),
    # a range the constructor checks: also one line naming the key
    ("optimizer.lr=-1", 'ValueError: optimizer: SGD (registry "optimizer"): Invalid learning'),
]


@pytest.mark.parametrize("option,expected", IN_PROCESS_CASES, ids=[c[0] for c in IN_PROCESS_CASES])
def test_wrong_type_names_the_key_before_training(capsys, tmp_path, option, expected):
    _fails_before_training(capsys, tmp_path, DIGITS, option, expected)


def test_custom_hook_item_is_named(capsys, tmp_path):
    config = tmp_path / "ema.py"
    config.write_text(
        f"_base_ = [{str(DIGITS)!r}]\n"
        "custom_hooks = [dict(type='EMAHook'), dict(type='EMAHook', interval='x')]\n"
    )
    expected = "ConfigArgumentTypeError: custom_hooks[1].interval must be int for EMAHook, got str"
    _fails_before_training(capsys, tmp_path, config, "data.workers_per_gpu=0", expected)


def _fails_before_training(capsys, tmp_path, config, option, expected):
    work = tmp_path / "work"
    capsys.readouterr()
    argv = [str(config), "--work-dir", str(work), "--cfg-options", "data.workers_per_gpu=0"]
    with pytest.raises(SystemExit) as info:
        _train_main()([*argv, option])
    stderr = capsys.readouterr().err
    assert info.value.code == 2, stderr
    assert _one_error_line(stderr).startswith(f"error: {expected}"), stderr
    assert not work.exists() or _files(work) == []


@pytest.mark.parametrize("suffix", [".py", ".json", ".yaml"])
def test_config_file_not_utf8_names_file_and_byte(tmp_path, suffix):
    path = tmp_path / f"latin1{suffix}"
    path.write_bytes(LATIN1)
    with pytest.raises(ConfigEncodingError) as info:
        Config.fromfile(str(path))
    err = info.value
    assert isinstance(err, ConfigError) and isinstance(err, UnicodeDecodeError)
    assert isinstance(err, ValueError) and err.start == LATIN1.index(b"\xe9")
    assert str(err).startswith(f"{path}: not valid UTF-8 at byte {err.start} (line 1, byte 0xe9")
    assert "must be UTF-8" in str(err)


def test_base_file_not_utf8_is_named(tmp_path):
    base = tmp_path / "base.py"
    base.write_bytes(LATIN1)
    child = tmp_path / "child.py"
    child.write_text("_base_ = ['./base.py']\ny = 2\n")
    with pytest.raises(ConfigEncodingError, match=f"^{base}: not valid UTF-8"):
        Config.fromfile(str(child))


@pytest.mark.slow
def test_cli_wrong_types_and_encoding_exit_2_before_training(tmp_path):
    """What a user types: one real tools/train.py process per case, run side by side."""
    bad_file = tmp_path / "latin1.py"
    bad_file.write_bytes(LATIN1)
    cases = {
        "lr": (DIGITS, "optimizer.lr=fast"),
        "hook": (DIGITS, "checkpoint_config.max_keep_ckpts=two"),
        "encoding": (bad_file, "data.workers_per_gpu=0"),
    }
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update(OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", NO_COLOR="1")
    procs = {
        name: subprocess.Popen(
            [sys.executable, "tools/train.py", str(config), "--work-dir", str(tmp_path / name)]
            + ["--cfg-options", "data.workers_per_gpu=0", option],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, (config, option) in cases.items()
    }
    results = {
        name: (proc.communicate(timeout=120), proc.returncode) for name, proc in procs.items()
    }
    errors = {}
    for name, ((stdout, stderr), code) in results.items():
        assert code == 2, (name, stderr)
        errors[name] = _one_error_line(stderr)
        assert "Epoch [" not in stdout + stderr, (name, stdout, stderr)
        work = tmp_path / name
        assert not work.exists() or _files(work) == [], (name, _files(work))
    assert errors["lr"] == (
        "error: ConfigArgumentTypeError: optimizer.lr must be float | Tensor for SGD, "
        "got str 'fast'"
    )
    assert errors["hook"] == (
        "error: ConfigArgumentTypeError: checkpoint_config.max_keep_ckpts must be int for "
        "CheckpointHook, got str 'two'"
    )
    assert errors["encoding"].startswith(
        f"error: ConfigEncodingError: {bad_file}: not valid UTF-8 at byte "
    )
