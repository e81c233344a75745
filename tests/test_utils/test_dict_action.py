import argparse

import pytest

from mmpar import Config, DictAction


def make_parser(exit_on_error=False):
    parser = argparse.ArgumentParser(prog="train", exit_on_error=exit_on_error)
    parser.add_argument("--cfg-options", nargs="+", action=DictAction)
    return parser


def parse(*items):
    return make_parser().parse_args(["--cfg-options", *items]).cfg_options


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("1", 1),
        ("-3", -3),
        ("0.5", 0.5),
        ("1e-3", 1e-3),
        ("true", True),
        ("True", True),
        ("false", False),
        ("False", False),
        ("None", None),
        ("none", "none"),  # mmcv's rule: only "None" is None (loss.reduction=none is a str)
        ("abc", "abc"),
        ("./work dirs/x", "./work dirs/x"),
        ("", ""),
        ("a,b,c", ["a", "b", "c"]),
        ("1,2.5,x", [1, 2.5, "x"]),
        ("a,", ["a"]),
        ("[(1,2),[a,b],c]", [(1, 2), ["a", "b"], "c"]),
        ("[ (1, 2) , [a, b] , c ]", [(1, 2), ["a", "b"], "c"]),
        ("[]", []),
        ("()", ()),
        ("(1)", (1,)),
        ("(1,)", (1,)),
        ("[1,]", [1]),
        ("[[1,[2,(3,)]]]", [[1, [2, (3,)]]]),
        ("'a,b'", "a,b"),
        ('"007"', "007"),
        ("['x,y',\"[z]\"]", ["x,y", "[z]"]),
        # as mmcv's DictAction: an empty element is '', brackets inside a word belong to it
        ("a,,b", ["a", "", "b"]),
        ("[,]", [""]),
        (",", [""]),
        ("a[1]", "a[1]"),
        ("f(x)y,2", ["f(x)y", 2]),
        # dicts: {k:v} and dict(k=v), inside lists and tuples, nested
        ("{type:TensorboardLoggerHook}", {"type": "TensorboardLoggerHook"}),
        ("{}", {}),
        ("dict()", {}),
        ("{a:1,}", {"a": 1}),
        (
            "[{type:TextLoggerHook},{type:TensorboardLoggerHook, interval: 5}]",
            [{"type": "TextLoggerHook"}, {"type": "TensorboardLoggerHook", "interval": 5}],
        ),
        ("[dict(type=A,n=None)]", [{"type": "A", "n": None}]),
        ("({a:(1,2)},{b:{c:[x]}})", ({"a": (1, 2)}, {"b": {"c": ["x"]}})),
        ("{path:http://h:8/x,'k,2':'v,w'}", {"path": "http://h:8/x", "k,2": "v,w"}),
        ("'{a}'", "{a}"),
    ],
)
def test_values_parsed_without_eval(raw, expected):
    assert parse(f"k={raw}") == {"k": expected}
    value = parse(f"k={raw}")["k"]
    assert type(value) is type(expected)


def test_many_items_and_repeated_option():
    parser = make_parser()
    args = parser.parse_args(
        ["--cfg-options", "model.depth=50", "lr=0.01", "--cfg-options", "data.samples_per_gpu=8"]
    )
    assert args.cfg_options == {"model.depth": 50, "lr": 0.01, "data.samples_per_gpu": 8}
    assert parser.parse_args([]).cfg_options is None


def test_value_may_contain_equals():
    assert parse("work_dir=a=b") == {"work_dir": "a=b"}


@pytest.mark.parametrize(
    "item,match",
    [
        ("k=[1,2", 'missing closing "]"'),
        ("k=[1,2)", 'unexpected "\\)"'),
        ("k=(1,[2)]", 'unexpected "\\)"'),
        ("k=1]", 'unexpected "]"'),
        ("k=]", 'unmatched "]"'),
        ("k={a:1", 'expected "," or "}"'),
        ("k={a}", 'expected ":"'),
        ("k={:1}", "empty dict key"),
        ("k=dict(a:1)", 'expected "="'),
        ("k={a:1]", 'expected "," or "}"'),
        ("k='abc", "missing closing quote"),
        ("k=a[1", "missing closing bracket"),
        ("noequals", "is not of the form KEY=VALUE"),
        ("=1", 'malformed key ""'),
        ("a..b=1", 'malformed key "a..b"'),
        (".a=1", 'malformed key ".a"'),
    ],
)
def test_malformed_items_name_the_option(item, match):
    with pytest.raises(argparse.ArgumentError, match=match) as info:
        parse(item)
    assert "--cfg-options" in str(info.value)
    assert item in str(info.value)


def test_malformed_item_exits_with_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        make_parser(exit_on_error=True).parse_args(["--cfg-options", "k=[1,2"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --cfg-options" in err and "k=[1,2" in err


def test_options_merge_into_config():
    cfg = Config(dict(data=dict(train=dict(pipeline=[dict(type="A"), dict(type="B")])), lr=0.1))
    cfg.merge_from_dict(parse("data.train.pipeline.1.type=Foo", "lr=0.01", "steps=[3,6]"))
    assert cfg._cfg_dict.to_dict() == {
        "data": {"train": {"pipeline": [{"type": "A"}, {"type": "Foo"}]}},
        "lr": 0.01,
        "steps": [3, 6],
    }
