"""Port an mmcv 1.x project's source tree to mmpar (imports, module paths, version checks).

Examples:
    python tools/port_mmcv.py path/to/project --dry-run   # print the diff, write nothing
    python tools/port_mmcv.py path/to/project

The same runs as ``python -m mmpar.cli.port`` where mmpar is installed without this checkout.
See docs/migrating_from_mmcv.md#port-tool.
"""

import sys

from mmpar.cli.port import main

if __name__ == "__main__":
    sys.exit(main())
