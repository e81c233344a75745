"""The zero-edit mode (``python -m mmpar.as_mmcv``, ``import mmpar.as_mmcv``), each case in a
fresh interpreter: what ``import mmcv`` gives, versions, refusals, argv, and torchrun."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "MMPAR_MMCV_VERSION"}
    env.update(PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    env.update(extra)
    return env


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _run(args, cwd, timeout=120, **env):
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env=_env(**env),
    )  # fmt: skip


PROBE = """
    import json, sys
    import mmcv
    import mmcv.runner.hooks
    from mmcv.runner import EpochBasedRunner
    from mmcv.parallel import MMDataParallel
    from mmcv.utils import Registry
    from mmcv import Config, digit_version
    import mmpar, mmpar.runner, mmpar.parallel

    print(json.dumps({
        "mmcv_version": mmcv.__version__,
        "mmcv_version_module": mmcv.version.__version__,
        "version_info": list(mmcv.version.version_info),
        "top_version_info": list(mmcv.version_info),
        "mmpar_version": mmpar.__version__,
        "mmpar_mmcv_version": mmpar.mmcv_version,
        "same_modules": [
            sys.modules["mmcv.runner"] is sys.modules["mmpar.runner"],
            sys.modules["mmcv.runner.hooks"] is mmpar.runner.hooks,
            mmcv.parallel is mmpar.parallel,
            EpochBasedRunner is mmpar.runner.EpochBasedRunner,
            MMDataParallel is mmpar.parallel.MMDataParallel,
            Registry is mmpar.utils.Registry,
            Config is mmpar.Config,
        ],
        "top_is_own_module": mmcv is not mmpar,
        "runner_module_name": EpochBasedRunner.__module__,
        "file": mmcv.__file__,
        "path": list(mmcv.__path__),
        "check": digit_version("1.4.2") <= digit_version(mmcv.__version__)
        <= digit_version("1.7.0"),
        "argv": sys.argv,
        "path0": sys.path[0],
        "name": __name__,
    }))
