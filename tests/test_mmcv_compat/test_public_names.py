"""Every public module-level name of mmcv 1.7.2 resolves at its path with mmcv served by mmpar.

``mmcv_1_7_2_names.json`` is written by ``scripts/mmcv_names.py`` from mmcv 1.7.2's source
(every module, every public module-level name with its kind, the parameter lists of what a module
defines). ``mmcv_1_7_2_names_missing.json`` lists what does not resolve, each with its reason:
deliberate differences (documented in the migration guide) and known gaps (defects; the test
fails once a gap resolves, so the list stays true). Names mmpar leaves out on purpose
(:data:`mmpar.utils.compat_errors.NOT_PROVIDED`) must fail with an ImportError that points to
the replacement.
"""

from __future__ import annotations

import fnmatch
import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mmpar.utils.compat_errors import NOT_PROVIDED

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NAMES_FILE = HERE / "mmcv_1_7_2_names.json"
DATA = json.loads(NAMES_FILE.read_text())
MODULES: dict[str, dict[str, str]] = DATA["modules"]
SIGNATURES: dict[str, dict] = DATA["signatures"]
MISSING = json.loads((HERE / "mmcv_1_7_2_names_missing.json").read_text())
DELIBERATE: dict[str, str] = MISSING["deliberate"]
GAPS: dict[str, str] = {
    f"{module}.{name}": entry["reason"]
    for module, entry in MISSING["gaps"].items()
    for name in entry["names"]
}


def mmpar_path(mmcv_path: str) -> str:
    """``mmcv.runner.hooks`` -> ``mmpar.runner.hooks``."""
    return "mmpar" + mmcv_path[len("mmcv") :]


def expected_missing(dotted: str) -> str | None:
    """Why ``dotted`` (a module, or ``module.name``) may be absent; None when it must resolve."""
    if dotted.rpartition(".")[2] in NOT_PROVIDED:
        return "not provided"
    for pattern, reason in DELIBERATE.items():
        if fnmatch.fnmatchcase(dotted, pattern):
            return reason
    module = dotted.rpartition(".")[0]
    return GAPS.get(dotted) or GAPS.get(f"{module}.*") or GAPS.get(f"{dotted}.*")


@pytest.fixture(scope="module")
def probed() -> dict:
    """Each listed name's kind as a fresh ``python -m mmpar.as_mmcv`` process sees it."""
    result = subprocess.run(
        [sys.executable, str(HERE / "names_probe.py"), str(NAMES_FILE)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def kind_matches(expected: str, found: str) -> bool:
    """mmcv's kind (``any``: static reading could not tell) against the live object's kind."""
    if found == "missing":
        return False
    if expected in ("any", found):
        return True
    return expected == "value" and found not in ("module", "class")


@pytest.mark.parametrize("mmcv_module", sorted(MODULES))
def test_every_name_resolves_at_its_mmcv_path_with_its_kind(mmcv_module, probed):
    found = probed[mmcv_module]
    if isinstance(found, str):  # the module itself does not import
        assert expected_missing(mmcv_module), f"{mmcv_module}: {found}"
        return
    wrong = {
        name: f"mmcv has a {kind}, mmpar gives {found[name]}"
        for name, kind in MODULES[mmcv_module].items()
        if not kind_matches(kind, found[name]) and not expected_missing(f"{mmcv_module}.{name}")
    }
    assert not wrong, f"{mmcv_module} (served by {mmpar_path(mmcv_module)}): {wrong}"


def test_known_gaps_are_still_gaps(probed):
    """A gap that now resolves must leave the list (mmcv_1_7_2_names_missing.json)."""
    resolved = []
    for dotted in GAPS:
        module, _, name = dotted.rpartition(".")
        found = probed.get(module)
        if name == "*":
            if not isinstance(probed.get(dotted[:-2]), str):
                resolved.append(dotted)
        elif isinstance(found, dict) and found.get(name, "missing") != "missing":
            resolved.append(dotted)
    assert not resolved, f"resolve now, remove from mmcv_1_7_2_names_missing.json: {resolved}"


def test_every_listed_exception_names_a_real_mmcv_name():
    names = {f"{m}.{n}" for m, listed in MODULES.items() for n in listed}
    stale = [g for g in GAPS if g not in names and g[:-2] not in MODULES]
    assert not stale, f"not mmcv 1.7.2 names: {stale}"


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


def _signature_cases() -> list[str]:
    # mmcv.ops' parameter lists are the ops issue's (its tests compare them op by op).
    return sorted(
        q for q in SIGNATURES if not q.startswith(("mmcv.ops.", "mmcv.onnx", "mmcv.tensorrt"))
    )


@pytest.mark.parametrize("qualified", _signature_cases())
def test_signature_accepts_mmcv_calls(qualified):
    mmcv_module, _, name = qualified.rpartition(".")
    if expected_missing(qualified):
        pytest.skip(f"{qualified} does not resolve: {expected_missing(qualified)}")
    obj = getattr(importlib.import_module(mmpar_path(mmcv_module)), name)
    problems = _signature_problems(obj, SIGNATURES[qualified])
    assert not problems, f"{mmpar_path(mmcv_module)}.{name}: {problems}"


def _guide_modules() -> list[str]:
    # One row per module, except mmcv.ops' per-op files (the guide's ops section lists the ops)
    # and the packages mmpar does not provide (the guide's "does not provide" table).
    return sorted(
        m for m in MODULES if not m.startswith(("mmcv.ops.", "mmcv.onnx", "mmcv.tensorrt"))
    )


def test_the_migration_guide_table_covers_every_module():
    guide = REPO / "docs" / "migrating_from_mmcv.md"
    rows = [line for line in guide.read_text().splitlines() if line.startswith("| `mmcv")]
    in_table = {line.split("`")[1] for line in rows}
    listed = _guide_modules()
    missing = sorted(set(listed) - in_table)
    assert not missing, f"not in the guide's table: {missing}"
    for line in rows:
        mmcv_module = line.split("`")[1]
        if mmcv_module in listed:
            assert f"`{mmpar_path(mmcv_module)}`" in line


def test_deliberate_differences_are_in_the_guide():
    guide = (REPO / "docs" / "migrating_from_mmcv.md").read_text()
    absent = [p for p in DELIBERATE if p.rstrip("*").rpartition(".")[2] not in guide]
    assert not absent, f"document these in docs/migrating_from_mmcv.md: {absent}"
