"""Plot training curves and compute iteration times from ``<timestamp>.log.json`` files.

Examples:
    python tools/analyze_logs.py plot_curve work_dirs/digits_lenet/*.log.json \
        --keys loss accuracy_top-1 --out work_dirs/digits_lenet/curve.png
    python tools/analyze_logs.py cal_train_time work_dirs/digits_lenet/*.log.json
"""

from __future__ import annotations

import argparse
import json
import os.path as osp
import sys
import warnings
from collections import defaultdict

import numpy as np

from mmpar.cli import user_errors


def load_json_log(path: str) -> list[dict]:
    """Read the log entries (lines with a ``mode``) of one JSON log.

    The first line (env info and config, no ``mode``) is skipped. A truncated last line (a run
    killed mid-write) is dropped with a warning.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: A line other than the last is not JSON (names the file and line).
    """
    if not osp.isfile(path):
        raise FileNotFoundError(f"log file not found: {path}")
    with open(path) as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    entries = []
    for lineno, line in enumerate(lines, 1):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as err:
            if lineno == len(lines):
                warnings.warn(f"{path}:{lineno}: dropping a truncated last line", stacklevel=2)
                break
            raise ValueError(f"{path}:{lineno}: not a JSON log line ({err})") from err
        if isinstance(entry, dict) and "mode" in entry:
            entries.append(entry)
    return entries


def train_steps(entries: list[dict]) -> dict[int, int]:
    """Map the position of each train entry to its global iteration number.

    Epoch-based logs restart ``iter`` every epoch; they get ``(epoch - 1) * iters_per_epoch +
    iter``, with iters_per_epoch the largest ``iter`` logged. Iteration-based logs keep ``iter``.
    """
    train = [(i, e) for i, e in enumerate(entries) if e["mode"] == "train"]
    iters = [e["iter"] for _, e in train]
    restarts = any(b < a for a, b in zip(iters, iters[1:]))
    if not restarts:
        return {i: e["iter"] for i, e in train}
    per_epoch = max(iters)
    return {i: (e["epoch"] - 1) * per_epoch + e["iter"] for i, e in train}


def curve(entries: list[dict], key: str) -> tuple[str, list, list] | None:
    """(x label, xs, ys) of ``key`` in one log, or None if the log never has it.

    Val metrics are plotted per epoch (per iteration for iteration-based logs), train values
    per global iteration.
    """
    steps = train_steps(entries)
    train = [(steps[i], e[key]) for i, e in enumerate(entries) if e["mode"] == "train" and key in e]
    val = [e for e in entries if e["mode"] == "val" and key in e]
    if train:
        return "iter", [x for x, _ in train], [y for _, y in train]
    if val:
        by_epoch = len({e["epoch"] for e in val}) == len(val)
        xs = [e["epoch"] if by_epoch else e["iter"] for e in val]
        return ("epoch" if by_epoch else "iter"), xs, [e[key] for e in val]
    return None


def plot_curve(args: argparse.Namespace) -> None:
    """Draw one panel per key, one line per log, into ``args.out`` (PNG via matplotlib Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    logs = [load_json_log(p) for p in args.json_logs]
    legend = args.legend or [osp.basename(p) for p in args.json_logs]
    if len(legend) != len(logs):
        raise ValueError(f"--legend has {len(legend)} names for {len(logs)} logs")
    fig, axes = plt.subplots(len(args.keys), 1, figsize=(8, 3.2 * len(args.keys)), squeeze=False)
    for ax, key in zip(axes[:, 0], args.keys):
        drawn = 0
        for entries, name in zip(logs, legend):
            found = curve(entries, key)
            if found is None:
                continue
            xlabel, xs, ys = found
            ax.plot(xs, ys, marker="o" if xlabel == "epoch" else None, label=f"{name} {key}")
            ax.set_xlabel(xlabel)
            drawn += 1
        if not drawn:
            available = sorted({k for entries in logs for e in entries for k in e} - {"mode"})
            raise KeyError(f"key {key!r} is in none of the logs; logged keys: {available}")
        ax.set_ylabel(key)
        ax.legend()
        ax.grid(alpha=0.3)
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    plt.close(fig)
    print(f"saved {args.out}")


def cal_train_time(args: argparse.Namespace) -> None:
    """Print average/slowest/fastest epoch iteration times of each log (``time`` key).

    A log without train timing (a run that only evaluated, or resumed at its last epoch and
    trained nothing) is skipped with a note on stderr naming it, so a glob over a work dir
    still reports the runs that trained.

    Raises:
        ValueError: No log has a train entry with a ``time`` value.
    """
    reported = 0
    for path in args.json_logs:
        entries = load_json_log(path)
        per_epoch: dict[int, list[float]] = defaultdict(list)
        for entry in entries:
            if entry["mode"] == "train" and "time" in entry:
                per_epoch[entry["epoch"]].append(entry["time"])
        if not per_epoch:
            print(f'skipped {path}: no train entries with a "time" value', file=sys.stderr)
            continue
        reported += 1
        if not args.include_outliers:
            # The first logged interval of an epoch includes loader start-up; skip it when the
            # epoch has more entries.
            per_epoch = {k: v[1:] if len(v) > 1 else v for k, v in per_epoch.items()}
        means = {epoch: float(np.mean(times)) for epoch, times in per_epoch.items()}
        slowest = max(means, key=means.get)
        fastest = min(means, key=means.get)
        print(f"-----Analyze train time of {path}-----")
        print(f"slowest epoch {slowest}, average time is {means[slowest]:.4f} s/iter")
        print(f"fastest epoch {fastest}, average time is {means[fastest]:.4f} s/iter")
        print(f"time std over epochs is {float(np.std(list(means.values()))):.4f}")
        all_times = [t for times in per_epoch.values() for t in times]
        print(f"average iter time: {float(np.mean(all_times)):.4f} s/iter")
    if not reported:
        names = ", ".join(args.json_logs)
        raise ValueError(f'no train entries with a "time" value in any log: {names}')


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description="Analyze JSON training logs.")
    sub = parser.add_subparsers(dest="task", required=True)
    plot = sub.add_parser("plot_curve", help="plot keys of the logs against iterations/epochs")
    plot.add_argument("json_logs", nargs="+", help="<timestamp>.log.json files")
    plot.add_argument("--keys", nargs="+", default=["loss"], help="keys to plot")
    plot.add_argument("--legend", nargs="+", help="one name per log (default: file names)")
    plot.add_argument("--title", help="figure title")
    plot.add_argument("--out", required=True, help="output image (e.g. curve.png)")
    timing = sub.add_parser("cal_train_time", help="iteration time statistics per epoch")
    timing.add_argument("json_logs", nargs="+", help="<timestamp>.log.json files")
    timing.add_argument(
        "--include-outliers", action="store_true", help="include each epoch's first logged interval"
    )
    return parser.parse_args(argv)


def main(argv=None) -> int:
    """Run the command; return the exit code."""
    args = parse_args(argv)
    task = plot_curve if args.task == "plot_curve" else cal_train_time
    with user_errors():
        task(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
