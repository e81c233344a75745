"""Print a config after ``_base_`` inheritance and ``--cfg-options`` overrides.

Example:
    python tools/print_config.py configs/digits_lenet.py --cfg-options runner.max_epochs=3
"""

from __future__ import annotations

import argparse
import sys

from mmpar.cli import user_errors
from mmpar.cli.packaged_configs import resolve_config
from mmpar.utils import Config, DictAction


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description="Print the fully merged config.")
    parser.add_argument("config", type=resolve_config, help="config file or shipped config name")
    parser.add_argument(
        "--cfg-options",
        nargs="+",
        action=DictAction,
        default={},
        help="override config keys, e.g. optimizer.lr=0.01",
    )
    return parser.parse_args(argv)


def main(argv=None) -> int:
    """Print the config as Python source (loadable again with Config.fromfile)."""
    args = parse_args(argv)
    with user_errors():
        cfg = Config.fromfile(args.config)
        if args.cfg_options:
            cfg.merge_from_dict(args.cfg_options)
    print(cfg.pretty_text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
