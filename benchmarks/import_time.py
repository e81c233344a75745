"""Import cost of ``mmpar.utils`` on top of ``import torch`` (target <= 0.1 s).

Each repeat runs a fresh interpreter with ``-X importtime`` and reads the cumulative time of the
outermost ``mmpar`` import; torch is imported first so its cost is not counted. Run:

    .venv/bin/python benchmarks/import_time.py [--repeats 7] [--module mmpar.utils]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def mmpar_import_us(stderr):
    """Cumulative import time (µs) of the outermost ``mmpar*`` module from -X importtime."""
    times = [
        int(parts[1])
        for parts in (line.split("|") for line in stderr.splitlines())
        if len(parts) == 3 and parts[2].strip().startswith("mmpar")
    ]
    if not times:
        raise RuntimeError(f"no mmpar line in the importtime output:\n{stderr[-2000:]}")
    return max(times)


def measure(module, pycache):
    # Measure as installed, with bytecode cached (outside the source tree).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = pycache
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import torch, {module}"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return mmpar_import_us(proc.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--module", default="mmpar.utils")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as pycache:
        measure(args.module, pycache)  # warm the bytecode cache
        times = [measure(args.module, pycache) / 1000 for _ in range(args.repeats)]
    print(
        f"import {args.module} after torch: median {statistics.median(times):.1f} ms "
        f"(min {min(times):.1f}, max {max(times):.1f}, {args.repeats} fresh interpreters)"
    )


if __name__ == "__main__":
    main()
