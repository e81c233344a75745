"""mmpar.utils.arg_types and the type check of build_from_cfg / config_error_context."""

from __future__ import annotations

import collections
import os
import re
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Optional, TypeVar, Union

import numpy as np
import pytest
import torch

from mmpar.utils import Config, ConfigArgumentError, Registry, build_from_cfg
from mmpar.utils.arg_types import accepts, argument_annotations, describe, first_mismatch
from mmpar.utils.config_args import config_item_context
from mmpar.utils.registry import ConfigArgumentTypeError, config_error_context

T = TypeVar("T")


@pytest.mark.parametrize(
    "annotation,good,bad",
    [
        (int, [0, -3, np.int64(2)], [1.5, "1", True, None, np.bool_(True)]),
        (float, [1.0, 2, np.float32(0.5), np.int32(3)], ["0.1", True, None, [1.0]]),
        (complex, [1j, 2, 0.5], ["1j", False]),
        (bool, [True, False, np.bool_(False)], [0, 1, "True", None]),
        (str, ["", "x"], [b"x", 1, None]),
        (dict, [{}, Config(dict(a=1))._cfg_dict, collections.OrderedDict()], [[], "a=1"]),
        (list, [[], (1, 2)], ["ab", {1: 2}, 3]),
        (tuple, [(), [1]], ["ab", 3]),
        (type(None), [None], [0, ""]),
        (None, [None], [0]),
        (Optional[int], [None, 3], ["3", 3.0]),
        (Union[int, str], [1, "a"], [1.0, None]),
        (int | None, [None, 1], [1.5]),
        (Union[bool, int], [True, 1], [1.5]),
        (Literal["a", "b"], ["a", "b"], ["c", 1]),
        (Literal[1, 2], [1, 2], [3, "1"]),
        (list[int], [[1, 2], (3,), []], [[1, "2"], ["x"], 5]),
        (typing.List[str], [["a"]], [[1]]),
        (tuple[float, float], [(0.9, 0.999), [1, 2]], [(0.9,), (0.9, "x"), 0.9]),
        (tuple[int, ...], [(1, 2, 3), ()], [(1, 2.5)]),
        (dict[str, int], [{"a": 1}, {}], [{"a": "1"}, {1: 1}, []]),
        (Sequence[int], [[1], (2,), range(3)], [{1}, 1]),
        (Mapping[str, Any], [{"a": object()}], [[("a", 1)]]),
        (Iterable[torch.Tensor], [[torch.zeros(1)], iter([1, 2])], [[1, 2], 3]),
        (Callable, [len, lambda: 1, torch.nn.Linear], [1, "len"]),
        (Callable[[int], int], [abs], [None]),
        (typing.Callable[..., Any], [print], [0]),
        (type[torch.nn.Module], [torch.nn.Linear], [torch.nn.Linear(1, 1), int]),
        (float | torch.Tensor, [0.1, 1, torch.tensor(0.1)], ["fast", None]),
        (torch.Tensor, [torch.zeros(2)], [[0.0, 1.0]]),
        (typing.Annotated[int, "meta"], [1], ["1"]),
        (typing.NewType("Seconds", float), [1.5, 2], ["2"]),
        (os.PathLike, [__import__("pathlib").Path(".")], ["."]),
    ],
)
def test_accepts(annotation, good, bad):
    for value in good:
        assert accepts(annotation, value), (annotation, value)
    for value in bad:
        assert not accepts(annotation, value), (annotation, value)


@pytest.mark.parametrize(
    "annotation", [Any, object, T, "Unresolved", typing.ForwardRef("Nope"), typing.Protocol]
)
def test_what_cannot_be_checked_accepts_anything(annotation):
    for value in (None, 1, "x", [1], object()):
        assert accepts(annotation, value)


def test_iterators_are_not_consumed():
    values = iter([1, 2, 3])
    assert accepts(Iterable[str], values)
    assert list(values) == [1, 2, 3]


def test_describe():
    assert describe(Union[float, torch.Tensor]) == "float | Tensor"
    assert describe(Optional[Sequence[int]]) == "Sequence[int] | None"
    assert describe(tuple[int, ...]) == "tuple[int, ...]"
    assert describe(Literal["a", "b"]) == "'a' | 'b'"
    assert describe(dict[str, list[int]]) == "dict[str, list[int]]"
    assert describe(Callable[[int], int]) == "callable"
    assert describe(type(None)) == "None"


class _Future:
    """Annotations are strings here (``from __future__ import annotations``)."""

    def __init__(self, a: int, b: list[str] | None = None, *args: int, **kwargs: str) -> None:
        pass


def _unresolvable(a: int, b: NotImported = None, c: float | None = None):  # noqa: F821
    return a, b, c


def _none_default(a: int = None, b: str | None = None):  # noqa: RUF013
    return a, b


class _NewOnly:
    def __new__(cls, size: int):
        return super().__new__(cls)


def test_argument_annotations():
    assert argument_annotations(_Future) == {"a": int, "b": Optional[list[str]]}
    # one unresolvable name does not hide the others
    assert argument_annotations(_unresolvable) == {"a": int, "c": Optional[float]}
    assert argument_annotations(_NewOnly) == {"size": int}
    assert argument_annotations(_none_default) == {"a": Optional[int], "b": Optional[str]}
    assert argument_annotations(object) == {}
    assert argument_annotations(len) == {}
    assert argument_annotations(_Future) is argument_annotations(_Future)  # cached


