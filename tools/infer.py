"""Predict the classes of image files with a trained checkpoint.

Examples:
    python tools/infer.py configs/digits_lenet.py CKPT img1.png img2.png
    python tools/infer.py configs/digits_lenet.py CKPT images/ --workers 2 --out preds.json
"""

from __future__ import annotations

import argparse
import json
import os
import os.path as osp
import sys

from mmpar.apis.cli import UsageError, run_setup
from mmpar.utils import DictAction

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".pgm", ".tif", ".tiff", ".webp")


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description="Predict the classes of image files.")
    parser.add_argument("config", help="config file")
    parser.add_argument("checkpoint", help="checkpoint file")
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="IMAGE_OR_DIR",
        help="image files, or directories searched recursively for "
        f"{'/'.join(IMAGE_EXTENSIONS)} files (sorted)",
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="CPU worker processes sharing the model"
    )
    parser.add_argument("--batch-size", type=int, default=32, help="images per forward pass")
    parser.add_argument("--device", default="cpu", help="'cpu' or e.g. 'cuda:0' (1 worker)")
    parser.add_argument("--out", help="write the predictions to this JSON file")
    parser.add_argument(
        "--cfg-options", nargs="+", action=DictAction, default={}, help="override config keys"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser.parse_args(argv)


def expand_inputs(inputs: list[str]) -> list[str]:
    """Files as given, directories replaced by their image files (recursive, sorted).

    Raises:
        FileNotFoundError: An input does not exist, or a directory holds no image.
    """
    files: list[str] = []
    for item in inputs:
        if osp.isdir(item):
            found = sorted(
                osp.join(root, name)
                for root, _, names in os.walk(item)
                for name in names
                if name.lower().endswith(IMAGE_EXTENSIONS)
            )
            if not found:
                raise FileNotFoundError(f"no {'/'.join(IMAGE_EXTENSIONS)} files under {item}")
            files.extend(found)
        elif osp.isfile(item):
            files.append(item)
        else:
            raise FileNotFoundError(f"input not found: {item}")
    return files


def setup(args: argparse.Namespace):
    """Validate the arguments and build the model."""
    from mmpar.apis import init_model

    if args.workers < 1 or args.batch_size < 1:
        raise UsageError("--workers and --batch-size must be >= 1")
    if args.workers > 1 and args.device != "cpu":
        raise UsageError("--workers > 1 runs CPU worker processes; use --device cpu")
    if not osp.isfile(args.checkpoint):
        raise FileNotFoundError(f"checkpoint not found: {args.checkpoint}")
    files = expand_inputs(args.inputs)
    model = init_model(
        args.config, args.checkpoint, device=args.device, cfg_options=args.cfg_options or None
    )
    return model, files


def main(argv=None) -> int:
    """Run the command; return the exit code."""
    from mmpar.apis import inference_model

    args = parse_args(argv)
    model, files = run_setup(lambda: setup(args))
    preds = inference_model(
        model,
        files,
        batch_size=args.batch_size,
        workers=args.workers,
        progress=not args.no_progress,
    )
    for path, pred in zip(files, preds):
        print(f"{path}\t{pred['pred_class']}\t{pred['pred_score']:.4f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump([dict(file=path, **pred) for path, pred in zip(files, preds)], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