"""


def _probe(proc):
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_launcher_serves_mmcv_from_mmpar(tmp_path):
    script = _write(tmp_path / "proj" / "tools" / "train.py", PROBE)
    args = ["-m", "mmpar.as_mmcv", "proj/tools/train.py", "cfg.py", "--x", "1"]
    out = _probe(_run(args, tmp_path))
    assert out["same_modules"] == [True] * 7 and out["top_is_own_module"]
    assert out["runner_module_name"].startswith("mmpar.runner")
    assert out["mmcv_version"] == out["mmcv_version_module"] == out["mmpar_mmcv_version"] == "1.7.0"
    assert out["version_info"] == out["top_version_info"] == [1, 7, 0]
    assert out["mmpar_version"] != "1.7.0" and out["check"]
    import mmpar

    assert out["file"] == mmpar.__file__ and out["path"] == list(mmpar.__path__)
    # As `python proj/tools/train.py cfg.py --x 1` would have it.
    assert out["argv"] == ["proj/tools/train.py", "cfg.py", "--x", "1"]
    assert out["path0"] == str(script.parent) and out["name"] == "__main__"


def test_the_reported_version_can_be_overridden(tmp_path):
    _write(tmp_path / "probe.py", PROBE)
    out = _probe(_run(["-m", "mmpar.as_mmcv", "probe.py"], tmp_path, MMPAR_MMCV_VERSION="1.6.2"))
    assert out["mmcv_version"] == out["mmpar_mmcv_version"] == "1.6.2"
    assert out["version_info"] == [1, 6, 2] and out["mmpar_version"] != "1.6.2"
    for value in ("latest", "1.7.x", "banana"):  # one line naming the variable and the form
        bad = _run(["-m", "mmpar.as_mmcv", "probe.py"], tmp_path, MMPAR_MMCV_VERSION=value)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
        assert f"MMPAR_MMCV_VERSION={value!r} is not a version number" in bad.stderr
        assert (
            "numbers separated by dots" in bad.stderr and "MMPAR_MMCV_VERSION=1.7.0" in bad.stderr
        )


def test_one_line_import_switches_the_mode_on(tmp_path):
    _write(tmp_path / "train.py", "import mmpar.as_mmcv  # noqa\n" + textwrap.dedent(PROBE))
    out = _probe(_run(["train.py", "a"], tmp_path))
    assert out["same_modules"] == [True] * 7 and out["mmcv_version"] == "1.7.0"
    assert out["argv"] == ["train.py", "a"]


# Probes that need nothing but the default mode share one ``python -m mmpar.as_mmcv``
# interpreter (each start costs seconds): their imports do not affect each other's results.
MISSING_NAMES_PROBE = """
        import json
        import mmcv

        # Subpackages are attributes of a bare `import mmcv` (mmcv imported some in __init__).
        out = {"lazy": mmcv.engine.__name__, "hasattr_onnx": hasattr(mmcv, "onnx")}
        try:
            import mmcv.onnx
        except ModuleNotFoundError as err:
            out["onnx"] = [err.name, str(err)]
        try:  # the fallback pattern of downstream projects
            from mmcv.onnx import register_extra_symbolics
        except ImportError:
            register_extra_symbolics = None
        out["fallback"] = register_extra_symbolics is None
        try:
            import mmcv.no_such_module
        except ModuleNotFoundError as err:
            out["missing"] = [err.name, str(err)]
        try:
            from mmcv.runner import NoSuchName
        except ImportError as err:
            out["name"] = str(err)
        try:
            mmcv.no_such_attribute
        except AttributeError as err:
            out["attr"] = str(err)
        print(json.dumps(out))
        """
OPS_PROBE = """
        import json, sys
        from mmcv.cnn import build_conv_layer
        from mmcv.ops import RoIAlign, batched_nms, nms
        import mmcv.ops.nms
        import mmpar.ops

        print(json.dumps({
            "same": [sys.modules["mmcv.ops"] is mmpar.ops, RoIAlign is mmpar.ops.RoIAlign,
                     sys.modules["mmcv.ops.nms"].batched_nms is batched_nms],
            # Importing the submodule leaves the function of the same name on the package.
            "nms_is_function": [mmcv.ops.nms is nms, mmpar.ops.nms is nms],
            "dcn": type(build_conv_layer(dict(type="DCN"), 2, 2, 3)).__name__,
        }))
        """
PICKLES_PROBE = """
        import json, pickle
        from mmcv.parallel import DataContainer
        from mmcv.runner import LogBuffer

        old = pickle.loads(open("mmcv.pkl", "rb").read())
        buf = LogBuffer()
        buf.update({"loss": 1.0})
        new = pickle.loads(pickle.dumps(buf))
        print(json.dumps([type(old) is DataContainer, old.data, old.cpu_only,
                          type(new).__module__, dict(new.val_history)]))
        """
RUN_PROBES = """
    import contextlib, io, json, sys, traceback

    results = {}
    for name in sys.argv[1:]:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                code = compile(open(name + ".py").read(), name + ".py", "exec")
                exec(code, {"__name__": "__main__"})
            results[name] = json.loads(out.getvalue().strip().splitlines()[-1])
        except Exception:
            results[name] = {"probe failed": traceback.format_exc()}
    print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def default_mode_probes(tmp_path_factory):
    """``{probe name: what it printed}`` from one run of the probes below under the launcher."""
    from mmpar.parallel import DataContainer

    tmp = tmp_path_factory.mktemp("probes")
    # A pickle written by real mmcv names its class mmcv.parallel.data_container.DataContainer.
    mmcv_pickle = pickle.dumps(DataContainer([1, 2], cpu_only=True), protocol=2).replace(
        b"mmpar.parallel.data_container", b"mmcv.parallel.data_container"
    )
    assert b"mmcv.parallel.data_container" in mmcv_pickle
    (tmp / "mmcv.pkl").write_bytes(mmcv_pickle)
    probes = {"missing_names": MISSING_NAMES_PROBE, "ops": OPS_PROBE, "pickles": PICKLES_PROBE}
    for name, source in probes.items():
        _write(tmp / f"{name}.py", source)
    _write(tmp / "run_probes.py", RUN_PROBES)
    results = _probe(_run(["-m", "mmpar.as_mmcv", "run_probes.py", *probes], tmp))
    for name, result in results.items():
        assert "probe failed" not in result, f"{name}: {result}"
    return results


