"""Every public name of mmcv 1.7.2's training stack imports from the same path under mmpar.

The names and parameter lists in ``mmcv_1_7_2_api.json`` are facts read from mmcv 1.7.2's
source (each module's ``__all__`` or, without one, its top-level public definitions); the
checks below are ours. A name mmpar deliberately leaves out is listed under ``not_provided``
with the reason, and importing it must fail with an ImportError that says what to use instead.
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest

API = json.loads((Path(__file__).with_name("mmcv_1_7_2_api.json")).read_text())
MODULES: dict[str, list[str]] = API["modules"]
NOT_PROVIDED: dict[str, str] = API["not_provided"]
SIGNATURES: dict[str, dict] = API["signatures"]


def mmpar_path(mmcv_path: str) -> str:
    """``mmcv.runner.hooks`` -> ``mmpar.runner.hooks``."""
    return "mmpar" + mmcv_path[len("mmcv") :]


@pytest.mark.parametrize("mmcv_module", sorted(MODULES))
def test_every_public_name_imports_from_the_mmpar_path(mmcv_module):
    module = importlib.import_module(mmpar_path(mmcv_module))
    missing = [
        name
        for name in MODULES[mmcv_module]
        if name not in NOT_PROVIDED and not hasattr(module, name)
    ]
    assert not missing, f"{mmpar_path(mmcv_module)} lacks mmcv's {missing}"


def _where_not_provided() -> list[tuple[str, str]]:
    return [
        (module, name)
        for module, names in sorted(MODULES.items())
        for name in names
        if name in NOT_PROVIDED
    ]


@pytest.mark.parametrize(("mmcv_module", "name"), _where_not_provided())
def test_names_left_out_fail_with_a_pointer_to_the_replacement(mmcv_module, name):
    module = importlib.import_module(mmpar_path(mmcv_module))
    with pytest.raises(ImportError) as info:
        exec(f"from {module.__name__} import {name}", {})
    # The message names the thing and says why (the reason recorded with the data).
    reason_keyword = NOT_PROVIDED[name].split(":")[0].split()[0]
    assert name in str(info.value) and reason_keyword.lower() in str(info.value).lower()


def _accepts_var_keyword(params: list[inspect.Parameter]) -> bool:
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _signature_problems(obj, expected: dict) -> list[str]:
    params = list(inspect.signature(obj).parameters.values())
    by_name = {p.name: p for p in params}
    positional = [
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    has_var_positional = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    problems = []
    for index, name in enumerate(expected["positional"]):
        if name in ("args", "kwargs"):
            continue
        if name not in by_name:
            if not _accepts_var_keyword(params):
                problems.append(f"no parameter {name!r}")
        elif index < len(positional) and positional[index] != name and not has_var_positional:
            problems.append(f"{name!r} is not positional parameter {index}")
        elif index >= len(positional) and not has_var_positional:
            if by_name[name].kind is not inspect.Parameter.KEYWORD_ONLY:
                problems.append(f"{name!r} is not positional parameter {index}")
    for name in expected["keyword_only"]:
        if name not in by_name and not _accepts_var_keyword(params):
            problems.append(f"no keyword parameter {name!r}")
    return problems


@pytest.mark.parametrize("qualified", sorted(SIGNATURES))
def test_signature_accepts_mmcv_calls(qualified):
    mmcv_module, _, name = qualified.rpartition(".")
    if name in NOT_PROVIDED:
        pytest.skip(f"{name} is not provided: {NOT_PROVIDED[name]}")
    obj = getattr(importlib.import_module(mmpar_path(mmcv_module)), name)
    problems = _signature_problems(obj, SIGNATURES[qualified])
    assert not problems, f"{mmpar_path(mmcv_module)}.{name}: {problems}"


def test_the_migration_guide_table_covers_every_module():
    guide = Path(__file__).resolve().parents[2] / "docs" / "migrating_from_mmcv.md"
    rows = [line for line in guide.read_text().splitlines() if line.startswith("| `mmcv")]
    in_table = {line.split("`")[1] for line in rows}
    assert set(MODULES) <= in_table, f"not in the guide's table: {sorted(set(MODULES) - in_table)}"
    for line in rows:
        mmcv_module = line.split("`")[1]
        if mmcv_module in MODULES:
            assert f"`{mmpar_path(mmcv_module)}`" in line
