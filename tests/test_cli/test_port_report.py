"""The port tool's report and writes, in process: ops module paths, stand-ins, hidden folders,
all-or-nothing writes, numpy 2 findings, and generated bad trees (hypothesis)."""

from __future__ import annotations

import errno
import importlib
import os
import string
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mmpar.ops
from mmpar.cli import port, port_numpy, staged_write


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _run(capsys, *args) -> tuple[int, list[str]]:
    code = port.main([str(a) for a in args])
    return code, capsys.readouterr().err.splitlines()


def test_ops_module_paths_resolve_the_submodule_and_stand_ins_are_reported(
    tmp_path, capsys, monkeypatch
):
    # Every mmcv.ops name is real now: a stand-in made by the factory stands in for one that
    # a future mmcv name (or a regression) would bring back.
    from mmpar.ops._unsupported import unsupported_function

    nms_module = importlib.import_module("mmpar.ops.nms")  # the attribute `nms` is the function

    stand_in = unsupported_function("nms_match", "something else", "mmpar.ops.nms")
    monkeypatch.setattr(mmpar.ops, "nms_match", stand_in)
    monkeypatch.setattr(nms_module, "nms_match", stand_in)
    lines = [
        "from mmcv.ops.nms import batched_nms",
        "from mmcv.ops.carafe import CARAFEPack",
        "from mmcv.ops.roi_align import roi_align, RoIAlign",
        "from mmcv.ops.roi_pool import roi_pool",
        "from mmcv.ops.deform_conv import DeformConv2d",
        "from mmcv.ops import nms, roi_align as ra",
        "from mmcv.ops.nms import no_such_op",
        "from mmcv.ops import nms_match",
    ]
    _write(tmp_path / "det.py", "\n".join(lines) + "\n")
    code, err = _run(capsys, tmp_path)
    assert code == 0
    report = [line for line in err if "is not provided" in line]
    assert report == [
        "det.py:7: mmcv.ops.nms.no_such_op is not provided by mmpar",
        "det.py:8: mmcv.ops.nms_match is not provided by mmpar (a stand-in that raises "
        "UnsupportedOpError when used; instead: something else)",
    ]


def test_mim_folders_are_ported_and_other_hidden_folders_listed(tmp_path, capsys):
    tool = _write(tmp_path / "proj" / ".mim" / "tools" / "train.py", "import mmcv\n")
    config = _write(tmp_path / "proj" / ".mim" / "configs" / "a.py", "x = 'mmcv.runner.Hook'\n")
    kept = {
        _write(tmp_path / ".git" / "hooks" / "h.py", "import mmcv\n"),
        _write(tmp_path / "proj" / ".venv" / "lib" / "m.py", "import mmcv\n"),
        _write(tmp_path / "__pycache__" / "c.py", "import mmcv\n"),
    }
    code, err = _run(capsys, tmp_path)
    assert code == 0
    assert tool.read_text() == "import mmpar\n"
    assert config.read_text() == "x = 'mmpar.runner.Hook'\n"
    assert all(path.read_text() == "import mmcv\n" for path in kept)
    assert "port_mmcv: left out 2 hidden folders (not project source): .git, proj/.venv" in err
    assert err[-1].startswith(f"port_mmcv: rewrote 2 of 2 Python files under {tmp_path}; ")


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for name in ("a", "b/c", "d"):
        _write(root / f"{name}.py", "import mmcv\nimport numpy as np\nx = np.float_(1)\n")
    return root


def test_a_full_disk_while_staging_leaves_the_tree_untouched(tmp_path, capsys, monkeypatch):
    root = _tree(tmp_path)
    before = _snapshot(root)
    real_fdopen, calls = os.fdopen, []

    def fdopen(fd, *args, **kwargs):
        calls.append(fd)
        if len(calls) == 2:  # the second file's temporary copy
            os.close(fd)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fdopen(fd, *args, **kwargs)

    monkeypatch.setattr(staged_write.os, "fdopen", fdopen)
    code, err = _run(capsys, root)
    assert code == 2
    assert err == [
        "error: OSError: b/c.py: No space left on device; nothing was written: free the space "
        "(or fix the cause) and run again"
    ]
    assert _snapshot(root) == before  # no file changed, no temporary file left


