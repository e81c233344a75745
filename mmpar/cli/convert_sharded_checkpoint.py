"""Turn a sharded checkpoint (a ``torch.distributed.checkpoint`` directory) into one ``.pth`` file.

The file has the usual layout (``meta``, ``state_dict``, ``optimizer`` in torch's numbered
layout, ``mmpar_state``), so ``tools/test.py``, ``load_from`` and ``resume_from`` take it in
any run, sharded or not. Runs in one process and needs the memory of the whole checkpoint.

Example:
    python tools/convert_sharded_checkpoint.py work_dirs/big/epoch_5.pth epoch_5_full.pth
"""

from __future__ import annotations

import argparse
import sys

from mmpar.cli import user_errors
from mmpar.cli.args import check_output_file


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description="Write a sharded checkpoint as one file.")
    parser.add_argument("checkpoint", help="the sharded checkpoint's directory")
    parser.add_argument("out", help="the .pth file to write")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    """Convert; print the path written."""
    args = parse_args(argv)
    from mmpar.runner.checkpointing.sharded import convert_sharded_checkpoint

    with user_errors():
        check_output_file(args.out)
        print(convert_sharded_checkpoint(args.checkpoint, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
