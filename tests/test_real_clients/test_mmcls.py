"""mmcls 0.25.0 from the registry, unedited, trains and tests with its own tools on mmpar.

``tools/train.py`` and ``tools/test.py`` of the mmcls wheel (``mmcls/.mim/tools``) run with its
own ``configs/resnet/resnet18_8xb16_cifar10.py`` (ResNet-18 from ``mmcls.models``, built on
``mmcv.cnn``; ``mmcls.datasets.CIFAR10``) through the zero-edit mode
(``python -m mmpar.as_mmcv``), in one process and in two under torchrun (``--launcher pytorch``,
gloo), 2 epochs each; ``tools/test.py`` then evaluates each final checkpoint. The data is
scikit-learn's digits written in CIFAR-10's python batch layout (``helpers/cifar_digits.py``).

What the test changes, all from outside mmcls: a config in ``tmp_path`` inherits the mmcls
config through ``_base_`` and sets

- the data folder, and the dataset type ``DigitsCIFAR10``: mmcls checks every CIFAR file
  against the md5 sum of the real download (and downloads CIFAR when one differs). The
  config's ``custom_imports`` loads ``helpers/mmcls_digits_plugin.py``, which registers
  ``DigitsCIFAR10``, mmcls's ``CIFAR10`` with the md5 lists replaced by the sums of the files
  the test wrote; its loading and checking code runs unchanged. That is all it does.
- nothing for the DDP run: mmcls 0.25's ``wrap_distributed_model`` raises ``RuntimeError
  ('Unavailable device "cpu"')`` as released, and the zero-edit launcher adds the CPU case
  (mmpar/parallel/project_cpu_ddp.py), as it does for any user of ``pip install mmpar``.
- a schedule that learns in 2 epochs of 256 images on CPU: Adam (lr 1e-3) instead of SGD,
  8 images per process (lr 2e-3 for the two-process run, which takes 16 per step), a train
  pipeline without the random crop and flip (a mirrored digit is another digit or none), and
  no loader workers (``persistent_workers`` off with them).

The same run on real mmcv 1.7.2 gives the same losses and validation accuracy (measured by
hand, docs/benchmarks.md).
"""

from __future__ import annotations

import ast
import json
import shutil
import sys
import time
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.slow

N_TRAIN, N_TEST = 256, 100
MIN_ACCURACY = 50.0  # percent, top-1 over 10 classes (chance: 10)


def mmcls_tools(package_dir):
    return package_dir / "mmcls" / ".mim" / "tools"


def mmcls_configs(package_dir):
    return package_dir / "mmcls" / ".mim" / "configs"


