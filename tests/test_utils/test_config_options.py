"""merge_from_dict: dotted keys, list indices, typo checks (config/options.py)."""

import pytest

from mmpar import Config
from mmpar.utils import ConfigOptionError


def content(cfg):
    return cfg._cfg_dict.to_dict()


def make_cfg():
    return Config(
        dict(
            model=dict(type="Net", depth=18, head=dict(num_classes=10)),
            data=dict(
                train=dict(pipeline=[dict(type="Load"), dict(type="Flip", p=0.5)]),
            ),
            size=(32, 32),
        )
    )


def test_merge_from_dict_dotted_and_list_indices():
    cfg = make_cfg()
    cfg.merge_from_dict(
        {
            "model.depth": 50,
            "model.head": dict(loss="ce"),
            "data.train.pipeline.1.type": "Foo",
            "data.train.pipeline.0": dict(type="Load2"),
            "new.key": [1, 2],
        }
    )
    assert cfg.model.depth == 50
    assert cfg.model.head == dict(num_classes=10, loss="ce")
    assert cfg.data.train.pipeline[1] == dict(type="Foo", p=0.5)
    assert cfg.data.train.pipeline[0].type == "Load2"
    assert cfg.new.key == [1, 2]
    cfg.merge_from_dict({"model": dict(_delete_=True, type="Other")})
    assert content(cfg)["model"] == {"type": "Other"}


@pytest.mark.parametrize(
    "key,match",
    [
        ("a..b", 'Malformed option key "a..b"'),
        ("", 'Malformed option key ""'),
        ("model.", 'Malformed option key "model."'),
        ("model.depth.x", r'"model\.depth" is a int \(99\), not a dict'),
        ("data.train.pipeline.5.type", r"index 5 is out of range.*list of 2 items"),
        ("data.train.pipeline.first", 'is a list, so "first" must be an index'),
        ("size.0", r'"size" is a tuple'),
        # Two neighbouring letters swapped: difflib alone rates "daat" vs "data" below 0.8.
        ("daat.train.x", r'"daat" does not exist.*Did you mean: data\?'),
    ],
)
def test_merge_from_dict_errors_change_nothing(key, match):
    cfg = make_cfg()
    before = content(cfg)
    with pytest.raises(ConfigOptionError, match=match):
        cfg.merge_from_dict({"model.depth": 99, key: 1})
    assert content(cfg) == before


def test_merge_from_dict_list_keys_disabled():
    cfg = make_cfg()
    with pytest.raises(ConfigOptionError, match="is a list"):
        cfg.merge_from_dict({"data.train.pipeline.1.type": "Foo"}, allow_list_keys=False)
