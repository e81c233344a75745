"""tools/train.py with ``compile``: its checkpoint evaluates uncompiled; a broken backend fails.

The second test runs the real inductor backend with ``CXX`` pointing to a missing compiler
(what inductor reads on CPU), in a fresh inductor cache so no cached kernel hides the failure.
"""

import glob
import os

import pytest

pytestmark = pytest.mark.slow


def test_compiled_run_checkpoint_evaluates_with_the_uncompiled_test_tool(e2e, tmp_path):
    work_dir = tmp_path / "work"
    proc = e2e.run_tool(
        "tools/train.py",
        e2e.DIGITS_CONFIG,
        "--work-dir",
        work_dir,
        "--cfg-options",
        *e2e.DIGITS_OPTIONS,
        "runner.max_epochs=1",
        "compile.backend=eager",
        "compile.dynamic=False",
        timeout=180,
        check=True,
    )
    # The compilation is announced before the first training record, and timed.
    err = proc.stderr
    announced = err.index("compile: torch.compile (backend 'eager') is compiling train_step")
    assert announced < err.index("Epoch [1]"), err[-3000:]
    assert "compile: train_step compiled and ran in" in err
    val = [e for e in e2e.json_log(work_dir) if e["mode"] == "val"]
    assert len(val) == 1  # the EvalHook ran on the compiled model
    proc = e2e.run_tool(
        "tools/test.py", e2e.DIGITS_CONFIG, work_dir / "latest.pth", timeout=120, check=True
    )
    metrics = e2e.metric_lines(proc.stdout)
    assert metrics["accuracy_top-1"] == pytest.approx(val[0]["accuracy_top-1"], abs=1e-2)


def test_inductor_without_a_cxx_compiler_ends_with_one_error_line(e2e, tmp_path):
    work_dir = tmp_path / "work"
    env = e2e.tool_env(CXX=str(tmp_path / "missing-g++"), TORCHINDUCTOR_CACHE_DIR=str(tmp_path))
    proc = e2e.run_tool(
        "tools/train.py",
        e2e.DIGITS_CONFIG,
        "--work-dir",
        work_dir,
        "--cfg-options",
        *e2e.DIGITS_OPTIONS,
        "compile=True",
        env=env,
        timeout=180,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: CompileBackendError: compile: torch.compile backend 'inductor'")
    assert "C++ compiler" in last and "backend='aot_eager'" in last
    assert "Traceback" not in proc.stderr
    assert not glob.glob(os.path.join(work_dir, "*.pth"))  # no checkpoint, corrupt or not
