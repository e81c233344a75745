"""Print a merged config (mmcv-style ``python tools/print_config.py``).

The command is :mod:`mmpar.cli.print_config`, installed with mmpar as ``mmpar-print-config``
(docs/tools.md); this file keeps it runnable from a clone and re-exports its functions.
"""

import sys

from mmpar.cli.print_config import main, parse_args

__all__ = ["main", "parse_args"]

if __name__ == "__main__":
    sys.exit(main())
