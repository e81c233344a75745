"""After ``pip install mmpar`` (a wheel, no clone) the console scripts train the Digits demo.

The wheel is built from a copy of the checkout and installed into a fresh virtualenv. Torch and
the other dependencies are not installed again (that would download gigabytes): a ``.pth`` line
puts the test interpreter's site-packages at the end of the new venv's ``sys.path``. Python only
processes ``.pth`` files of site directories, not of folders a ``.pth`` line adds, so the
editable mmpar of the test's venv (its ``__editable__`` hook) stays out; the test checks that
the mmpar imported is the wheel's.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# What setup.py and pyproject.toml build the wheel from.
SOURCES = ("pyproject.toml", "setup.py", "setup.cfg", "README.md", "mmpar", "configs")
SCRIPTS = (
    "mmpar-train",
    "mmpar-test",
    "mmpar-infer",
    "mmpar-analyze-logs",
    "mmpar-print-config",
    "mmpar-port",
    "mmpar-convert-sharded-checkpoint",
)

pytestmark = pytest.mark.slow


def _clean_env() -> dict:
    """The test's environment without PYTHONPATH/PYTHONHOME: with the checkout on PYTHONPATH,
    pip would find the checkout's mmpar already installed and skip the wheel."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def _run(command, **kwargs):
    kwargs.setdefault("env", _clean_env())
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, **kwargs)
    assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def _build_wheel(tmp_path: Path) -> Path:
    """``pip wheel`` of a copy of the checkout (its build/ and egg-info stay out of the repo)."""
    src = tmp_path / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=ignore)
        else:
            shutil.copy2(REPO / name, src / name)
    dist = tmp_path / "dist"
    # No build isolation and no index: setuptools comes from the test's venv, nothing is fetched.
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
         + ["--no-index", "-w", str(dist), str(src)])  # fmt: skip
    (wheel,) = dist.glob("mmpar-*.whl")
    return wheel


def _fresh_venv(tmp_path: Path, wheel: Path) -> tuple[Path, Path]:
    """A new venv with the wheel installed; returns its bin folder and its site-packages."""
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    # The test venv's pip installs into the new venv (--python): the console scripts get its
    # interpreter. Installed before the .pth exists, so pip sees no other mmpar there.
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
         + ["--no-index", str(wheel)])  # fmt: skip
    code = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(_run([str(python), "-c", code]).stdout.strip())
    deps = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (site / "zz_test_venv_deps.pth").write_text("".join(f"{path}\n" for path in sorted(deps)))
    return venv / "bin", site


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("wheel")
    bin_dir, site = _fresh_venv(tmp_path, _build_wheel(tmp_path))
    env = _clean_env()
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", OMP_NUM_THREADS="1")
    user_dir = tmp_path / "user"  # a directory outside the repository, without configs/
    user_dir.mkdir()
    return bin_dir, site, dict(env=env, cwd=user_dir)


def test_the_wheel_installs_the_console_scripts_and_its_mmpar_is_imported(installed):
    bin_dir, site, run_in = installed
    for name in SCRIPTS:
        script = bin_dir / name
        assert script.is_file(), f"{name} not installed"
        assert script.read_text().splitlines()[0] == f"#!{bin_dir / 'python'}"
    code = "import sys, mmpar; print(mmpar.__file__); print(sorted(sys.modules))"
    out = _run([str(bin_dir / "python"), "-c", code], **run_in).stdout.splitlines()
    assert Path(out[0]) == site / "mmpar" / "__init__.py"
    assert "__editable__" not in out[1], "the test venv's editable mmpar hook was loaded"


def test_list_configs_shows_the_configs_shipped_in_the_wheel(installed):
    bin_dir, site, run_in = installed
    out = _run([str(bin_dir / "mmpar-train"), "--list-configs"], **run_in).stdout
    lines = dict(line.split() for line in out.splitlines())
    assert Path(lines["digits_lenet"]) == site / "mmpar" / "configs" / "digits_lenet.py"
    assert "_base_" not in out


def test_mmpar_train_trains_the_digits_demo_by_name_outside_the_repo(installed):
    bin_dir, _, run_in = installed
    command = [str(bin_dir / "mmpar-train"), "digits_lenet", "--cfg-options"]
    command += ["runner.max_epochs=1", "data.workers_per_gpu=0"]
    result = _run(command, **run_in)
    assert "status:          finished" in result.stdout
    work_dir = run_in["cwd"] / "work_dirs" / "digits_lenet"  # the default: relative to the cwd
    assert (work_dir / "epoch_1.pth").is_file()
    assert (work_dir / "latest.pth").exists()
    assert (work_dir / "digits_lenet.py").is_file()  # the merged config, dumped
    (log,) = work_dir.glob("*.log")
    assert "Epoch [1][" in log.read_text()
    assert len(list(work_dir.glob("*.log.json"))) == 1
    # Another command of the wheel: mmpar-test evaluates the checkpoint (config given as a path
    # that exists only in the wheel).
    test = [str(bin_dir / "mmpar-test"), "configs/digits_lenet.py", str(work_dir / "latest.pth")]
    out = _run([*test, "--no-progress"], **run_in).stdout
    assert out.startswith("accuracy_top-1: ")
