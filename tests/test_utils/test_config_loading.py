"""Reading config files: formats, _base_ inheritance, predefined variables, bad input (loading)."""

import traceback

import pytest

from mmpar import Config
from mmpar.utils import ConfigError, ConfigSyntaxError
from mmpar.utils.config import ConfigKeyError, ConfigOSError, ConfigTypeError


def content(cfg):
    return cfg._cfg_dict.to_dict()


def test_py_config_collects_only_public_data(write):
    path = write(
        "cfg.py",
        """
        import os.path as osp
        from collections import OrderedDict

        def helper(x):
            return x * 2

        class Local:
            pass

        _private = 3
        lr = helper(0.05)
        name = osp.basename('/a/b.txt')
        """,
    )
    cfg = Config.fromfile(path)
    assert content(cfg) == {"lr": 0.1, "name": "b.txt"}


def test_empty_yaml_and_json(write):
    assert len(Config.fromfile(write("e.yaml", ""))) == 0
    assert len(Config.fromfile(write("e.json", ""))) == 0


def test_base_single_and_list_relative_paths_mixed_formats(write):
    write("_base_/models/net.py", "model = dict(type='Net', depth=18, head=dict(num_classes=10))\n")
    write("_base_/schedule.json", '{"optimizer": {"type": "SGD", "lr": 0.1}, "max_epochs": 5}')
    write("_base_/runtime.yaml", "log_level: INFO\nworkflow: [[train, 1]]\n")
    path = write(
        "configs/exp.py",
        """
        _base_ = ['../_base_/models/net.py', '../_base_/schedule.json', '../_base_/runtime.yaml']
        model = dict(depth=50, head=dict(loss='ce'))
        optimizer = dict(lr=0.01)
        """,
    )
    cfg = Config.fromfile(path)
    assert content(cfg) == {
        "model": {"type": "Net", "depth": 50, "head": {"num_classes": 10, "loss": "ce"}},
        "optimizer": {"type": "SGD", "lr": 0.01},
        "max_epochs": 5,
        "log_level": "INFO",
        "workflow": [["train", 1]],
    }
    assert "_base_" not in cfg
    # text holds the base files' texts before the config's own
    assert cfg.text.index("schedule.json") < cfg.text.index("exp.py")


def test_base_as_string_and_nested_bases(write):
    write("a.yaml", "x: 1\ny: {p: 1, q: 2}\n")
    write("b.json", '{"_base_": "a.yaml", "y": {"q": 3}}')
    cfg = Config.fromfile(write("c.py", "_base_ = 'b.json'\nz = 0\n"))
    assert content(cfg) == {"x": 1, "y": {"p": 1, "q": 3}, "z": 0}


def test_delete_replaces_and_never_leaks(write):
    write("base.py", "model = dict(type='A', a=1, sub=dict(k=1))\nopt = dict(lr=1)\n")
    path = write(
        "cfg.py",
        """
        _base_ = './base.py'
        model = dict(_delete_=True, type='B', b=2)
        extra = dict(_delete_=True, v=dict(_delete_=True, w=1))
        """,
    )
    cfg = Config.fromfile(path)
    assert content(cfg) == {
        "model": {"type": "B", "b": 2},
        "opt": {"lr": 1},
        "extra": {"v": {"w": 1}},
    }


def test_dict_over_non_dict_needs_delete(write):
    write("base.py", "model = 5\n")
    path = write("cfg.py", "_base_ = './base.py'\nmodel = dict(a=1)\n")
    with pytest.raises(ConfigTypeError, match=r'"model".*_delete_=True'):
        Config.fromfile(path)


def test_predefined_variables(write, tmp_path):
    path = write(
        "sub/my_exp.py",
        """
        work_dir = './work_dirs/{{ fileBasenameNoExtension }}'
        here = '{{fileDirname}}'
        base = '{{ fileBasename }}'
        ext = '{{ fileExtname }}'
        """,
    )
    cfg = Config.fromfile(path)
    assert cfg.work_dir == "./work_dirs/my_exp"
    assert cfg.here == str(tmp_path / "sub").replace("\\", "/")
    assert (cfg.base, cfg.ext) == ("my_exp.py", ".py")
    raw = Config.fromfile(path, use_predefined_variables=False)
    assert raw.work_dir == "./work_dirs/{{ fileBasenameNoExtension }}"


def test_base_variable_references_keep_types(write):
    write("base.py", "model = dict(depth=18, widths=[1, 2])\nname = 'net'\nlrs = (0.1, 0.01)\n")
    path = write(
        "cfg.py",
        """
        _base_ = './base.py'
        depth = {{ _base_.model.depth }}
        widths = {{_base_.model.widths}}
        quoted = '{{ _base_.model.depth }}'
        first_lr = {{ _base_.lrs.0 }}
        items = [{{ _base_.name }}, dict(m={{ _base_.model }})]
        tag = 'run_{{ _base_.name }}'
        """,
    )
    cfg = Config.fromfile(path)
    assert cfg.depth == 18
    assert cfg.widths == [1, 2]
    assert cfg.quoted == 18
    assert cfg.first_lr == 0.1
    assert content(cfg)["items"] == ["net", {"m": {"depth": 18, "widths": [1, 2]}}]
    assert cfg.tag == "run_net"


