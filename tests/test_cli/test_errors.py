"""user_errors / environment_errors: one ``error:`` line and the exit code, or the traceback."""

import pytest

from mmpar.cli import UsageError, environment_errors, user_errors
from mmpar.cli.errors import error_type_name
from mmpar.runner.checkpoint import (
    CheckpointSaveError,
    CorruptCheckpointError,
    UnsafeCheckpointError,
)
from mmpar.utils.compat_errors import CheckTypeError, CheckValueError
from mmpar.utils.registry import ConfigArgumentError


def _exit(capsys, manager, err: BaseException):
    """Raise ``err`` inside ``manager``; return (exit code, stderr lines)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        with manager():
            raise err
    assert info.value.__suppress_context__, "the original traceback must not be printed"
    return info.value.code, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize(
    "err",
    [
        FileNotFoundError("checkpoint not found: x.pth"),
        PermissionError("no access"),
        ValueError("bad value"),
        ImportError("no module named foo"),
        UsageError("--workers must be >= 1, got 0"),
        ConfigArgumentError("optimizer: SGD: unexpected keyword argument 'lrr'"),
        CorruptCheckpointError("truncated"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_user_error_is_one_line_and_exit_code_2(capsys, err):
    code, lines = _exit(capsys, user_errors, err)
    assert code == 2
    assert lines == [f"error: {type(err).__name__}: {err}"]


def test_user_error_key_error_loses_its_quotes(capsys):
    code, lines = _exit(capsys, user_errors, KeyError("the config has no 'runner'"))
    assert (code, lines) == (2, ["error: KeyError: the config has no 'runner'"])


def test_unsafe_checkpoint_message_recommends_the_flag(capsys):
    code, lines = _exit(capsys, user_errors, UnsafeCheckpointError("needs unpickling"))
    assert code == 2 and len(lines) == 1
    assert lines[0].startswith("error: UnsafeCheckpointError: needs unpickling On the command")
    assert "--trust-checkpoint" in lines[0]


def test_environment_error_is_one_line_and_exit_code_1(capsys):
    err = CheckpointSaveError(28, "No space left on device")
    code, lines = _exit(capsys, environment_errors, err)
    assert (code, lines) == (1, [f"error: CheckpointSaveError: {err}"])


@pytest.mark.parametrize(
    "manager, err",
    [
        (user_errors, RuntimeError("a bug")),
        (user_errors, CheckpointSaveError("disk full")),  # while running, not bad input
        (environment_errors, ValueError("bad value")),  # while running: a bug, keep the trace
        (environment_errors, KeyError("k")),
    ],
    ids=["user-RuntimeError", "user-CheckpointSaveError", "env-ValueError", "env-KeyError"],
)
def test_other_errors_pass_unchanged(capsys, manager, err):
    with pytest.raises(type(err)) as info:
        with manager():
            raise err
    assert info.value is err
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("manager", [user_errors, environment_errors])
def test_a_block_without_error_runs_through(capsys, manager):
    with manager():
        value = 42
    assert value == 42
    assert capsys.readouterr().err == ""


def test_system_exit_and_interrupt_are_not_swallowed():
    with pytest.raises(SystemExit) as info, user_errors():
        raise SystemExit(3)
    assert info.value.code == 3
    with pytest.raises(KeyboardInterrupt), environment_errors():
        raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("err", "shown"),
    [
        (CheckValueError("interval must be a positive int, got 0"), "ValueError"),
        (ConfigArgumentError("lr_config: missing 'step'"), "ConfigArgumentError"),
    ],
)
def test_compat_error_types_are_shown_as_the_builtin_type(capsys, err, shown):
    # CheckValueError is also an AssertionError for mmcv's except clauses; users read ValueError.
    code, lines = _exit(capsys, user_errors, err)
    assert code == 2
    assert lines == [f"error: {shown}: {err}"]


def test_error_type_name_skips_compat_types():
    assert error_type_name(CheckTypeError("x")) == "TypeError"
    assert error_type_name(KeyError("x")) == "KeyError"
