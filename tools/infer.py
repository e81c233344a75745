"""Predict the classes of image files (mmcv-style ``python tools/infer.py``).

The command is :mod:`mmpar.cli.infer`, installed with mmpar as ``mmpar-infer``
(docs/tools.md); this file keeps it runnable from a clone and re-exports its functions.
"""

import sys

from mmpar.cli.infer import check_device, check_images, expand_inputs, main, parse_args, setup

__all__ = ["check_device", "check_images", "expand_inputs", "main", "parse_args", "setup"]

if __name__ == "__main__":
    sys.exit(main())