def test_first_mismatch():
    assert first_mismatch(_Future, {"a": 1, "b": ["x"], "other": object()}) is None
    assert first_mismatch(_Future, {"a": 1, "b": [1]}) == ("b", Optional[list[str]])
    # **kwargs takes what the signature does not name: not checked
    assert first_mismatch(_Future, {"kwargs": 1, "args": "x"}) is None
    assert first_mismatch(_unresolvable, {"b": object(), "c": None}) is None


def test_build_from_cfg_names_argument_type_and_value():
    reg = Registry("optimizer")
    reg.register_module(module=torch.optim.SGD)
    params = [torch.nn.Parameter(torch.zeros(1))]
    with pytest.raises(ConfigArgumentTypeError) as info:
        reg.build(dict(type="SGD", lr="fast", params=params))
    assert str(info.value) == "lr must be float | Tensor for SGD, got str 'fast'"
    assert isinstance(info.value, ConfigArgumentError) and isinstance(info.value, TypeError)
    with pytest.raises(ConfigArgumentTypeError) as info:
        with config_error_context("optimizer"):
            reg.build(dict(type="SGD", lr=0.1, momentum=True, params=params))
    assert str(info.value) == "optimizer.momentum must be float for SGD, got bool True"
    assert reg.build(dict(type="SGD", lr=1, momentum=0, params=params)).defaults["lr"] == 1


def test_range_errors_of_constructors_name_the_key():
    reg = Registry("optimizer")
    reg.register_module(module=torch.optim.SGD)
    with pytest.raises(ValueError) as info:
        with config_error_context("optimizer"):
            reg.build(dict(type="SGD", lr=-1.0, params=[torch.nn.Parameter(torch.zeros(1))]))
    assert str(info.value).startswith('optimizer: SGD (registry "optimizer"): Invalid learning')
    assert "\n" not in str(info.value)


def test_item_keys_and_default_args():
    reg = Registry("hook")

    @reg.register_module()
    class Every:
        def __init__(self, interval: int, by_epoch: bool = True) -> None:
            self.interval = interval

    def build_items(items, defaults=None):
        with config_error_context("log_config"):
            for i, item in enumerate(items):
                with config_item_context(f"hooks[{i}]"):
                    reg.build(item, default_args=defaults)

    with pytest.raises(
        ConfigArgumentTypeError,
        match=r"^log_config\.hooks\[1\]\.by_epoch must be bool for Every, got str 'no'$",
    ):
        build_items([dict(type="Every"), dict(type="Every", by_epoch="no")], dict(interval=1))
    # a bad value from default_args belongs to the list's level
    with pytest.raises(ConfigArgumentTypeError) as info:
        build_items([dict(type="Every")], dict(interval="ten"))
    assert str(info.value) == "log_config.interval must be int for Every, got str 'ten'"
    with pytest.raises(ConfigArgumentTypeError, match=r"^custom_hooks\[0\]\.interval must be int"):
        with config_error_context("custom_hooks"), config_item_context("[0]"):
            reg.build(dict(type="Every", interval=2.5))


def test_nested_build_keeps_the_inner_message():
    reg = Registry("model")

    @reg.register_module()
    class Inner:
        def __init__(self, depth: int) -> None:
            pass

    @reg.register_module()
    class Outer:
        def __init__(self, inner: dict) -> None:
            reg.build(inner)

    with pytest.raises(ConfigArgumentTypeError) as info:
        with config_error_context("model"):
            build_from_cfg(dict(type="Outer", inner=dict(type="Inner", depth="50")), reg)
    assert str(info.value) == (
        "model: Outer (registry \"model\"): depth must be int for Inner, got str '50'"
    )


CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs").glob("*.py"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_config_builds_its_runner_without_a_false_type_error(path, tmp_path, request):
    """Loaders, optimizer, runner and every hook of each config pass the type check."""
    from mmpar.apis.train import build_train_runner
    from mmpar.models import build_classifier
    from mmpar.runner.hooks.evaluation import EvalHook
    from mmpar.utils.registry import check_argument_types

    cfg = Config.fromfile(str(path))
    cfg.work_dir = str(tmp_path)
    cfg.data.workers_per_gpu = 0
    distributed = "model_wrapper" in cfg  # FSDP configs: a world of one process
    if distributed:
        request.getfixturevalue("gloo_group")
    model = build_classifier(cfg.model)
    runner, loaders = build_train_runner(model, [list(range(8))], cfg, distributed=distributed)
    assert len(loaders) == 1 and len(runner.hooks) >= 6
    check_argument_types(EvalHook, dict(cfg.evaluation))


def test_config_doc_example_prints_what_its_comments_say(capsys):
    text = (Path(__file__).resolve().parents[2] / "docs" / "config.md").read_text()
    section = text[text.index("## Type checks of config values") :]
    block = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    exec(compile(block, "docs/config.md", "exec"), {})
    expected = [line.split("# ", 1)[1] for line in block.splitlines() if "print(" in line]
    assert capsys.readouterr().out.splitlines() == expected
