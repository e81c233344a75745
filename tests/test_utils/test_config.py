"""Config and ConfigDict (config/core.py, config/config_dict.py), on sample configs."""

import copy
import pickle

import pytest

from mmpar import Config, ConfigDict

PY_CFG = """
    model = dict(type='Net', depth=18, widths=(16, 32), head=dict(num_classes=10))
    optimizer = dict(type='SGD', lr=0.1, momentum=0.9)
    workflow = [('train', 1)]
    flag = True
    nothing = None
"""
EXPECTED = {
    "model": {"type": "Net", "depth": 18, "widths": (16, 32), "head": {"num_classes": 10}},
    "optimizer": {"type": "SGD", "lr": 0.1, "momentum": 0.9},
    "workflow": [("train", 1)],
    "flag": True,
    "nothing": None,
}
JSON_CFG = """
    {"model": {"type": "Net", "depth": 18, "widths": [16, 32], "head": {"num_classes": 10}},
     "optimizer": {"type": "SGD", "lr": 0.1, "momentum": 0.9}}
"""
YAML_CFG = """
    model:
      type: Net
      depth: 18
      widths: [16, 32]
      head:
        num_classes: 10
    optimizer: {type: SGD, lr: 0.1, momentum: 0.9}
"""


def content(cfg):
    return cfg._cfg_dict.to_dict()


# --------------------------------------------------------------------- loading the sample configs


def test_fromfile_py(write):
    path = write("cfg.py", PY_CFG)
    cfg = Config.fromfile(str(path))
    assert content(cfg) == EXPECTED
    assert cfg.filename == str(path)
    assert "depth=18" in cfg.text
    assert isinstance(cfg.model, ConfigDict)
    assert cfg.model.head.num_classes == 10


@pytest.mark.parametrize(
    "name,text", [("cfg.json", JSON_CFG), ("cfg.yaml", YAML_CFG), ("c.yml", YAML_CFG)]
)
def test_fromfile_json_yaml(write, name, text):
    cfg = Config.fromfile(write(name, text))
    assert cfg.model.widths == [16, 32]
    assert cfg.optimizer.lr == 0.1
    assert cfg.model.head.num_classes == 10


@pytest.mark.parametrize("key", ["filename", "text", "pretty_text"])
def test_reserved_keys(write, key):
    with pytest.raises(KeyError, match=key):
        Config({key: 1})
    with pytest.raises(KeyError, match=key):
        Config.fromfile(write("cfg.py", f"{key} = 1\n"))
    cfg = Config()
    with pytest.raises(KeyError, match=key):
        cfg[key] = 1


# ------------------------------------------------------------------------ ConfigDict / Config API


def test_configdict_attribute_access_and_errors():
    d = ConfigDict(a=1, b=dict(c=[dict(x=1)]), lr=0.1)
    assert d.b.c[0].x == 1
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        _ = d.missing
    with pytest.raises(AttributeError, match="Did you mean: lr"):
        _ = d.lrr
    with pytest.raises(KeyError, match="missing"):
        _ = d["missing"]
    assert not hasattr(d, "missing")
    d.new = dict(y=2)
    assert isinstance(d.new, ConfigDict) and d.new.y == 2
    assert d.to_dict() == {"a": 1, "b": {"c": [{"x": 1}]}, "lr": 0.1, "new": {"y": 2}}
    assert type(d.to_dict()["b"]["c"][0]) is dict


def test_pickle_and_deepcopy(write):
    cfg = Config.fromfile(write("cfg.py", PY_CFG))
    for other in (pickle.loads(pickle.dumps(cfg)), copy.deepcopy(cfg)):
        assert content(other) == EXPECTED
        assert other.filename == cfg.filename and other.text == cfg.text
        assert other.model.head.num_classes == 10
    deep = copy.deepcopy(cfg)
    deep.model.depth = 101
    assert cfg.model.depth == 18
    shallow = copy.copy(cfg)
    assert shallow.model is cfg.model
    d = ConfigDict(a=dict(b=[1, dict(c=2)]))
    for other in (pickle.loads(pickle.dumps(d)), copy.deepcopy(d)):
        assert other == d and isinstance(other.a, ConfigDict) and other.a.b[1].c == 2


def test_mapping_protocol():
    cfg = Config(dict(a=1, b=dict(c=2)))
    assert cfg.a == cfg["a"] == 1
    cfg.d = dict(e=3)
    cfg["f"] = [dict(g=4)]
    assert cfg.d.e == 3 and cfg.f[0].g == 4
    assert list(cfg) == ["a", "b", "d", "f"]
    assert len(cfg) == 4
    assert "b" in cfg and "zz" not in cfg
    assert cfg.get("zz", 5) == 5
    del cfg["a"]
    assert "a" not in cfg
    with pytest.raises(AttributeError, match="zz"):
        _ = cfg.zz
    with pytest.raises(TypeError, match="cfg_dict must be a dict"):
        Config([1])
    assert "Config (path: None)" in repr(cfg)


# ------------------------------------------------------------------------------- dump round trips


@pytest.mark.parametrize("ext", [".py", ".json", ".yaml", ".yml"])
def test_dump_round_trip(write, tmp_path, ext):
    write("base.py", PY_CFG)
    cfg = Config.fromfile(write("cfg.py", "_base_ = './base.py'\nextra = dict(k=[1, 2.5, 'x'])\n"))
    if ext != ".py":  # JSON and YAML have no tuples
        cfg.model.widths = [16, 32]
        cfg.workflow = [["train", 1]]
    out = tmp_path / f"dumped{ext}"
    assert cfg.dump(out) is None
    assert content(Config.fromfile(out)) == content(cfg)


def test_dump_without_file_uses_original_format(write):
    json_cfg = Config.fromfile(write("cfg.json", JSON_CFG))
    assert json_cfg.dump().lstrip().startswith("{")
    yaml_cfg = Config.fromfile(write("cfg.yaml", YAML_CFG))
    assert "model:" in yaml_cfg.dump()
    py_cfg = Config.fromfile(write("cfg.py", PY_CFG))
    assert py_cfg.dump() == py_cfg.pretty_text
    assert Config.fromstring(py_cfg.dump(), ".py")._cfg_dict.to_dict() == EXPECTED
