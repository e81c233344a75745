"""Tracker logger hooks together: each names its missing package; importing the runner loads none.

Each tracker's own behaviour (a real short training read back with the library) is tested in
test_mlflow.py, test_wandb.py and test_dvclive.py.
"""

import os
import subprocess
import sys

import pytest
from helpers import REPO

from mmpar.runner.hooks import HOOKS


@pytest.mark.parametrize(
    "name, package",
    [
        ("MlflowLoggerHook", "mlflow"),
        ("WandbLoggerHook", "wandb"),
        ("DvcliveLoggerHook", "dvclive"),
        ("NeptuneLoggerHook", "neptune"),
        ("ClearMLLoggerHook", "clearml"),
        ("SegmindLoggerHook", "segmind"),
        ("PaviLoggerHook", "pavi"),
    ],
)
def test_missing_tracker_package_fails_at_construction(monkeypatch, name, package):
    monkeypatch.setitem(sys.modules, package, None)  # import of it raises ImportError
    with pytest.raises(ImportError, match=f"pip install {package}") as info:
        HOOKS.build(dict(type=name))
    assert name in str(info.value)


def test_import_runner_loads_no_tracker_library():
    code = (
        "import sys, mmpar.runner, mmpar.runner.hooks.logger.wandb; "
        "print(sorted(m for m in ('mlflow', 'wandb', 'dvclive', 'neptune', 'clearml', "
        "'segmind', 'pavi') if m in sys.modules))"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"
