"""Write a sharded checkpoint as one file (``python tools/convert_sharded_checkpoint.py``).

The command is :mod:`mmpar.cli.convert_sharded_checkpoint`, installed with mmpar as
``mmpar-convert-sharded-checkpoint`` (docs/tools.md); this file keeps it runnable from a
clone and re-exports its functions.
"""

import sys

from mmpar.cli.convert_sharded_checkpoint import main, parse_args

__all__ = ["main", "parse_args"]

if __name__ == "__main__":
    sys.exit(main())
