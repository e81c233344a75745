"""tools/port_mmcv.py as a subprocess on small trees: each rewrite, dry-run, symlinks, bad input
and the report of names mmpar does not provide."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "port_mmcv.py"


def _port(*args, cwd=None):
    env = {k: v for k, v in os.environ.items() if k != "MMPAR_MMCV_VERSION"}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, str(TOOL), *map(str, args)],
        capture_output=True, text=True, timeout=120, env=env, cwd=cwd,
    )  # fmt: skip


def _write(path: Path, text: str, **kw) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), **kw)
    return path


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


# An mmcv 1.x project in miniature: its package check, a hook, a config and a helper.
ORIGINAL = {
    "proj/__init__.py": """
        import mmcv
        from mmcv import digit_version

        MIN, MAX = '1.4.2', '1.7.0'
        mmcv_version = digit_version(mmcv.__version__)
        assert digit_version(MIN) <= mmcv_version <= digit_version(MAX), \\
            f'MMCV=={mmcv.__version__} is used but incompatible.'
        """,
    "proj/hooks.py": """
        import mmcv
        import mmcv.runner as runner_mod
        from mmcv import __version__, Config
        from mmcv.version import __version__ as v2
        from mmcv.runner import HOOKS, Hook
        from mmcv.parallel import DataContainer as DC  # mmcv.parallel in a comment stays


        @HOOKS.register_module()
        class MarkHook(Hook):
            \"\"\"In mmcv.runner's HOOKS; :obj:`mmcv.Config`, mmcv.readthedocs.io, http://a/mmcv.x\"\"\"

            def before_run(self, runner):
                runner.meta = dict(mmcv=mmcv.version.__version__, box=DC([1]).data, mmcv_v=v2)


        def describe(obj):
            cfg = mmcv.Config(dict(a=1))
            return dict(cfg=type(cfg).__name__, base=runner_mod.BaseRunner.__name__,
                        same=Config is mmcv.Config, attr=getattr(obj, 'mmcv', None),
                        version=__version__, note='install mmcv>=1.4.2 first')
        """,
    "proj/config.py": """
        custom_imports = dict(imports=['mmcv.runner.hooks', 'proj.hooks'])
        optimizer_config = dict(type='mmcv.runner.OptimizerHook')
        custom_hooks = [dict(type="MarkHook")]
        """,
}

PORTED_HOOKS = '''
import mmpar
import mmpar.runner as runner_mod
from mmpar import mmcv_version as __version__, Config
from mmpar.version import mmcv_version as v2
from mmpar.runner import HOOKS, Hook
from mmpar.parallel import DataContainer as DC  # mmcv.parallel in a comment stays


@HOOKS.register_module()
class MarkHook(Hook):
    """In mmpar.runner's HOOKS; :obj:`mmpar.Config`, mmcv.readthedocs.io, http://a/mmcv.x"""

    def before_run(self, runner):
        runner.meta = dict(mmcv=mmpar.mmcv_version, box=DC([1]).data, mmcv_v=v2)


def describe(obj):
    cfg = mmpar.Config(dict(a=1))
    return dict(cfg=type(cfg).__name__, base=runner_mod.BaseRunner.__name__,
                same=Config is mmpar.Config, attr=getattr(obj, 'mmcv', None),
                version=__version__, note='install mmcv>=1.4.2 first')
