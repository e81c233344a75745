"""``import mmpar`` carries mmcv 1.x's top-level names, stays light, and delegates to utils."""

import subprocess
import sys

import pytest

import mmpar
import mmpar.utils


@pytest.mark.parametrize("module", ["mmpar", "mmpar.fileio"])
def test_import_is_light(module):
    code = (
        f"import sys, {module}; "
        "print(sorted(m for m in ('torch', 'torchvision', 'tensorboard', 'matplotlib', 'yaml') "
        "if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout.strip() == "[]"


def test_fileio_and_utils_names_are_at_the_top_level():
    import mmpar.fileio as fileio

    for name in [*fileio.__all__, *mmpar.utils.__all__]:
        assert getattr(mmpar, name) is getattr(
            fileio if name in fileio.__all__ else mmpar.utils, name
        )
        assert name in mmpar.__all__
    assert mmpar.load is fileio.load and mmpar.FileClient is fileio.FileClient


def test_unknown_names_are_looked_up_in_utils_lazily(monkeypatch):
    served = object()

    def lazy(name):
        if name == "LazyThing":
            return served
        raise AttributeError(name)

    monkeypatch.setattr(mmpar.utils, "__getattr__", lazy, raising=False)
    assert mmpar.LazyThing is served
    with pytest.raises(AttributeError, match="module 'mmpar' has no attribute 'Nothing'"):
        mmpar.Nothing  # noqa: B018
