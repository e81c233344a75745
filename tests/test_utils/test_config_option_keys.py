"""--cfg-options keys: near-miss new keys refused, list appends, added keys and their reads."""

import logging

import pytest

from mmpar import Config
from mmpar.utils.config import ConfigOptionKeyError
from mmpar.utils.config.key_reads import report_unread_keys, stop_watching, watch_keys
from mmpar.utils.config_args import check_argument_names


def _cfg():
    return Config(
        dict(
            data=dict(samples_per_gpu=8, workers_per_gpu=2),
            log_config=dict(interval=10, hooks=[dict(type="TextLoggerHook")]),
            optimizer=dict(type="SGD", lr=0.1),
        )
    )


@pytest.mark.parametrize(
    "key,close",
    [
        ("data.samples_per_gppu", "samples_per_gpu"),
        ("log_config.intervall", "interval"),
        ("log_config.itnerval", "interval"),  # two neighbours swapped
    ],
)
def test_near_miss_new_leaf_is_refused_with_did_you_mean(key, close):
    cfg = _cfg()
    with pytest.raises(ConfigOptionKeyError, match=f"Did you mean: {close}\\?") as info:
        cfg.merge_from_dict({key: 5})
    assert f'Option "{key}"' in str(info.value)
    parent, leaf = key.rsplit(".", 1)
    assert f"{parent}={{{leaf}:...}}" in str(info.value)  # how to add it on purpose
    assert cfg.to_dict() == _cfg().to_dict()  # nothing changed


@pytest.mark.parametrize(
    "key",
    [
        "data.val_samples_per_gpu",
        "data.samples_per_gpu_x2",
        "log_config.save_last",
        "optimizer.lt",  # short keys one edit apart are different words (lr / lt, a / b)
    ],
)
def test_new_leaf_that_adds_or_changes_a_word_is_not_a_typo(key):
    cfg = _cfg()
    cfg.log_config.save_best = "auto"
    cfg.merge_from_dict({key: 1})
    assert cfg.added_option_keys == [key]


def test_new_keys_are_still_added_and_listed():
    cfg = _cfg()
    cfg.merge_from_dict(
        {
            "optimizer.nesterov": True,
            "fp16.loss_scale": 512,
            "data": {"samples_per_gppu": 16, "samples_per_gpu": 4},  # a dict merges unchecked
        }
    )
    assert cfg.optimizer.nesterov is True and cfg.fp16.loss_scale == 512
    assert cfg.data.samples_per_gppu == 16 and cfg.data.samples_per_gpu == 4
    assert cfg.added_option_keys == ["optimizer.nesterov", "fp16", "data.samples_per_gppu"]
    cfg.merge_from_dict({"optimizer.lr": 0.2})  # changes an existing key: nothing added
    assert cfg.added_option_keys == ["optimizer.nesterov", "fp16", "data.samples_per_gppu"]


def test_index_one_past_the_end_appends_further_is_a_clear_error():
    cfg = _cfg()
    cfg.merge_from_dict({"log_config.hooks.1.type": "TensorboardLoggerHook"})
    cfg.merge_from_dict({"log_config.hooks.1.log_dir": "/tmp/tb", "log_config.hooks.2": "X"})
    assert cfg.log_config.hooks == [
        {"type": "TextLoggerHook"},
        {"type": "TensorboardLoggerHook", "log_dir": "/tmp/tb"},
        "X",
    ]
    with pytest.raises(ConfigOptionKeyError, match="index 5 is out of range") as info:
        cfg.merge_from_dict({"log_config.hooks.5.type": "X"})
    assert "index 3 adds an item" in str(info.value)
    assert '"log_config.hooks=[{type:A},{type:B}]"' in str(info.value)


def test_unread_added_keys_are_reported_once(caplog):
    cfg = _cfg()
    cfg.merge_from_dict({"data.my_key": 1, "optimizer.nesterov": True, "fp16.loss_scale": 5})
    watch_keys(cfg.added_option_keys)
    try:
        assert "fp16" in cfg  # a lookup by name is a read
        check_argument_names(dict, dict(cfg.optimizer), "SGD")  # constructor arguments too
        logger = logging.getLogger("test_config_option_keys")
        with caplog.at_level(logging.WARNING, logger=logger.name):
            assert report_unread_keys(logger) == ["data.my_key"]
            assert report_unread_keys(logger) == []  # stopped watching
    finally:
        stop_watching()
    (record,) = caplog.records
    assert "nothing read while setting the run up: data.my_key." in record.getMessage()