'''.lstrip("\n")


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    for rel, text in ORIGINAL.items():
        _write(root / rel, text)
    return root


def test_port_rewrites_imports_uses_strings_and_version_checks(project):
    proc = _port(project)
    assert proc.returncode == 0, proc.stderr
    assert "port_mmcv: rewrote 3 of 3 Python files" in proc.stderr
    assert (project / "proj/hooks.py").read_text() == PORTED_HOOKS
    init = (project / "proj/__init__.py").read_text()
    assert "import mmpar\nfrom mmpar import digit_version\n" in init
    assert "mmcv_version = digit_version(mmpar.mmcv_version)" in init
    assert "f'MMCV=={mmpar.mmcv_version} is used but incompatible.'" in init
    config = (project / "proj/config.py").read_text()
    assert "imports=['mmpar.runner.hooks', 'proj.hooks']" in config
    assert "dict(type='mmpar.runner.OptimizerHook')" in config
    # The ported project imports and runs on mmpar (its version check passes), without mmcv.
    probe = (
        "import mmpar, proj, proj.hooks as h\n"
        "from mmpar.utils import Config\n"
        "cfg = Config.fromfile('proj/config.py')\n"
        "print(h.describe(object()), proj.mmcv_version, mmpar.__version__ != '1.7.0')\n"
        "print(cfg.optimizer_config.type, sorted(cfg.custom_imports.imports))\n"
    )
    env = dict(os.environ, PYTHONPATH=f"{project}{os.pathsep}{REPO}")
    env.pop("MMPAR_MMCV_VERSION", None)
    run = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['mmcv'] = None\n" + probe],
        cwd=project, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    described, types = run.stdout.splitlines()
    assert described == (
        "{'cfg': 'Config', 'base': 'BaseRunner', 'same': True, 'attr': None, "
        "'version': '1.7.0', 'note': 'install mmcv>=1.4.2 first'} (1, 7, 0, 0, 0, 0) True"
    )
    assert types == "mmpar.runner.OptimizerHook ['mmpar.runner.hooks', 'proj.hooks']"


def test_dry_run_prints_a_diff_that_applies_and_writes_nothing(project, tmp_path):
    before = _snapshot(project)
    proc = _port(project, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert _snapshot(project) == before
    assert "port_mmcv: would rewrite 3 of 3 Python files" in proc.stderr
    assert proc.stdout.startswith("--- a/proj/__init__.py\n+++ b/proj/__init__.py\n")
    assert "\n-import mmcv.runner as runner_mod\n" in proc.stdout
    assert "\n+import mmpar.runner as runner_mod\n" in proc.stdout
    # The diff is the port: applied to a copy, it gives what the real run writes.
    copy = shutil.copytree(project, tmp_path / "copy")
    subprocess.run(["git", "apply", "-p1"], input=proc.stdout, text=True, cwd=copy, check=True)
    assert _port(project).returncode == 0
    assert (copy / "proj/hooks.py").read_text() == (project / "proj/hooks.py").read_text()


def test_files_keep_their_bytes_mode_line_endings_and_bom(tmp_path):
    root = tmp_path / "tree"
    crlf = root / "crlf.py"
    crlf.parent.mkdir()
    crlf.write_bytes(b"\xef\xbb\xbfimport mmcv\r\nx = mmcv.Config  # caf\xc3\xa9\r\n")
    crlf.chmod(0o750)
    untouched = _write(root / "plain.py", "import os\n")
    untouched_stat = untouched.stat()
    proc = _port(root)
    assert proc.returncode == 0, proc.stderr
    assert crlf.read_bytes() == b"\xef\xbb\xbfimport mmpar\r\nx = mmpar.Config  # caf\xc3\xa9\r\n"
    assert crlf.stat().st_mode & 0o777 == 0o750
    assert untouched.stat().st_mtime_ns == untouched_stat.st_mtime_ns
    assert sorted(p.name for p in root.iterdir()) == ["crlf.py", "plain.py"]  # no temp files


def test_symlinks_out_of_the_tree_are_skipped_and_reported(tmp_path):
    outside = _write(tmp_path / "outside" / "shared.py", "import mmcv\n")
    _write(tmp_path / "outside" / "pkg" / "mod.py", "import mmcv\n")
    root = tmp_path / "tree"
    inside = _write(root / "inside.py", "import mmcv\n")
    (root / "link.py").symlink_to(outside)
    (root / "linked_pkg").symlink_to(tmp_path / "outside" / "pkg", target_is_directory=True)
    (root / "alias.py").symlink_to(inside)  # inside the tree: ported through its target
    proc = _port(root)
    assert proc.returncode == 0, proc.stderr
    assert inside.read_text() == "import mmpar\n"
    assert outside.read_text() == "import mmcv\n"
    assert (tmp_path / "outside" / "pkg" / "mod.py").read_text() == "import mmcv\n"
    assert (root / "link.py").is_symlink() and (root / "alias.py").is_symlink()
    skipped = [line for line in proc.stderr.splitlines() if line.startswith("skipped ")]
    assert skipped == [
        f"skipped {root / 'linked_pkg'}: a symlink to {tmp_path / 'outside' / 'pkg'}, "
        f"outside {root}",
        f"skipped {root / 'link.py'}: a symlink to {outside}, outside {root}",
    ]
    assert "rewrote 1 of 1 Python files" in proc.stderr


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (None, None, "error: FileNotFoundError: no such file or directory: {root}/nope"),
        ("z_latin1.py", "s = 'caf\xe9'\n".encode("latin-1"),
         "error: UnicodeDecodeError: z_latin1.py: not UTF-8 text (byte 0xe9 at offset 8); "
         "convert it to UTF-8 and run again"),
        ("z_broken.py", b"import mmcv\n\ndef f(:\n    pass\n",
         "error: SyntaxError: z_broken.py:3: invalid syntax"),
    ],
)  # fmt: skip
def test_bad_input_gets_one_line_exit_2_and_nothing_written(tmp_path, name, content, expected):
    root = tmp_path / "tree"
    _write(root / "a_fine.py", "import mmcv\n")  # sorted before the bad file: still not written
    if name:
        (root / name).write_bytes(content)
    before = _snapshot(root)
    proc = _port(root / "nope" if name is None else root)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [expected.format(root=root)]
    assert proc.stdout == ""
    assert _snapshot(root) == before


def test_names_mmpar_does_not_provide_are_reported_with_the_replacement(tmp_path):
    root = tmp_path / "tree"
    _write(
        root / "setup_ext.py",
        """
        import mmcv
        import mmcv.onnx
        from mmcv.utils import BuildExtension, Config
        from mmcv.runner import EpochBasedRunner, NoSuchRunner

        ok = mmcv.runner.IterBasedRunner
        gone = mmcv.runner.hooks.NoSuchHook
        hook = dict(type='mmcv.runner.NoSuchHook2')
        """,
    )
    proc = _port(root)
    assert proc.returncode == 0, proc.stderr
    report = [line for line in proc.stderr.splitlines() if "is not provided" in line]
    assert report == [
        "setup_ext.py:2: mmcv.onnx is not provided by mmpar (use torch.onnx)",
        "setup_ext.py:3: mmcv.utils.BuildExtension is not provided by mmpar (mmpar builds no "
        "C++/CUDA extensions; use torch.utils.cpp_extension directly "
        "(from torch.utils.cpp_extension import BuildExtension))",
        "setup_ext.py:4: mmcv.runner.NoSuchRunner is not provided by mmpar",
        "setup_ext.py:7: mmcv.runner.hooks.NoSuchHook is not provided by mmpar",
        "setup_ext.py:8: mmcv.runner.NoSuchHook2 is not provided by mmpar",
    ]
    # Still ported: the report says what is left to do by hand.
    assert "from mmpar.utils import BuildExtension, Config" in (root / "setup_ext.py").read_text()
