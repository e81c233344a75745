"""Run mmcv 1.7.2's own test suite against mmpar and compare with the expected-failure list.

The suite lives outside the repository (``../shared/mmcv-1.7.2-tests/tests``, third-party, never
copied in). It runs as a pytest subprocess in a scratch folder whose ``tests`` links to it (mmcv's
tests read ``tests/data/...`` relative to the working folder and may write files there), with
``-p mmcv_suite_plugin`` switching the zero-edit mode on, so ``import mmcv`` is mmpar.

Commands::

    python scripts/mmcv_suite.py              # run, compare, exit 1 on a difference
    python scripts/mmcv_suite.py --update     # run, rewrite the expected-failure list
    python scripts/mmcv_suite.py --python /path/to/mmcv/venv/bin/python --no-plugin --summary
                                              # real mmcv's counts per test directory

``--update`` keeps the reasons of entries that still fail, drops entries that pass now, and marks
new failures ``"NEW: classify"`` (replace with a reason: needs CUDA, needs the network or a
service, compiled kernel with no CPU form, deliberate difference, or ``mmpar gap: <what>``).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# ../shared beside the repository; MMPAR_MMCV_SUITE names another place (a git worktree's).
SUITE = Path(
    os.environ.get("MMPAR_MMCV_SUITE") or REPO.parent / "shared" / "mmcv-1.7.2-tests" / "tests"
)
PLUGIN_DIR = REPO / "tests" / "test_mmcv_compat"
EXPECTED = PLUGIN_DIR / "mmcv_suite_expected_failures.json"
NEW_MARK = "NEW: classify"
FLAKY = "flaky:"
FAILED = ("failed", "error")


def run_suite(
    python: str = sys.executable,
    plugin: bool = True,
    workers: int = 2,
    timeout: int = 120,
    paths: list[str] | None = None,
    extra: list[str] | None = None,
    keep_report: Path | None = None,
) -> dict[str, str]:
    """Run the suite in a subprocess; return ``{test id: outcome}`` (passed/failed/error/skipped).

    Args:
        python: The interpreter (its environment provides torch and, without the plugin, mmcv).
        plugin: Serve ``mmcv`` from mmpar (this repository); False runs a real mmcv.
        workers: xdist workers inside the subprocess (0: none).
        timeout: Per-test timeout in seconds (network tests would hang otherwise).
        paths: Test paths relative to the suite's parent (default: ``["tests"]``).
        extra: More pytest arguments.
        keep_report: Copy the JUnit XML report (with per-test times) here.
    """
    if not SUITE.is_dir():
        raise FileNotFoundError(f"mmcv's test suite is not at {SUITE}")
    with tempfile.TemporaryDirectory(prefix="mmcv_suite_") as scratch:
        (Path(scratch) / "tests").symlink_to(SUITE)
        report = Path(scratch) / "report.xml"
        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--timeout={timeout}"]
        cmd += ["--rootdir", scratch, "-c", os.devnull, f"--junitxml={report}"]
        if workers:
            cmd += ["-n", str(workers)]
        if plugin:
            cmd += ["-p", "mmcv_suite_plugin"]
        cmd += [*(extra or []), *(paths or ["tests"])]
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg")
        if plugin:
            env["PYTHONPATH"] = os.pathsep.join(
                [str(REPO), str(PLUGIN_DIR), env.get("PYTHONPATH", "")]
            ).rstrip(os.pathsep)
        subprocess.run(cmd, cwd=scratch, env=env, check=False)
        if not report.exists():
            raise RuntimeError(f"pytest wrote no report: {' '.join(cmd)}")
        if keep_report is not None:
            shutil.copyfile(report, keep_report)
        return read_report(report)


def read_report(path: Path) -> dict[str, str]:
    """``{test id: outcome}`` from a JUnit XML report; ids are ``module.Class::test[param]``."""
    outcomes = {}
    for case in ET.parse(path).iter("testcase"):
        # A module that fails to import is one case with no class name: its id is the module.
        classname = case.get("classname")
        test_id = f"{classname}::{case.get('name')}" if classname else case.get("name")
        tags = {child.tag for child in case}
        outcome = "passed"
        for tag, name in (("error", "error"), ("failure", "failed"), ("skipped", "skipped")):
            if tag in tags:
                outcome = name
                break
        # A test that fails and then errors in teardown is reported twice: keep the worst.
        if outcomes.get(test_id) not in FAILED:
            outcomes[test_id] = outcome
    return outcomes


def directory(test_id: str) -> str:
    """``tests.test_ops.test_nms::...`` -> ``tests/test_ops``; top-level files -> ``tests/*.py``."""
    parts = test_id.split("::")[0].split(".")
    # mmcv's test folders hold test_*.py modules; a top-level file's next part is a class.
    in_folder = len(parts) > 2 and parts[2].startswith("test_")
    return f"tests/{parts[1]}" if in_folder else "tests/*.py"


def load_expected(path: Path = EXPECTED) -> dict[str, str]:
    """The committed ``{test id: reason}`` list of tests expected to fail."""
    return json.loads(path.read_text())["expected_failures"] if path.exists() else {}


def compare(outcomes: dict[str, str], expected: dict[str, str]) -> tuple[list[str], list[str]]:
    """Return (unexpected failures, expected failures that passed).

    Entries whose reason starts with ``flaky:`` (wall-clock checks on a loaded machine) count
    neither way.
    """
    unexpected = sorted(t for t, o in outcomes.items() if o in FAILED and t not in expected)
    fixed = sorted(
        t for t, r in expected.items() if outcomes.get(t) == "passed" and not r.startswith(FLAKY)
    )
    return unexpected, fixed


def updated(outcomes: dict[str, str], expected: dict[str, str]) -> dict[str, str]:
    """The list a run implies: old reasons kept, passes dropped, new failures marked."""
    entries = {t: expected.get(t, NEW_MARK) for t, o in outcomes.items() if o in FAILED}
    # Flaky entries stay listed whether or not they failed this time.
    entries.update({t: r for t, r in expected.items() if r.startswith(FLAKY) and t in outcomes})
    return dict(sorted(entries.items()))


def write_expected(entries: dict[str, str], path: Path = EXPECTED) -> None:
    """Write the list (with a note on how it is made)."""
    data = {
        "_comment": "mmcv 1.7.2's tests expected to fail with mmcv served by mmpar, with the "
        "reason; written by `python scripts/mmcv_suite.py --update`, reasons by hand.",
        "expected_failures": entries,
    }
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def summary(outcomes: dict[str, str]) -> dict[str, collections.Counter]:
    """Outcome counts per test directory."""
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for test_id, outcome in outcomes.items():
        counts[directory(test_id)][outcome] += 1
    return dict(sorted(counts.items()))


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="rewrite the expected list")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--no-plugin", action="store_true", help="run a real mmcv")
    parser.add_argument("--summary", action="store_true", help="print counts per directory")
    parser.add_argument("--report", type=Path, help="read this JUnit XML instead of running")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep-report", type=Path, help="copy the JUnit XML report here")
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args(argv)
    if args.report:
        outcomes = read_report(args.report)
    else:
        outcomes = run_suite(
            args.python,
            not args.no_plugin,
            args.workers,
            paths=args.paths or None,
            keep_report=args.keep_report,
        )
    if args.summary:
        print(json.dumps({d: dict(c) for d, c in summary(outcomes).items()}, indent=1))
    if args.no_plugin:
        return 0
    expected = load_expected()
    if args.update:
        write_expected(updated(outcomes, expected))
        print(f"wrote {EXPECTED}")
        return 0
    unexpected, fixed = compare(outcomes, expected)
    for test_id in unexpected:
        print(f"unexpected failure: {test_id}")
    for test_id in fixed:
        print(f"expected to fail, passes now (remove it: --update): {test_id}")
    return 1 if unexpected or fixed else 0


if __name__ == "__main__":
    sys.exit(main())
