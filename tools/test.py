"""Evaluate a checkpoint on ``cfg.data.test`` (mmcv-style ``python tools/test.py``).

The command is :mod:`mmpar.cli.test`, installed with mmpar as ``mmpar-test``
(docs/tools.md); this file keeps it runnable from a clone and re-exports its functions.
"""

import sys

from mmpar.cli.test import dump_results, main, parse_args, run_test, setup

__all__ = ["dump_results", "main", "parse_args", "run_test", "setup"]

if __name__ == "__main__":
    sys.exit(main())
