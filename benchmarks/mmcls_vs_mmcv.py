"""mmcls 0.25.0's own ResNet-18 CIFAR training: on mmpar (zero-edit mode) vs on real mmcv 1.7.2.

Both sides run mmcls's unedited ``tools/train.py`` with the config of the real-client test
(tests/test_real_clients/test_mmcls.py: mmcls's ``resnet18_8xb16_cifar10.py`` on scikit-learn's
digits in CIFAR-10's layout, batch 8, Adam, workers off), one process each, same seed, in
alternation (mmpar, mmcv, mmpar, mmcv, ...) so that a change of machine load hits both. Reads
the per-iteration ``time`` from mmcls's JSON logs; each epoch's first logged interval is left
out of s/iter (warm-up), s/epoch sums the logged intervals (so it includes the 2 s that
mmcv's ``EpochBasedRunner.train`` sleeps at the start of every epoch; mmpar does not sleep).

mmcls comes from the registry (``pip download --no-deps``); the real mmcv is the pure-Python
1.7.2 built from its sdist into a folder of its own (setuptools < 70 so that its ``setup.py``
finds ``pkg_resources``; the ops are left out)::

    echo 'setuptools<70' > /tmp/c.txt
    PIP_CONSTRAINT=/tmp/c.txt MMCV_WITH_OPS=0 pip install --no-deps --target /tmp/mmcv172 \\
        mmcv==1.7.2 yapf
    python benchmarks/mmcls_vs_mmcv.py --mmcv-dir /tmp/mmcv172 --repeats 2
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HELPERS = REPO / "tests" / "test_real_clients" / "helpers"


def _helper(name: str):
    spec = importlib.util.spec_from_file_location(name, HELPERS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def download_mmcls(dest: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
         "--disable-pip-version-check", "--dest", str(dest), "mmcls==0.25.0"],
        check=True, capture_output=True,
    )  # fmt: skip
    (wheel,) = dest.glob("mmcls-0.25.0-*.whl")
    target = dest / "mmcls-0.25.0"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(target)
    return target


def run(side: str, mmcls: Path, mmcv_dir: str, config: Path, work_dir: Path, threads: int):
    """Train once; return (s/iter, s/epoch list, last val accuracy, wall seconds)."""
    train = [str(mmcls / "mmcls" / ".mim" / "tools" / "train.py"), str(config)]
    train += ["--work-dir", str(work_dir), "--seed", "0", "--deterministic"]
    paths = [str(mmcls), str(HELPERS)]
    if side == "mmpar":
        cmd = [sys.executable, "-m", "mmpar.as_mmcv", *train]
        paths.append(str(REPO))
    else:
        cmd = [sys.executable, *train]
        paths.insert(0, mmcv_dir)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), PYTHONDONTWRITEBYTECODE="1")
    env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=work_dir.parent, check=True, capture_output=True)
    wall = time.perf_counter() - start
    (log,) = work_dir.glob("*.log.json")
    entries = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    train_entries = [e for e in entries if e.get("mode") == "train"]
    val = [e for e in entries if e.get("mode") == "val"]
    per_iter, per_epoch = [], {}
    previous = {}
    for e in train_entries:
        n = e["iter"] - previous.get(e["epoch"], 0)
        previous[e["epoch"]] = e["iter"]
        per_epoch[e["epoch"]] = per_epoch.get(e["epoch"], 0.0) + n * e["time"]
        if n != e["iter"]:  # not the epoch's first interval
            per_iter.append(e["time"])
    return statistics.median(per_iter), list(per_epoch.values()), val[-1]["accuracy_top-1"], wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mmcv-dir", required=True, help="folder holding the real mmcv 1.7.2")
    parser.add_argument("--repeats", type=int, default=2, help="runs per side")
    parser.add_argument("--n-train", type=int, default=256)
    parser.add_argument("--n-test", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="OMP threads per run")
    args = parser.parse_args()
    digits = _helper("cifar_digits")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        mmcls = download_mmcls(root / "pkgs")
        digits.write_cifar_digits(root / "data", args.n_train, args.n_test)
        config = digits.write_mmcls_config(
            root / "digits_resnet18.py",
            mmcls / "mmcls" / ".mim" / "configs",
            root / "data",
            args.epochs,
        )
        results: dict[str, list] = {"mmpar": [], "mmcv": []}
        for r in range(args.repeats):
            for side in ("mmpar", "mmcv"):
                out = run(side, mmcls, args.mmcv_dir, config, root / f"{side}{r}", args.threads)
                results[side].append(out)
                epochs = ", ".join(f"{s:.1f}" for s in out[1])
                print(
                    f"run {r} {side:5s}: {out[0]:.3f} s/iter, epochs {epochs} s, "
                    f"val top-1 {out[2]:.1f}%, wall {out[3]:.1f} s",
                    flush=True,
                )
    print("\nside   s/iter (median of runs)  s/epoch (median)  val top-1")
    summary = {}
    for side, runs in results.items():
        s_iter = statistics.median(r[0] for r in runs)
        s_epoch = statistics.median(s for r in runs for s in r[1])
        summary[side] = (s_iter, s_epoch)
        accs = sorted({r[2] for r in runs})
        print(f"{side:5s}  {s_iter:.3f}                    {s_epoch:.1f}              {accs}")
    print(
        f"ratio mmpar/mmcv: {summary['mmpar'][0] / summary['mmcv'][0]:.3f} per iteration, "
        f"{summary['mmpar'][1] / summary['mmcv'][1]:.3f} per epoch"
    )
    # Each repeat's pair ran back to back, under about the same load.
    pairs = [a[0] / b[0] for a, b in zip(results["mmpar"], results["mmcv"])]
    print("per-pair s/iter ratios: " + ", ".join(f"{r:.3f}" for r in pairs))


if __name__ == "__main__":
    main()