def test_a_failed_rename_puts_the_replaced_files_back(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    before = _snapshot(root)
    real_replace = os.replace

    def replace(src, dst):
        if str(dst).endswith("d.py"):
            raise OSError(errno.EIO, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(staged_write.os, "replace", replace)
    writes = [
        staged_write.Write(p, p.name, b"new\n", p.read_bytes()) for p in sorted(root.rglob("*.py"))
    ]
    with pytest.raises(staged_write.StagedWriteError, match="d.py: .*the tree was restored"):
        staged_write.write_all(writes)
    assert _snapshot(root) == before


def test_a_read_only_subfolder_is_refused_before_anything_is_written(tmp_path, capsys, monkeypatch):
    root = _tree(tmp_path)
    before = _snapshot(root)
    (root / "b").chmod(0o555)
    if os.geteuid() == 0:  # root may write anyway: answer as the kernel does for other users
        real_access = os.access
        monkeypatch.setattr(
            staged_write.os,
            "access",
            lambda path, mode: Path(path) != root / "b" and real_access(path, mode),
        )
    try:
        code, err = _run(capsys, root)
    finally:
        (root / "b").chmod(0o755)
    assert code == 2
    assert err == [
        f"error: OSError: b/c.py: cannot write in {root / 'b'} (permission denied); nothing "
        "was written: make the folder writable (or port a writable copy) and run again"
    ]
    assert _snapshot(root) == before


@pytest.mark.skipif(port_numpy.ruff_binary() is None, reason="ruff is an optional extra")
def test_numpy_2_findings_are_reported_and_fixed_on_request(tmp_path, capsys):
    source = "import numpy as np\n\na = np.float_(1)\nb = np.float(2)\nc = np.sctypes\n"
    path = _write(tmp_path / "m.py", source)
    code, err = _run(capsys, tmp_path, "--dry-run")
    assert code == 0
    assert [line.split(": numpy 2 does not run this: ")[0] for line in err[:-1]] == [
        "m.py:3",
        "m.py:4",
        "m.py:5",
    ]
    assert "`np.float_` will be removed in NumPy 2.0" in err[0] and err[0].endswith("(NPY201)")
    assert err[-1].endswith("3 numpy 2 findings left (--fix rewrites those ruff can)")
    assert path.read_text() == source  # dry run
    code, err = _run(capsys, tmp_path, "--fix")
    assert code == 0
    # np.float_ and np.float have replacements; np.sctypes has none: it stays, reported.
    assert (
        path.read_text()
        == "import numpy as np\n\na = np.float64(1)\nb = float(2)\nc = np.sctypes\n"
    )
    assert err[0].startswith("m.py:5: numpy 2 does not run this: `np.sctypes`")
    assert err[-1].endswith("; fixed 2 numpy 2 findings, 1 numpy 2 findings left")


def test_without_ruff_the_port_runs_and_says_the_check_was_skipped(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(port_numpy, "ruff_binary", lambda: None)
    path = _write(tmp_path / "m.py", "import mmcv\n")
    code, err = _run(capsys, tmp_path)
    assert code == 0 and path.read_text() == "import mmpar\n"
    assert err[-1].endswith("numpy 2 check skipped: " + port_numpy.MISSING_RUFF)
    _write(tmp_path / "m.py", "import mmcv\n")
    code, err = _run(capsys, tmp_path, "--fix")
    assert code == 2 and path.read_text() == "import mmcv\n"
    assert err == [f"error: RuntimeError: --fix needs ruff: {port_numpy.MISSING_RUFF}"]


# Generated bad trees: odd names, empty files, bytes that are not UTF-8 or not Python, folders
# named like modules, missing paths. The tool answers 0 (ported) or 2 with one error line and
# the tree unchanged; it never raises or half-writes.
_NAMES = st.text(string.ascii_letters + string.digits + " ._-é", min_size=1, max_size=8).filter(
    lambda n: n not in (".", "..")
)
_CONTENTS = st.one_of(
    st.sampled_from([b"", b"import mmcv\n", b"from mmcv.ops import nms\n", b"\xff\xfe", b"def (:"]),
    st.binary(max_size=40),
    st.text(max_size=40).map(lambda t: t.encode("utf-8")),
)
_ENTRIES = st.lists(
    st.tuples(st.lists(_NAMES, min_size=1, max_size=3), _CONTENTS, st.booleans()), max_size=6
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries=_ENTRIES, missing=st.booleans())
def test_generated_bad_trees_get_a_port_or_one_error_line(entries, missing, capsys):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "tree")
        root.mkdir()
        for parts, content, as_module in entries:
            path = root.joinpath(*parts[:-1], parts[-1] + (".py" if as_module else ""))
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
            except OSError:  # a name already taken by a folder or a file: not a case
                continue
        before = _snapshot(root)
        code, err = _run(capsys, root / "absent" if missing else root)
        assert code in (0, 2)
        if code == 2:
            assert len(err) == 1 and err[0].startswith("error: "), err
            assert _snapshot(root) == before
        else:
            assert err[-1].startswith("port_mmcv: rewrote ")
