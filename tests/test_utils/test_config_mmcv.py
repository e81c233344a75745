"""Config behaves as mmcv 1.7.2's: exception types, mmcv's names, merge_from_dict, add_args."""

import argparse
import copy
import pickle
import sys

import pytest

from mmpar import Config
from mmpar.utils import config as config_module
from mmpar.utils.config import (
    BASE_KEY,
    DELETE_KEY,
    DEPRECATION_KEY,
    RESERVED_KEYS,
    ConfigError,
    ConfigKeyError,
    ConfigOptionError,
    ConfigOptionKeyError,
    ConfigOptionTypeError,
    ConfigOSError,
    ConfigSyntaxError,
    ConfigTypeError,
    DictAction,
    add_args,
)


def test_mmcv_constants():
    assert (BASE_KEY, DELETE_KEY, DEPRECATION_KEY) == ("_base_", "_delete_", "_deprecation_")
    assert RESERVED_KEYS == ["filename", "text", "pretty_text"]


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (ConfigKeyError, KeyError),
        (ConfigTypeError, TypeError),
        (ConfigOSError, OSError),
        (ConfigSyntaxError, SyntaxError),
        (ConfigOptionKeyError, KeyError),
        (ConfigOptionTypeError, TypeError),
    ],
)
def test_error_classes_are_config_errors_and_builtins(cls, builtin):
    err = cls("what is wrong, and where")
    assert isinstance(err, builtin) and isinstance(err, ConfigError)
    assert isinstance(err, ValueError)  # as before: `except ValueError` still catches them
    if cls is not ConfigSyntaxError:
        assert str(err) == "what is wrong, and where"  # no KeyError quotes
    assert issubclass(ConfigOptionKeyError, ConfigOptionError)
    assert issubclass(ConfigOptionTypeError, ConfigOptionError)


def test_duplicate_key_among_bases_is_a_key_error(write):
    write("a.py", "lr = 0.1\n")
    write("b.py", "lr = 0.2\n")
    path = write("cfg.py", "_base_ = ['a.py', 'b.py']\n")
    with pytest.raises(KeyError, match='Duplicate key "lr"') as info:
        Config.fromfile(path)
    assert isinstance(info.value, ConfigKeyError)
    assert str(info.value).startswith('Duplicate key "lr"')


def test_dict_over_non_dict_base_is_a_type_error(write):
    write("base.py", "model = 3\n")
    path = write("cfg.py", "_base_ = 'base.py'\nmodel = dict(depth=1)\n")
    with pytest.raises(TypeError, match="_delete_=True"):
        Config.fromfile(path)
    ok = write("ok.py", "_base_ = 'base.py'\nmodel = dict(_delete_=True, depth=1)\n")
    assert Config.fromfile(ok).model == dict(depth=1)


def test_unknown_base_reference_is_a_key_error(write):
    write("base.py", "a = 1\n")
    path = write("cfg.py", "_base_ = 'base.py'\nb = {{ _base_.nope }}\n")
    with pytest.raises(KeyError, match="not defined"):
        Config.fromfile(path)


def test_file_errors_have_mmcv_types(write, tmp_path):
    with pytest.raises(FileNotFoundError):
        Config.fromfile(tmp_path / "missing.py")
    with pytest.raises(OSError, match="unsupported extension"):
        Config.fromfile(write("cfg.txt", "a = 1\n"))
    with pytest.raises(OSError, match="Unsupported config format"):
        Config.fromstring("a = 1", ".txt")
    with pytest.raises(SyntaxError):
        Config.fromfile(write("bad.py", "a = (\n"))
    with pytest.raises(TypeError, match="mapping at top level"):
        Config.fromfile(write("list.json", "[1, 2]"))
    with pytest.raises(TypeError, match="_base_ must be a path"):
        Config.fromfile(write("base_int.py", "_base_ = 3\n"))


def test_constructor_and_item_errors():
    with pytest.raises(TypeError, match="cfg_dict must be a dict"):
        Config([1, 2])
    with pytest.raises(KeyError, match="reserved"):
        Config(dict(filename=1))
    cfg = Config(dict(a=1))
    with pytest.raises(AttributeError, match="no attribute 'b'"):
        _ = cfg.b
    with pytest.raises(KeyError):
        _ = cfg["b"]


def test_dump_errors_are_type_errors(tmp_path):
    cfg = Config(dict(model=dict(type=int)))
    with pytest.raises(TypeError, match="no literal form"):
        cfg.dump(tmp_path / "out.py")
    with pytest.raises(TypeError, match="JSON"):
        cfg.dump(tmp_path / "out.json")
    with pytest.raises(TypeError, match="unsupported extension"):
        Config(dict(a=1)).dump(tmp_path / "out.toml")


def test_custom_imports_malformed_is_a_type_error(write):
    path = write("cfg.py", "custom_imports = dict(import_list=['os'])\n")
    with pytest.raises(TypeError, match="custom_imports must be dict"):
        Config.fromfile(path)