@pytest.mark.parametrize(
    "name,text",
    [
        ("cfg.json", '{"_base_": "base.py", "d": {{ _base_.model.depth }}}'),
        ("cfg.yaml", "_base_: base.py\nd: {{ _base_.model.depth }}\n"),
    ],
)
def test_base_variable_references_in_json_yaml(write, name, text):
    write("base.py", "model = dict(depth=34)\n")
    assert Config.fromfile(write(name, text)).d == 34


def test_base_variable_reference_missing(write):
    write("base.py", "model = dict(depth=34)\n")
    path = write("cfg.py", "_base_ = './base.py'\nd = {{ _base_.model.width }}\n")
    with pytest.raises(ConfigKeyError, match=r"_base_\.model\.width.*not defined") as info:
        Config.fromfile(path)
    assert str(path) in str(info.value)
    no_base = write("nobase.py", "d = {{ _base_.x }}\n")
    with pytest.raises(ConfigKeyError, match="has no _base_"):
        Config.fromfile(no_base)


# -------------------------------------------------------------------------------------- bad input


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.py"
    with pytest.raises(FileNotFoundError, match="nope.py"):
        Config.fromfile(missing)


def test_unsupported_extension(write):
    with pytest.raises(ConfigOSError, match=r'unsupported extension "\.toml"'):
        Config.fromfile(write("cfg.toml", "a = 1\n"))
    write("base.txt", "x")
    with pytest.raises(ConfigOSError, match=r'_base_ file of .*cfg\.py.*"\.txt"'):
        Config.fromfile(write("cfg.py", "_base_ = 'base.txt'\n"))


def test_python_syntax_error_names_file_and_line(write):
    path = write("bad.py", "a = 1\nb = dict(\nc = 3\n")
    with pytest.raises(ConfigSyntaxError) as info:
        Config.fromfile(path)
    err = info.value
    assert isinstance(err, SyntaxError) and isinstance(err, ConfigError)
    assert err.filename == str(path)
    assert err.lineno == 2
    assert f"{path}, line 2" in str(err)


def test_python_runtime_error_traceback_shows_config_file(write):
    path = write("boom.py", "a = 1\nb = undefined_name\n")
    with pytest.raises(NameError) as info:
        Config.fromfile(path)
    assert str(info.value).startswith(f"{path}:2: name 'undefined_name' is not defined")
    # The original error, with its traceback through the config, is the cause.
    frames = traceback.extract_tb(info.value.__cause__.__traceback__)
    assert (str(path), 2) in [(f.filename, f.lineno) for f in frames]


@pytest.mark.parametrize(
    "name,text,line",
    [("bad.json", '{"a": 1,\n "b": }', 2), ("bad.yaml", "a: 1\nb: [1, 2\nc: 3\n", 3)],
)
def test_json_yaml_syntax_errors(write, name, text, line):
    path = write(name, text)
    with pytest.raises(ConfigSyntaxError, match=f"{name}, line {line}"):
        Config.fromfile(path)


def test_top_level_must_be_mapping(write):
    with pytest.raises(ConfigTypeError, match="mapping at top level, got list"):
        Config.fromfile(write("list.yaml", "- 1\n- 2\n"))


def test_duplicate_keys_across_bases(write):
    a = write("a.py", "x = 1\nlr = 0.1\n")
    b = write("b.py", "y = 2\nlr = 0.2\n")
    with pytest.raises(ConfigKeyError, match='Duplicate key "lr"') as info:
        Config.fromfile(write("cfg.py", "_base_ = ['a.py', 'b.py']\n"))
    assert str(a) in str(info.value) and str(b) in str(info.value)


def test_missing_base_names_referencing_config(write):
    path = write("cfg.py", "_base_ = ['../missing/base.py']\n")
    with pytest.raises(FileNotFoundError, match="missing/base.py") as info:
        Config.fromfile(path)
    assert f'referenced by config "{path}"' in str(info.value)


def test_base_loop(write):
    write("a.py", "_base_ = 'b.py'\nx = 1\n")
    write("b.py", "_base_ = 'a.py'\ny = 1\n")
    with pytest.raises(ConfigError, match=r"_base_ loop: .*a\.py -> .*b\.py -> .*a\.py"):
        Config.fromfile(write("a.py", "_base_ = 'b.py'\nx = 1\n"))
    with pytest.raises(ConfigError, match="_base_ loop"):
        Config.fromfile(write("self.py", "_base_ = 'self.py'\n"))


def test_base_must_be_paths(write):
    with pytest.raises(ConfigTypeError, match="_base_ must be a path or a list of paths"):
        Config.fromfile(write("cfg.py", "_base_ = 3\n"))


# ------------------------------------------------------------------------------------- fromstring


def test_fromstring_each_format():
    assert Config.fromstring("a = dict(b=1)\n", ".py").a.b == 1
    assert Config.fromstring('{"a": {"b": 1}}', "json").a.b == 1
    assert Config.fromstring("a: {b: 1}\n", ".yaml").a.b == 1
    with pytest.raises(ConfigOSError, match="Unsupported config format"):
        Config.fromstring("a=1", ".ini")
    with pytest.raises(ConfigSyntaxError, match="config string"):
        Config.fromstring("a = (", ".py")


# ---------------------------------------------------------------- merge_dicts under its mmcv name


def test_mmcv_merge_a_into_b_name():
    merged = Config._merge_a_into_b(dict(a=dict(b=2)), dict(a=dict(b=1, c=3)))
    assert merged == {"a": {"b": 2, "c": 3}}