def test_missing_names_fail_as_imports_do(default_mode_probes):
    out = default_mode_probes["missing_names"]
    assert out["lazy"] == "mmpar.engine" and out["hasattr_onnx"] is False
    assert out["onnx"][0] == "mmcv.onnx"
    assert "mmcv.onnx is not provided by mmpar (use torch.onnx)" in out["onnx"][1]
    assert out["fallback"]
    assert out["missing"][0] == "mmcv.no_such_module"
    assert "mmpar.no_such_module" in out["missing"][1]
    assert "cannot import name 'NoSuchName'" in out["name"]
    assert "no_such_attribute" in out["attr"]


def test_mmcv_ops_is_served_by_mmpar_ops(default_mode_probes):
    # mmdet's pattern: ops imported by name, and a registered DCN built from a config.
    out = default_mode_probes["ops"]
    assert out == {"same": [True] * 3, "nms_is_function": [True, True], "dcn": "DeformConv2dPack"}


def _fake_real_mmcv(root: Path) -> Path:
    return _write(root / "site" / "mmcv" / "__init__.py", "__version__ = '1.7.2'\nREAL = True\n")


def test_an_already_imported_real_mmcv_stops_the_mode(tmp_path):
    fake = _fake_real_mmcv(tmp_path)
    _write(tmp_path / "train.py", "import mmcv\nimport mmpar.as_mmcv\n")
    proc = _run(["train.py"], tmp_path, PYTHONPATH=f"{REPO}{os.pathsep}{tmp_path / 'site'}")
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: a real mmcv is already imported (")
    assert str(fake) in last and "import mmpar.as_mmcv` the first import" in last


def test_a_merely_installed_real_mmcv_is_not_used(tmp_path):
    _fake_real_mmcv(tmp_path)
    _write(tmp_path / "probe.py", "import mmcv\nprint(hasattr(mmcv, 'REAL'), mmcv.__file__)\n")
    proc = _run(
        ["-m", "mmpar.as_mmcv", "probe.py"], tmp_path,
        PYTHONPATH=f"{tmp_path / 'site'}{os.pathsep}{REPO}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    import mmpar

    assert proc.stdout.split() == ["False", mmpar.__file__]


def test_module_mode_runs_a_package_module_with_its_arguments(tmp_path):
    _write(tmp_path / "pkg" / "__init__.py", "")
    _write(
        tmp_path / "pkg" / "cli.py",
        """
        import json, sys
        import mmcv.runner

        print(json.dumps([__name__, sys.argv[1:], mmcv.__version__, sys.argv[0]]))
        """,
    )
    proc = _run(["-m", "mmpar.as_mmcv", "-m", "pkg.cli", "--epochs", "2"], tmp_path)
    name, args, version, argv0 = _probe(proc)
    assert (name, args, version) == ("__main__", ["--epochs", "2"], "1.7.0")
    assert argv0 == str(tmp_path / "pkg" / "cli.py")


def test_bad_command_lines_get_one_line_and_exit_2(tmp_path):
    (tmp_path / "no_main").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    for args, expected in (
        ([], "usage: python -m mmpar.as_mmcv script.py"),
        (["missing.py"], "error: FileNotFoundError: no such script: missing.py"),
        (["-m"], "error: -m needs a module name"),
        (["-m", "some_missing_module"], "error: ModuleNotFoundError: No module named "
         "'some_missing_module': check the name, and that its package is installed"),
        (["-m", "some_missing.sub"], "error: ModuleNotFoundError: No module named 'some_missing'"),
        (["-m", "pkg"], "error: ModuleNotFoundError: No module named 'pkg.__main__': pkg is a "
         "package and cannot be run directly; give one of its modules (-m pkg.<module>)"),
        (["no_main"], "error: FileNotFoundError: can't find '__main__' module in 'no_main': "
         "give a script"),
    ):  # fmt: skip
        proc = _run(["-m", "mmpar.as_mmcv", *args], tmp_path)
        assert proc.returncode == 2 and proc.stderr.startswith(expected), (args, proc.stderr)
        if len(args) > 1 or args[:1] == ["no_main"]:  # (the usage text has more lines)
            assert proc.stderr.count("\n") == 1, proc.stderr


def test_pickles_name_one_class_under_both_spellings(default_mode_probes):
    # The probe unpickles mmcv.pkl, written by the fixture as real mmcv names the class.
    out = default_mode_probes["pickles"]
    assert out == [True, [1, 2], True, "mmpar.runner.log_buffer", {"loss": [1.0]}]


@pytest.mark.slow
def test_torchrun_starts_every_worker_through_the_launcher(tmp_path):
    _write(
        tmp_path / "dist_probe.py",
        """
        import json, sys
        import torch
        import torch.distributed as dist
        from mmcv.runner import get_dist_info, init_dist
        import mmcv

        init_dist("pytorch", backend="gloo")
        rank, world_size = get_dist_info()
        total = torch.tensor([rank + 1.0])
        dist.all_reduce(total)
        out = dict(rank=rank, world_size=world_size, total=total.item(),
                   version=mmcv.__version__, argv=sys.argv[1:])
        with open(f"rank{rank}.json", "w") as f:
            json.dump(out, f)
        dist.destroy_process_group()
        """,
    )
    cmd = [
        "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_port=0",
        "--rdzv_backend=c10d", "--rdzv_endpoint=localhost:0",
        "-m", "mmpar.as_mmcv", "dist_probe.py", "--launcher", "pytorch",
    ]  # fmt: skip
    proc = _run(cmd, tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for rank in range(2):
        out = json.loads((tmp_path / f"rank{rank}.json").read_text())
        assert out == dict(
            rank=rank, world_size=2, total=3.0, version="1.7.0", argv=["--launcher", "pytorch"]
        )


def test_spawn_and_forkserver_children_start_with_the_mode_on(tmp_path):
    # Such children import the parent's __main__ again before anything else; the launcher's
    # __main__ names mmpar.as_mmcv, so they go through it. (Forked children inherit the mode.)
    _write(
        tmp_path / "spawner.py",
        """
        import json, sys
        import multiprocessing as mp
        import mmcv
        import mmcv.fileio

        import mmpar.fileio


        class Payload:  # pickled by reference as __main__.Payload
            pass


        def child(queue, payload):
            queue.put([mmcv.__version__, mmcv.fileio is mmpar.fileio,
                       type(payload).__name__, __name__])


        if __name__ == "__main__":
            out = {}
            for method in ("spawn", "forkserver"):
                ctx = mp.get_context(method)
                queue = ctx.Queue()
                proc = ctx.Process(target=child, args=(queue, Payload()))
                proc.start()
                out[method] = queue.get(timeout=60)
                proc.join()
            print(json.dumps(out))
        """,
    )
    out = _probe(_run(["-m", "mmpar.as_mmcv", "spawner.py"], tmp_path))
    expected = ["1.7.0", True, "Payload", "__mp_main__"]
    assert out == {"spawn": expected, "forkserver": expected}


BAD_LAUNCHES = """
    import contextlib, io, os, re, tempfile
    from hypothesis import given, settings, strategies as st
    import mmpar.as_mmcv as launcher
    from mmpar import version

    NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,8}(\\.[a-z_][a-z0-9_]{0,6}){0,2}", fullmatch=True)
    ONCE = settings(max_examples=30, deadline=2000, derandomize=True)
    counts = {}

    def one_line_exit_2(argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = launcher.main(argv)
        lines = err.getvalue().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (argv, lines)
        return lines[0]

    @ONCE
    @given(name=NAME, rest=st.lists(st.text(max_size=5), max_size=2))
    def missing_module(name, rest):  # prefixed: never a module that exists
        line = one_line_exit_2(["-m", "zz_missing_" + name, *rest])
        assert "ModuleNotFoundError: No module named 'zz_missing_" in line
        counts["-m missing"] = counts.get("-m missing", 0) + 1

    @ONCE
    @given(files=st.lists(st.sampled_from(["a.py", "main.py", "__init__.py", "x.txt"]),
                          unique=True, max_size=3))
    def folder_without_main(files):
        with tempfile.TemporaryDirectory() as folder:
            for f in files:
                open(os.path.join(folder, f), "w").close()
            line = one_line_exit_2([folder])
            assert "can't find '__main__' module" in line and folder in line
        counts["folder"] = counts.get("folder", 0) + 1

    @ONCE
    @given(value=st.text(max_size=12))
    def version_values(value):
        os.environ[version.MMCV_VERSION_ENV] = value
        try:
            got = version._mmcv_version()
        except version.MmcvVersionError as err:
            assert "MMPAR_MMCV_VERSION=" in str(err) and "numbers separated by dots" in str(err)
            counts["version refused"] = counts.get("version refused", 0) + 1
            return
        from packaging.version import Version
        Version(got)  # accepted values are real versions (mmcv's own parsing takes them)
        counts["version accepted"] = counts.get("version accepted", 0) + 1

    missing_module(); folder_without_main(); version_values()
    print(json.dumps(counts))
"""


def test_generated_bad_launches_get_one_line_and_exit_2(tmp_path):
    script = _write(tmp_path / "bad_launches.py", "import json\n" + textwrap.dedent(BAD_LAUNCHES))
    proc = _run([str(script)], tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert counts["-m missing"] >= 10 and counts["folder"] >= 5 and counts["version refused"] >= 5


# A training script as mmcv's tools are: writes a marker, then its config dump, into the work dir.
TRAIN_SCRIPT = """
    import argparse, os
    parser = argparse.ArgumentParser()
    parser.add_argument('config')
    parser.add_argument('--work-dir')
    parser.add_argument('--resume-from')
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    open(os.path.join(args.work_dir, 'ran.txt'), 'w').write('the program ran')
"""


def test_launcher_refuses_a_new_training_run_before_the_program_starts(tmp_path):
    """Over another run's checkpoints: one line, exit 2, the program never runs."""
    from helpers import tree_bytes

    train = _write(tmp_path / "tools" / "train.py", TRAIN_SCRIPT)
    test = _write(tmp_path / "tools" / "test.py", TRAIN_SCRIPT.replace("'--resume-from'", "'--x'"))
    config = _write(tmp_path / "cfg.py", "model = dict(type='M')\n")
    work = tmp_path / "work"
    work.mkdir()
    import torch

    torch.save({"meta": {"epoch": 1, "iter": 4}, "state_dict": {}}, work / "epoch_1.pth")
    before = tree_bytes(work)
    refused = _run(["-m", "mmpar.as_mmcv", train, config, "--work-dir", work], tmp_path)
    assert refused.returncode == 2
    lines = (refused.stdout + refused.stderr).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: WorkDirHasOtherRunError: "), lines
    assert "pass --resume-from " in lines[0] and "pass --work-dir " in lines[0]
    assert "--auto-resume" not in lines[0]  # the script has no such option
    assert tree_bytes(work) == before
    # Continuing that run, and a script without a resume option (tools/test.py), run.
    for args in ([train, config, "--work-dir", work, "--resume-from", work / "epoch_1.pth"],
                 [test, config, "--work-dir", work]):  # fmt: skip
        ran = _run(["-m", "mmpar.as_mmcv", *args], tmp_path)
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert (work / "ran.txt").read_text() == "the program ran"
        (work / "ran.txt").unlink()
