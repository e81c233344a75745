"""Config files written and read as mmcv 1.7.2 does: JSON dump, syntax errors, pickled configs."""

import pickle

import pytest

import mmpar
from mmpar import Config
from mmpar.utils.config import ConfigDict

CFG = dict(model=dict(type="Net", depth=18), pipeline=[1, (2, 3)], gpu_ids=range(2), name="x")
# What mmcv 1.7.2's Config.dump('x.json') writes: mmcv.dump → json.dump(cfg_dict, f,
# default=set_default): one line, no indent, tuples and ranges as lists, no trailing newline.
MMCV_JSON = (
    '{"model": {"type": "Net", "depth": 18}, "pipeline": [1, [2, 3]], "gpu_ids": [0, 1], '
    '"name": "x"}'
)


def test_dump_json_writes_what_mmcv_writes(tmp_path):
    out = tmp_path / "x.json"
    assert Config(CFG).dump(str(out)) is None
    assert out.read_text() == MMCV_JSON
    # A config read from JSON dumps to the same text when no file is given (mmcv.dump's str).
    assert Config.fromfile(str(out)).dump() == MMCV_JSON


def test_python_syntax_error_has_mmcvs_type_and_prefix(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("a = 1\nb = dict(\n")
    with pytest.raises(SyntaxError) as info:
        Config.fromfile(str(path))
    message = str(info.value)
    assert message.startswith(f"There are syntax errors in config file {path}")
    assert "line 2" in message  # followed by mmpar's own detail


@pytest.mark.parametrize(
    "obj", [Config(CFG, filename="/configs/x.py"), ConfigDict(a=dict(b=[1, (2, 3)]))]
)
def test_pickled_config_loads_with_mmpar_load(tmp_path, obj):
    path = str(tmp_path / "cfg.pkl")
    mmpar.dump(obj, path)
    loaded = mmpar.load(path)
    assert type(loaded) is type(obj)
    if isinstance(obj, Config):
        assert loaded.filename == "/configs/x.py" and loaded.model.depth == 18
        assert loaded.gpu_ids == range(2) and loaded.pipeline == [1, (2, 3)]
    else:
        assert loaded.a.b == [1, (2, 3)]


def test_config_pickled_under_mmcvs_name_loads_as_mmpars(tmp_path):
    data = pickle.dumps(Config(dict(a=1)), protocol=2)  # mmcv.dump's protocol
    data = data.replace(b"mmpar.utils.config\n", b"mmcv.utils.config\n")
    assert b"mmcv.utils.config" in data
    path = tmp_path / "mmcv_cfg.pkl"
    path.write_bytes(data)
    loaded = mmpar.load(str(path))
    assert type(loaded) is Config and loaded.a == 1


@pytest.mark.parametrize(
    "module, name",
    [
        ("mmpar.utils.config.errors", "ConfigError"),
        ("mmpar.utils.config.core", "Config"),  # only the public names pickle writes
        ("mmpar.runner", "Priority"),
        ("os", "system"),
    ],
)
def test_no_other_mmpar_class_is_allowed(tmp_path, module, name):
    path = tmp_path / "evil.pkl"
    path.write_bytes(f"c{module}\n{name}\n.".encode())  # protocol 0: GLOBAL, STOP
    with pytest.raises(pickle.UnpicklingError, match="refusing to unpickle"):
        mmpar.load(str(path))
