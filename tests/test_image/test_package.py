"""The mmcv top-level names of image/video/visualization/arraymisc, served lazily by mmpar."""

import importlib
import subprocess
import sys

import pytest

import mmpar

SUBPACKAGES = ["image", "video", "visualization", "arraymisc"]


def test_the_root_table_has_a_row_per_subpackage():
    assert sorted(mmpar._LAZY_SUBPACKAGES) == sorted(SUBPACKAGES)


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_root_table_matches_the_subpackages(name):
    module = importlib.import_module(f"mmpar.{name}")
    # Each subpackage owns its __all__; the root's table (mmpar/_lazy_names.py) repeats it.
    assert sorted(mmpar._LAZY_SUBPACKAGES[name]) == sorted(module.__all__)
    assert len(set(module.__all__)) == len(module.__all__)
    for attr in module.__all__:
        assert getattr(mmpar, attr) is getattr(module, attr)
        assert attr in dir(mmpar)
    assert getattr(mmpar, name) is module


def test_import_mmpar_does_not_load_opencv_numpy_or_torch():
    code = (
        "import sys, mmpar; "
        "print(sorted(m for m in ('cv2', 'numpy', 'torch', 'PIL') if m in sys.modules)); "
        "mmpar.imread; print('cv2' in sys.modules, 'torch' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout.split("\n")[:2] == ["[]", "True False"]


def test_a_bare_import_reaches_the_subpackages_as_attributes():
    # ``mmcv.image.imwrite`` and ``mmcv.visualization.imshow`` after ``import mmcv`` (mmpose).
    code = (
        "import mmpar; print(mmpar.image.imwrite.__module__, mmpar.visualization.imshow.__name__)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout.split() == ["mmpar.image.io", "imshow"]


def test_unknown_names_still_raise_attribute_error():
    with pytest.raises(AttributeError, match="imreadd"):
        mmpar.imreadd  # noqa: B018
