"""``_delete_`` as a dotted key in ``Config.merge_from_dict`` and ``--cfg-options``, as mmcv 1.7.2.

mmcv nests every dotted option into one dict before merging it, so ``P._delete_=True`` replaces
the dict at ``P`` with the options below ``P``. The expected dicts below were written by hand
from that rule and checked against real mmcv 1.7.2 (pure-Python build) on the same inputs.
"""

import argparse

import pytest

from mmpar import Config, DictAction

BACKBONE = {"type": "ResNet", "depth": 50, "norm": {"type": "BN", "eps": 1}}

CASES = [
    pytest.param(
        {"model": {"backbone": BACKBONE, "head": {"k": 1}}},
        {"model.backbone._delete_": True, "model.backbone.type": "MiT", "model.backbone.embed": 32},
        {"model": {"backbone": {"type": "MiT", "embed": 32}, "head": {"k": 1}}},
        id="the-issue-example",
    ),
    pytest.param(
        {"model": {"backbone": BACKBONE}},
        {
            "model.backbone.norm._delete_": True,
            "model.backbone.norm.type": "GN",
            "model.backbone.depth": 18,
        },
        {"model": {"backbone": {"type": "ResNet", "depth": 18, "norm": {"type": "GN"}}}},
        id="deeper-key-others-merge",
    ),
    pytest.param(
        {"model": {"backbone": BACKBONE}},
        {"model.backbone._delete_": False, "model.backbone.depth": 18},
        {"model": {"backbone": {**BACKBONE, "depth": 18}}},
        id="false-merges",
    ),
    pytest.param(
        {"model": {"backbone": BACKBONE}},
        {
            "model.backbone._delete_": True,
            "model.backbone.type": "MiT",
            "model.backbone.norm.type": "LN",
        },
        {"model": {"backbone": {"type": "MiT", "norm": {"type": "LN"}}}},
        id="nested-keys-below-the-deleted-one",
    ),
    pytest.param(
        {"data": {"pipeline": [{"type": "Load"}, {"type": "Resize", "scale": {"w": 1, "h": 2}}]}},
        {"data.pipeline.1.scale._delete_": True, "data.pipeline.1.scale.side": 3},
        {"data": {"pipeline": [{"type": "Load"}, {"type": "Resize", "scale": {"side": 3}}]}},
        id="below-a-list-index",
    ),
    pytest.param(
        {"model": {"backbone": BACKBONE}},
        {"model": {"backbone": {"_delete_": True, "type": "MiT"}}},
        {"model": {"backbone": {"type": "MiT"}}},
        id="nested-form",
    ),
]


@pytest.mark.parametrize(("base", "options", "expected"), CASES)
def test_merge_from_dict_applies_dotted_delete_as_mmcv(base, options, expected):
    cfg = Config(base)
    cfg.merge_from_dict(options)
    assert cfg.to_dict() == expected


def test_cfg_options_command_line_applies_dotted_delete():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg-options", nargs="+", action=DictAction)
    args = parser.parse_args(
        [
            "--cfg-options",
            "model.backbone._delete_=True",
            "model.backbone.type=MiT",
            "model.backbone.embed=32",
        ]
    )
    cfg = Config({"model": {"backbone": BACKBONE}})
    cfg.merge_from_dict(args.cfg_options)
    assert cfg.to_dict() == {"model": {"backbone": {"type": "MiT", "embed": 32}}}


def test_delete_on_a_list_item_replaces_it():
    """mmcv ignores ``_delete_`` on a list item and leaves the key in it (a build error later);
    mmpar replaces the item (documented in docs/migrating_from_mmcv.md)."""
    cfg = Config({"pipeline": [{"type": "Load", "key": 1}, {"type": "Resize", "keep": True}]})
    cfg.merge_from_dict({"pipeline.1._delete_": True, "pipeline.1.type": "Pad"})
    assert cfg.to_dict() == {"pipeline": [{"type": "Load", "key": 1}, {"type": "Pad"}]}


def test_config_is_unchanged_when_an_option_fails():
    cfg = Config({"model": {"backbone": BACKBONE}})
    with pytest.raises(TypeError):
        cfg.merge_from_dict({"model.backbone._delete_": True, "model.backbone.depth.x": 1, 5: 1})
    assert cfg.to_dict() == {"model": {"backbone": BACKBONE}}
