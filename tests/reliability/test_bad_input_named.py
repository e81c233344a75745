"""Bad input to the newer entry points names what is wrong, in one line (issue 36).

Config code that raises, an empty or truncated image file, a resize to no size, and an ops
layer built before the ops are imported. (The launcher's cases are in tests/test_as_mmcv.py,
sharded checkpoints' in tests/test_runner/test_sharded_checkpoint.py.)
"""

import functools
import re

import cv2
import numpy as np
import pytest
from helpers import load_tool

from mmpar import Config
from mmpar.image import imread, imresize, imwrite

_tool = functools.cache(load_tool)

CONFIG_CODE_ERRORS = [
    # (config text, the built-in type, the line, the message after "file:line: ")
    ("import os\nmodel = dict()\nx = os.environ['MMPAR_TEST_UNSET']\n", KeyError, 3,
     "no key 'MMPAR_TEST_UNSET'"),
    ("a = 1\nb = 1 / 0\n", ZeroDivisionError, 2, "division by zero"),
    ("import missing_module_of_a_config\n", ImportError, 1,
     "No module named 'missing_module_of_a_config'"),
]  # fmt: skip


@pytest.mark.parametrize("text, error, line, message", CONFIG_CODE_ERRORS)
def test_config_code_errors_keep_their_type_and_name_file_and_line(
    tmp_path, text, error, line, message
):
    path = tmp_path / "cfg.py"
    path.write_text(text)
    with pytest.raises(error) as info:
        Config.fromfile(str(path))
    assert str(info.value) == f"{path}:{line}: {message} (raised by the config file's own code)"
    # Through a _base_: the line is the base file's.
    child = tmp_path / "child.py"
    child.write_text("_base_ = ['cfg.py']\nc = 2\n")
    with pytest.raises(error, match=f"^{re.escape(str(path))}:{line}: "):
        Config.fromfile(str(child))


def test_train_tool_reports_config_code_errors_in_one_line(tmp_path, capsys):
    path = tmp_path / "cfg.py"
    path.write_text("a = 1\nb = 1 / 0\n")
    with pytest.raises(SystemExit) as info:
        _tool("train").main([str(path), "--work-dir", str(tmp_path / "work")])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        f"error: ZeroDivisionError: {path}:2: division by zero (raised by the config file's own "
        "code)"
    )
    assert not (tmp_path / "work").exists()


@pytest.fixture
def bad_images(tmp_path):
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    good = tmp_path / "good.png"
    imwrite(np.full((8, 8, 3), 7, np.uint8), str(good))
    truncated = tmp_path / "truncated.png"
    truncated.write_bytes(good.read_bytes()[:40])
    return empty, truncated


@pytest.mark.parametrize("backend", ["cv2", "pillow"])
def test_imread_names_an_empty_or_truncated_file(bad_images, backend):
    empty, truncated = bad_images
    with pytest.raises(ValueError, match=f"^{re.escape(str(empty))} is empty \\(0 bytes\\), not"):
        imread(empty, backend=backend)
    with pytest.raises(cv2.error):  # what OpenCV raised for it under mmcv
        imread(empty, backend=backend)
    # OpenCV decodes it to nothing (mmcv returned None); pillow raises its OSError.
    expected = ValueError if backend == "cv2" else OSError
    with pytest.raises(expected, match=f"^{re.escape(str(truncated))} \\(40 bytes\\) "):
        imread(truncated, backend=backend)


@pytest.mark.parametrize("size", [(0, 4), (4, 0), (-1, 3), (3, -2)])
@pytest.mark.parametrize("backend", ["cv2", "pillow"])
def test_imresize_to_no_size_is_one_value_error_naming_it(size, backend):
    with pytest.raises(
        ValueError, match=re.escape(f"size (w, h) = {size}: both must be at least 1")
    ):
        imresize(np.zeros((4, 4, 3), np.uint8), size, backend=backend)


def test_an_ops_layer_before_the_ops_are_imported_says_to_import_them(monkeypatch):
    from mmpar.cnn import CONV_LAYERS, ConvModule

    # As before `import mmpar.ops` (other tests of this session may have imported it).
    monkeypatch.delitem(CONV_LAYERS.module_dict, "DCNv2", raising=False)
    with pytest.raises(KeyError) as info:
        ConvModule(3, 4, 3, conv_cfg=dict(type="DCNv2"))
    assert str(info.value) == (
        "Unrecognized layer type 'DCNv2': it is registered by importing the ops; add `import "
        "mmpar.ops` (or `import mmcv.ops`) before building the model, or custom_imports = "
        "dict(imports=['mmpar.ops']) to the config"
    )
    monkeypatch.undo()
    import mmpar.ops  # noqa: F401

    conv = ConvModule(3, 4, 3, conv_cfg=dict(type="DCNv2")).conv
    assert type(conv).__name__ == "ModulatedDeformConv2dPack"


def test_the_ops_layer_names_are_what_importing_the_ops_registers():
    import mmpar.ops  # noqa: F401
    from mmpar.cnn import CONV_LAYERS, NORM_LAYERS, PLUGIN_LAYERS, UPSAMPLE_LAYERS
    from mmpar.cnn.bricks._cfg import OPS_LAYER_NAMES

    for registry in (CONV_LAYERS, NORM_LAYERS, PLUGIN_LAYERS, UPSAMPLE_LAYERS):
        names = OPS_LAYER_NAMES[registry.name]
        assert names <= set(registry.module_dict), registry.name
        ops_names = {
            n for n, c in registry.module_dict.items() if c.__module__.startswith("mmpar.ops")
        }
        assert ops_names == names, registry.name