def test_deprecation_key_warns_with_expected_and_reference(write):
    write(
        "old.py",
        """
        _deprecation_ = dict(expected='new.py', reference='https://example.org/why')
        lr = 0.1
        """,
    )
    path = write("cfg.py", "_base_ = 'old.py'\nepochs = 2\n")
    with pytest.warns(DeprecationWarning) as record:
        cfg = Config.fromfile(path)
    message = str(record[0].message)
    assert "old.py" in message and "new.py" in message and "https://example.org/why" in message
    assert DEPRECATION_KEY not in cfg and cfg.lr == 0.1 and cfg.epochs == 2

    yaml_path = write("old.yaml", "_deprecation_: {expected: other.yaml}\na: 1\n")
    with pytest.warns(DeprecationWarning, match="other.yaml"):
        assert dict(Config.fromfile(yaml_path)) == {"a": 1}
    with pytest.raises(TypeError, match="_deprecation_ must be dict"):
        Config.fromfile(write("bad.py", "_deprecation_ = 'new.py'\n"))
    with pytest.raises(KeyError, match="unknown _deprecation_ keys"):
        Config.fromfile(write("bad2.py", "_deprecation_ = dict(expect='new.py')\n"))


def make_cfg():
    return Config(dict(model=dict(depth=18), pipeline=[dict(type="Load"), dict(type="Flip")]))


def test_merge_from_dict_list_keys_default_on_and_mmcv_error_types():
    cfg = make_cfg()
    cfg.merge_from_dict({"pipeline.1.type": "Crop", "pipeline.0": dict(size=3)})
    assert cfg.pipeline == [dict(type="Load", size=3), dict(type="Crop")]
    cfg.merge_from_dict(dict(pipeline={"0": dict(type="Load2")}))  # mmcv's nested form
    assert cfg.pipeline[0] == dict(type="Load2", size=3)

    cases = [
        ({"pipeline.5.type": "X"}, True, KeyError, "out of range"),
        ({"pipeline.x": 1}, True, TypeError, "must be an index"),
        ({"pipeline.0.type": "X"}, False, TypeError, "not a dict"),
        ({"model.depth.x": 1}, True, TypeError, "not a dict"),
        ({"modle.depth": 50}, True, KeyError, "Did you mean: model"),
    ]
    for options, allow, builtin, match in cases:
        with pytest.raises(builtin, match=match) as info:
            make_cfg().merge_from_dict(options, allow_list_keys=allow)
        assert isinstance(info.value, ConfigOptionError)
    with pytest.raises(KeyError, match="out of range"):
        make_cfg().merge_from_dict(dict(pipeline={"7": dict(type="X")}))
    with pytest.raises(ValueError, match="empty part"):
        make_cfg().merge_from_dict({"model..depth": 1})


def test_dict_action_parses_as_mmcv():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg-options", nargs="+", action=DictAction)
    items = ["a=1", "b=0.5", "c=True", "d=None", "e=x,y", "f=[(1,2),[a,b],c]", "g=(1,)", "h="]
    got = parser.parse_args(["--cfg-options", *items]).cfg_options
    assert got == {
        "a": 1,
        "b": 0.5,
        "c": True,
        "d": None,
        "e": ["x", "y"],
        "f": [(1, 2), ["a", "b"], "c"],
        "g": (1,),
        "h": "",
    }
    assert DictAction._parse_iterable("[a, b, c]") == ["a", "b", "c"]


def test_add_args_and_auto_argparser(write, monkeypatch):
    cfg = dict(name="x", depth=18, lr=0.1, flip=False, steps=[30, 60], model=dict(width=4))
    parser = add_args(argparse.ArgumentParser(), cfg)
    args = parser.parse_args(
        ["--name", "y", "--depth", "50", "--lr", "0.5", "--flip", "--steps", "1", "2"]
        + ["--model.width", "8"]
    )
    assert (args.name, args.depth, args.lr, args.flip, args.steps) == ("y", 50, 0.5, True, [1, 2])
    assert getattr(args, "model.width") == 8
    assert parser.parse_args([]).flip is None  # absent: no value, the config keeps its own
    with pytest.warns(UserWarning, match="no option for opt"):
        add_args(argparse.ArgumentParser(), dict(opt=None))

    path = write("cfg.py", "depth = 18\nmodel = dict(width=4)\n")
    monkeypatch.setattr(sys, "argv", ["train.py", str(path), "--depth", "34"])
    parser, loaded = Config.auto_argparser("demo")
    assert loaded.depth == 18 and loaded.filename == str(path)
    args = parser.parse_args()
    assert args.config == str(path) and args.depth == 34 and getattr(args, "model.width") is None


def test_config_protocols_as_mmcv(write):
    path = write("cfg.json", '{"a": 1, "b": {"c": [1, 2]}}')
    cfg = Config.fromfile(path, use_predefined_variables=False, import_custom_modules=False)
    assert cfg.filename == str(path) and '"a": 1' in cfg.text
    assert len(cfg) == 2 and list(cfg) == ["a", "b"] and cfg["b"].c == [1, 2]
    cfg.d = dict(e=1)
    assert cfg.d.e == 1  # plain dicts become ConfigDicts
    assert cfg.dump().lstrip().startswith("{")  # the format of the file it came from
    assert "b = dict(c=[1, 2])" in cfg.pretty_text
    clone = pickle.loads(pickle.dumps(cfg))
    assert clone.to_dict() == cfg.to_dict() and clone.filename == cfg.filename
    deep = copy.deepcopy(cfg)
    deep.b.c.append(3)
    assert cfg.b.c == [1, 2]
    shallow = copy.copy(cfg)
    assert shallow._cfg_dict is cfg._cfg_dict
    assert Config._file2dict(path)[0] == {"a": 1, "b": {"c": [1, 2]}}


def test_public_path_names():
    for name in ("ConfigKeyError", "ConfigTypeError", "ConfigOSError", "add_args"):
        assert getattr(config_module, name).__module__ == "mmpar.utils.config"
