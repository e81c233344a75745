"""pretty_text and dump output (config/writer.py)."""

import pytest

from mmpar import Config
from mmpar.utils import ConfigError
from mmpar.utils.config import ConfigTypeError


def content(cfg):
    return cfg._cfg_dict.to_dict()


def test_pretty_text_is_valid_python():
    long_pipeline = [
        dict(type=f"Transform{i}", size=(224, 224), keys=["img", "gt"]) for i in range(6)
    ]
    cfg = Config(
        dict(
            model=dict(type="Net", depth=18, widths=(16,), head=dict(num_classes=10)),
            pipeline=long_pipeline,
            special={"not-ident": 1, 2: "int key", "class": "keyword"},
            floats=[float("inf"), -float("inf"), 1e-8],
            empty=dict(t=(), l=[], d={}),
            message="quote ' and \" and \\ and \n newline",
        )
    )
    src = cfg.pretty_text
    ns = {}
    exec(compile(src, "<pretty>", "exec"), ns)
    ns.pop("__builtins__")
    assert ns == content(cfg)
    assert max(len(line) for line in src.splitlines()) <= 100
    assert "dict(type=" in src  # readable mmcv style
    nan = Config(dict(x=float("nan"))).pretty_text
    ns = {}
    exec(nan, ns)
    assert ns["x"] != ns["x"]


def test_dump_errors(tmp_path):
    cfg = Config(dict(model=dict(type=int)))
    with pytest.raises(ConfigTypeError, match=r"model\.type \(type\)"):
        cfg.dump(tmp_path / "x.py")
    with pytest.raises(ConfigTypeError, match="JSON"):
        cfg.dump(tmp_path / "x.json")
    with pytest.raises(ConfigTypeError, match=r'unsupported extension "\.txt"'):
        Config(dict(a=1)).dump(tmp_path / "x.txt")
    with pytest.raises(ConfigError, match="not a Python identifier"):
        Config({"a-b": 1}).dump(tmp_path / "y.py")
