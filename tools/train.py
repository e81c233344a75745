"""Train a model from a config file (mmcv-style ``python tools/train.py``).

The command is :mod:`mmpar.cli.train`, installed with mmpar as ``mmpar-train``
(docs/tools.md); this file keeps it runnable from a clone and re-exports its functions.
"""

import sys

from mmpar.cli.train import (
    DEFAULT_SEED,
    load_config,
    lock_and_build,
    main,
    open_work_dir,
    parse_args,
    set_preemption,
    setup,
)

__all__ = [
    "DEFAULT_SEED",
    "load_config",
    "lock_and_build",
    "main",
    "open_work_dir",
    "parse_args",
    "set_preemption",
    "setup",
]

if __name__ == "__main__":
    sys.exit(main())
