"""Helpers of the end-to-end tests (the ``e2e`` fixture): run tools/*.py as real processes.

pytest runs with ``--import-mode=importlib``, so test modules cannot import this file; they get
the Digits constants and the shared process helpers (tests/helpers) through the ``e2e`` fixture.
"""

import glob
import json
import logging
import os
from types import SimpleNamespace

import pytest
from helpers import REPO, load_tool, run_tool, tool_env, torchrun_args

# A short Digits schedule shared by the tests that need a trained checkpoint. Loader workers
# off and one thread per process: the machine is shared, and the tests check behaviour, not
# speed.
DIGITS_CONFIG = "configs/digits_lenet.py"
DIGITS_EPOCHS = 4
DIGITS_OPTIONS = [
    f"runner.max_epochs={DIGITS_EPOCHS}",
    "optimizer.lr=0.2",  # the full schedule"s 0.05 needs ~10 epochs to leave the plateau
    "data.workers_per_gpu=0",
    "checkpoint_config.interval=1",
    "log_config.interval=10",
]


def json_log(work_dir):
    """The entries (lines with a mode) of the single ``*.log.json`` in ``work_dir``."""
    logs = sorted(glob.glob(os.path.join(work_dir, "*.log.json")))
    assert logs, f"no *.log.json in {work_dir}: {os.listdir(work_dir)}"
    entries = []
    for path in logs:
        with open(path) as f:
            entries += [json.loads(line) for line in f if line.strip()]
    return [e for e in entries if "mode" in e]


def metric_lines(stdout):
    """``name: value`` lines printed by tools/test.py, as a dict."""
    out = {}
    for line in stdout.splitlines():
        name, sep, value = line.partition(": ")
        if sep and name.startswith(("accuracy", "class_accuracy")):
            out[name] = float(value)
    return out


@pytest.fixture(scope="session")
def digits_run(tmp_path_factory):
    """Train the short Digits schedule once; return its work dir."""
    work_dir = tmp_path_factory.mktemp("digits") / "work"
    run_tool(
        "tools/train.py",
        DIGITS_CONFIG,
        "--work-dir",
        work_dir,
        "--cfg-options",
        *DIGITS_OPTIONS,
        timeout=180,
        check=True,
    )
    return work_dir


@pytest.fixture(scope="session")
def e2e():
    """The helpers and constants above, as attributes."""
    return SimpleNamespace(
        REPO=REPO,
        DIGITS_CONFIG=DIGITS_CONFIG,
        DIGITS_EPOCHS=DIGITS_EPOCHS,
        DIGITS_OPTIONS=DIGITS_OPTIONS,
        tool_env=tool_env,
        run_tool=run_tool,
        load_tool=load_tool,
        torchrun_args=torchrun_args,
        json_log=json_log,
        metric_lines=metric_lines,
    )


@pytest.fixture
def restore_mmpar_logger():
    """A tool's main() run in-process sets the "mmpar" logger up; put it back afterwards."""
    from mmpar.utils import logging as mmpar_logging

    logger = logging.getLogger("mmpar")
    before = list(logger.handlers)
    was_initialized = "mmpar" in mmpar_logging.logger_initialized
    yield
    for handler in list(logger.handlers):
        if handler not in before:  # incl. a console handler on capsys's (now closed) stream
            logger.removeHandler(handler)
            handler.close()
    if not was_initialized:
        mmpar_logging.logger_initialized.pop("mmpar", None)
