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

import torch

from mmpar.cli import (
    UsageError,
    add_trust_checkpoint_argument,
    check_checkpoint_path,
    check_output_file,
    user_errors,
)
from mmpar.cli.packaged_configs import resolve_config
from mmpar.utils import DictAction

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".pgm", ".tif", ".tiff", ".webp")


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description="Predict the classes of image files.")
    parser.add_argument("config", type=resolve_config, help="config file or shipped config name")
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
    add_trust_checkpoint_argument(parser)
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


def check_device(device: str) -> None:
    """Check that ``--device`` names a CPU or an existing CUDA device.

    Raises:
        UsageError: Not ``cpu`` or ``cuda[:N]``, or no such CUDA device on this machine.
    """
    try:
        dev = torch.device(device)
    except RuntimeError as err:
        raise UsageError(f"--device {device}: not a device name; use cpu or cuda[:N]") from err
    if dev.type not in ("cpu", "cuda"):
        raise UsageError(f"--device {device}: only cpu and cuda[:N] are supported")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise UsageError(f"--device {device}: CUDA is not available here; use --device cpu")
        count = torch.cuda.device_count()
        if dev.index is not None and dev.index >= count:
            raise UsageError(f"--device {device}: this machine has {count} CUDA device(s)")


def check_images(files: list[str], fixed_size: bool) -> None:
    """Check that every file is an image, reading only its header (not its pixels).

    Args:
        files: The image files.
        fixed_size: The test pipeline does not resize (see ``InferencePipeline.fixed_size``),
            so all images must have one size, the model's.

    Raises:
        UsageError: A file is not an image PIL can identify, or (``fixed_size``) two images
            differ in size.
    """
    from PIL import Image, UnidentifiedImageError

    first = None
    for path in files:
        try:
            with Image.open(path) as img:
                size = img.size
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as err:
            raise UsageError(f"{path} is not an image file that can be read ({err})") from err
        if not fixed_size:
            continue
        if first is None:
            first = (path, size)
        elif size != first[1]:
            raise UsageError(
                f"{path} is {size[0]}x{size[1]} pixels but {first[0]} is "
                f"{first[1][0]}x{first[1][1]}; the test pipeline of this config does not "
                "resize, so every image must have the size the model was trained on"
            )


def setup(args: argparse.Namespace):
    """Validate the arguments, build the model and predict the first image as a check.

    Everything the command line names is checked here, so that a mistake ends with one
    ``error:`` line (exit code 2) before the images are predicted.
    """
    from mmpar.apis import inference_model, init_model
    from mmpar.apis.inference import InferencePipeline

    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    if args.batch_size < 1:
        raise UsageError(f"--batch-size must be >= 1, got {args.batch_size}")
    check_device(args.device)
    if args.workers > 1 and torch.device(args.device).type != "cpu":
        raise UsageError("--workers > 1 runs CPU worker processes; use --device cpu")
    if args.out is not None:
        check_output_file(args.out)
    check_checkpoint_path(args.checkpoint)
    files = expand_inputs(args.inputs)
    # Strict: a model whose weights were only partly loaded predicts meaningless classes.
    model = init_model(
        args.config,
        args.checkpoint,
        device=args.device,
        cfg_options=args.cfg_options or None,
        strict=True,
        weights_only=not args.trust_checkpoint,
    )
    fixed_size = InferencePipeline(model.cfg).fixed_size
    check_images(files, fixed_size)
    # One image through the pipeline and the model, so that an image the model cannot take
    # (wrong size) is reported here, naming the file, rather than as a traceback mid-run.
    try:
        inference_model(model, files[0])
    except ValueError as err:
        hint = (
            " (this config's test pipeline does not resize: images must have the size the "
            "model was trained on)"
            if fixed_size
            else ""
        )
        raise ValueError(f"{files[0]}: the model cannot predict this image{hint}: {err}") from err
    return model, files


def main(argv=None) -> int:
    """Run the command; return the exit code."""
    from mmpar.apis import inference_model

    args = parse_args(argv)
    with user_errors():
        model, files = setup(args)
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
