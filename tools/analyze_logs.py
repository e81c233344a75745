"""Plot training curves, compute iteration times (mmcv-style ``python tools/analyze_logs.py``).

The command is :mod:`mmpar.cli.analyze_logs`, installed with mmpar as ``mmpar-analyze-logs``
(docs/tools.md); this file keeps it runnable from a clone and re-exports its functions.
"""

import sys

from mmpar.cli.analyze_logs import (
    cal_train_time,
    curve,
    load_json_log,
    main,
    parse_args,
    plot_curve,
    train_steps,
)

__all__ = [
    "cal_train_time",
    "curve",
    "load_json_log",
    "main",
    "parse_args",
    "plot_curve",
    "train_steps",
]

if __name__ == "__main__":
    sys.exit(main())