def mmcv_imports(path):
    """Line numbers of the ``import mmcv...`` / ``from mmcv... import`` statements in a file."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        if any(name == "mmcv" or name.startswith("mmcv.") for name in names):
            lines.append(node.lineno)
    return lines


@pytest.fixture(scope="module")
def mmcls_setup(downloads, tmp_path_factory, clients):
    root = tmp_path_factory.mktemp("mmcls")
    data = root / "data"
    clients.write_cifar_digits(data, N_TRAIN, N_TEST)
    package_dir = downloads["mmcls"]
    config = clients.write_mmcls_config(
        root / "digits_resnet18.py", mmcls_configs(package_dir), data
    )
    env = clients.client_env(package_dir, clients.HELPERS)
    return SimpleNamespace(root=root, data=data, package=package_dir, config=config, env=env)


def train(clients, setup, name, nproc):
    work_dir = setup.root / name
    args = [mmcls_tools(setup.package) / "train.py", setup.config, "--work-dir", work_dir]
    args += ["--seed", "0", "--deterministic"]
    if nproc == 1:
        cmd = [sys.executable, *clients.as_mmcv(*args)]
    else:
        cmd = clients.torchrun(nproc, *clients.as_mmcv(*args))
        cmd += ["--launcher", "pytorch", "--cfg-options", "dist_params.backend=gloo"]
        cmd += ["optimizer.lr=0.002"]  # twice the images per step: twice the learning rate
    start = time.perf_counter()
    proc = clients.run(cmd, env=setup.env, cwd=setup.root, timeout=600)
    return SimpleNamespace(
        work_dir=work_dir,
        proc=proc,
        seconds=time.perf_counter() - start,
        log=clients.read_log(work_dir),
    )


@pytest.fixture(scope="module")
def single(clients, mmcls_setup):
    """One 2-epoch training in one process, shared by the tests below."""
    return train(clients, mmcls_setup, "single", 1)


@pytest.fixture(scope="module")
def ddp(clients, mmcls_setup):
    """One 2-epoch training in two processes under torchrun, shared by the tests below."""
    return train(clients, mmcls_setup, "ddp", 2)


def test_mmcv_is_served_by_mmpar(clients, mmcls_setup, single):
    # No real mmcv is installed: every `import mmcv` in the run was mmpar.
    probe = "import importlib.util as u; print(u.find_spec('mmcv'))"
    out = clients.run([sys.executable, "-c", probe], env=mmcls_setup.env, cwd=mmcls_setup.root)
    assert out.stdout.strip() == "None"
    # mmcls's own version check passed, and its environment report (mmcv's collect_env) has
    # mmcv's keys ('MMCV': the mmcv version mmpar stands in for) and names the library that ran.
    (text_log,) = single.work_dir.glob("*.log")
    text = text_log.read_text()
    assert "\nmmpar: " in text and "\nMMCV: " in text and "\nMMCV Compiler: n/a" in text


@pytest.mark.parametrize("run", ["single", "ddp"])
def test_two_epochs_reach_high_validation_accuracy(run, request):
    result = request.getfixturevalue(run)
    train_log, val_log = result.log
    assert [e["epoch"] for e in val_log] == [1, 2]
    accuracy = val_log[-1]["accuracy_top-1"]
    assert accuracy > MIN_ACCURACY, (accuracy, val_log)
    first, last = train_log[0]["loss"], train_log[-1]["loss"]
    assert last < 0.9 * first, (first, last)
    iters_per_epoch = N_TRAIN // (8 * (2 if run == "ddp" else 1))
    assert train_log[-1]["iter"] == iters_per_epoch
    assert (result.work_dir / "epoch_2.pth").is_file()
    print(f"{run}: {result.seconds:.1f} s, val accuracy {val_log[-1]['accuracy_top-1']}%")


def test_ddp_run_is_distributed_over_two_ranks(ddp):
    (text_log,) = ddp.work_dir.glob("*.log")
    text = text_log.read_text()
    assert "Distributed training: True" in text
    # 128 images per rank per epoch, 8 per step: 16 iterations, not the 32 of one process.
    assert ddp.log[0][-1]["iter"] == N_TRAIN // 16


@pytest.mark.parametrize("run", ["single", "ddp"])
def test_tools_test_evaluates_the_checkpoint(run, request, clients, mmcls_setup):
    result = request.getfixturevalue(run)
    out = result.work_dir / "test_results.json"
    args = [mmcls_tools(mmcls_setup.package) / "test.py", mmcls_setup.config]
    args += [result.work_dir / "epoch_2.pth", "--metrics", "accuracy", "--out", out]
    clients.run(
        [sys.executable, *clients.as_mmcv(*args)], env=mmcls_setup.env, cwd=mmcls_setup.root
    )
    metrics = json.loads(out.read_text())
    # The checkpoint holds the weights the training validated last: same data, same score.
    assert metrics["accuracy_top-1"] == pytest.approx(result.log[1][-1]["accuracy_top-1"])
    assert metrics["accuracy_top-1"] > MIN_ACCURACY


def test_port_tool_reports_exactly_what_fails_and_its_output_trains_on_two_processes(
    clients, downloads, tmp_path
):
    """The unzipped mmcls wheel, ported by tools/port_mmcv.py (``.mim/`` too), trains with DDP.

    The report is checked both ways against helpers/try_mmcv_names.py, which tries every mmcv
    name of the original tree in the zero-edit mode. The ported tree imports mmpar itself and
    runs its own ``.mim/tools/train.py`` under torchrun on CPU with the one documented import
    (``mmpar.parallel.project_cpu_ddp`` in the config's ``custom_imports``).
    """
    tree = tmp_path / "mmcls_ported"
    shutil.copytree(downloads["mmcls"], tree)
    referee = tmp_path / "failing.json"
    check = [clients.HELPERS / "try_mmcv_names.py", downloads["mmcls"], referee]
    env = clients.client_env(downloads["mmcls"])
    jobs = [
        ([sys.executable, *clients.as_mmcv(*check)], env, tmp_path),
        ([sys.executable, clients.REPO / "tools" / "port_mmcv.py", tree], env, tmp_path),
    ]
    _, ported = clients.run_together(jobs)
    reported = {
        line.split(": ")[1].split(" is not provided")[0]
        for line in ported.stderr.splitlines()
        if " is not provided by mmpar" in line
    }
    assert reported == set(json.loads(referee.read_text())), ported.stderr
    assert reported  # mmcls's deployment tools use mmcv.tensorrt / mmcv.onnx
    left = [f"{path}:{line}" for path in tree.rglob("*.py") for line in mmcv_imports(path)]
    assert not left, left
    assert len(list((tree / "mmcls" / ".mim").rglob("*.py"))) > 400  # tools/ and configs/
    # A short real run: 1 epoch of 32 images on two processes, without the zero-edit mode.
    data = tmp_path / "data"
    clients.write_cifar_digits(data, 32, 16)
    config = clients.write_mmcls_config(tmp_path / "digits.py", mmcls_configs(tree), data, epochs=1)
    with config.open("a") as f:
        f.write(
            "custom_imports = dict(imports=['mmcls_digits_plugin', "
            "'mmpar.parallel.project_cpu_ddp'], allow_failed_imports=False)\n"
        )
    env = clients.client_env(tree, clients.HELPERS)
    work_dir = tmp_path / "work"
    args = [mmcls_tools(tree) / "train.py", config, "--work-dir", work_dir, "--seed", "0"]
    cmd = clients.torchrun(2, *args, "--launcher", "pytorch")
    cmd += ["--cfg-options", "log_config.interval=2", "dist_params.backend=gloo"]
    clients.run(cmd, env=env, cwd=tmp_path, timeout=600)
    train_log, val_log = clients.read_log(work_dir)
    assert [e["epoch"] for e in val_log] == [1]
    assert train_log[-1]["iter"] == 2  # 16 images per rank, 8 per step
    assert "Distributed training: True" in next(work_dir.glob("*.log")).read_text()
    assert (work_dir / "epoch_1.pth").is_file()
    probe = "import mmcls.apis, sys; print('mmcv' in sys.modules, 'mmpar.cnn' in sys.modules)"
    out = clients.run([sys.executable, "-c", probe], env=env, cwd=tmp_path)
    assert out.stdout.split() == ["False", "True"]
