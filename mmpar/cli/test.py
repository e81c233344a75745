"""Evaluate a checkpoint on ``cfg.data.test``: one process, N CPU workers, or under torchrun.

Examples:
    python tools/test.py configs/digits_lenet.py work_dirs/digits_lenet/latest.pth
    python tools/test.py configs/digits_lenet.py CKPT --workers 2 --out results.json
    bash tools/dist_test.sh configs/digits_lenet.py CKPT 2
"""

from __future__ import annotations

import argparse
import json
import os.path as osp
import pickle
import sys

import numpy as np
import torch

from mmpar.cli import (
    UsageError,
    add_trust_checkpoint_argument,
    check_checkpoint_path,
    check_output_file,
    init_launcher,
    user_errors,
)
from mmpar.cli.packaged_configs import resolve_config
from mmpar.utils import Config, DictAction

OUT_FORMATS = {".json": "json", ".pkl": "pickle", ".pickle": "pickle"}


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description="Test (evaluate) a checkpoint.")
    parser.add_argument("config", type=resolve_config, help="config file or shipped config name")
    parser.add_argument("checkpoint", help="checkpoint file")
    parser.add_argument("--out", help="write per-sample results and metrics (.json or .pkl)")
    parser.add_argument(
        "--metrics",
        nargs="+",
        help="metrics, e.g. accuracy class_accuracy (default: "
        "cfg.evaluation.metric, else 'accuracy')",
    )
    parser.add_argument(
        "--metric-options",
        nargs="+",
        action=DictAction,
        default={},
        help="options of dataset.evaluate, e.g. topk=1,5",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="CPU worker processes sharing the model (non-distributed only)",
    )
    parser.add_argument(
        "--cfg-options",
        nargs="+",
        action=DictAction,
        default={},
        help="override config keys, e.g. data.samples_per_gpu=64",
    )
    parser.add_argument(
        "--launcher",
        choices=["none", "pytorch", "slurm", "mpi"],
        default="none",
        help="job launcher; 'pytorch' under torchrun (tools/dist_test.sh)",
    )
    parser.add_argument("--tmpdir", help="accepted for mmcv compatibility; unused")
    parser.add_argument(
        "--gpu-collect", action="store_true", help="accepted for mmcv compatibility; unused"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_trust_checkpoint_argument(parser)
    parser.add_argument("--local_rank", "--local-rank", type=int, default=0, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def setup(args: argparse.Namespace):
    """Check the arguments, load the config, initialise distribution, build data and model."""
    from mmpar.apis.train import check_labels_fit_model
    from mmpar.datasets import build_dataset
    from mmpar.models import build_classifier
    from mmpar.runner.checkpoint import load_checkpoint
    from mmpar.utils.registry import config_error_context

    if args.out is not None and osp.splitext(args.out)[1] not in OUT_FORMATS:
        raise UsageError(
            f"--out {args.out}: unsupported extension; use one of {sorted(OUT_FORMATS)}"
        )
    if args.out is not None:
        check_output_file(args.out)
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    if args.workers > 1 and args.launcher != "none":
        raise UsageError("--workers > 1 runs worker processes itself; use it with --launcher none")
    check_checkpoint_path(args.checkpoint)
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    distributed = init_launcher(args.launcher, cfg.get("dist_params", {}))
    if "pretrained" in cfg.model:
        cfg.model.pretrained = None
    with config_error_context("data.test"):
        dataset = build_dataset(cfg.data.test, dict(test_mode=True))
    with config_error_context("model"):
        model = build_classifier(cfg.model)
    check_labels_fit_model(model, dataset, "data.test")
    # Strict: evaluating a model whose weights were only partly loaded gives meaningless numbers.
    checkpoint = load_checkpoint(
        model,
        args.checkpoint,
        map_location="cpu",
        strict=True,
        weights_only=not args.trust_checkpoint,
    )
    classes = (checkpoint.get("meta") or {}).get("CLASSES") or getattr(dataset, "CLASSES", None)
    metrics = args.metrics or cfg.get("evaluation", {}).get("metric", "accuracy")
    return cfg, dataset, model, classes, metrics, distributed


def run_test(args, cfg, dataset, model, distributed) -> list:
    """Compute the per-sample outputs with the mode the arguments ask for."""
    from mmpar.apis import multi_device_test, multi_process_test, single_device_test, wrap_model
    from mmpar.datasets import build_dataloader

    samples_per_gpu = cfg.data.get("test_dataloader", {}).get(
        "samples_per_gpu", cfg.data.samples_per_gpu
    )
    progress = not args.no_progress
    if args.workers > 1:
        return multi_process_test(
            model,
            dataset,
            workers=args.workers,
            samples_per_gpu=samples_per_gpu,
            progress=progress,
        )
    loader = build_dataloader(
        dataset,
        samples_per_gpu=samples_per_gpu,
        workers_per_gpu=cfg.data.workers_per_gpu,
        dist=distributed,
        shuffle=False,
    )
    if distributed:
        wrapped = wrap_model(
            model,
            distributed=True,
            find_unused_parameters=cfg.get("find_unused_parameters", False),
        )
        return multi_device_test(wrapped, loader, args.tmpdir, args.gpu_collect, progress=progress)
    return single_device_test(wrap_model(model, distributed=False), loader, progress=progress)


def _as_array(result) -> np.ndarray:
    return result.detach().cpu().numpy() if isinstance(result, torch.Tensor) else np.asarray(result)


def dump_results(path: str, outputs: list, metrics: dict, classes) -> None:
    """Write scores, predictions and metrics to ``path`` (JSON or pickle by extension)."""
    scores = np.stack([_as_array(r) for r in outputs]) if outputs else np.zeros((0, 0))
    labels = scores.argmax(axis=1) if len(scores) else np.zeros(0, dtype=int)
    record = {
        "metrics": {k: float(v) for k, v in metrics.items()},
        "class_scores": scores.tolist(),
        "pred_label": labels.tolist(),
        "pred_score": [float(scores[i, j]) for i, j in enumerate(labels)],
        "pred_class": [classes[j] if classes else str(j) for j in labels],
    }
    if OUT_FORMATS[osp.splitext(path)[1]] == "json":
        with open(path, "w") as f:
            json.dump(record, f)
    else:
        with open(path, "wb") as f:
            pickle.dump(record, f)


def main(argv=None) -> int:
    """Run the command; return the exit code."""
    args = parse_args(argv)
    with user_errors():
        cfg, dataset, model, classes, metrics, distributed = setup(args)
    outputs = run_test(args, cfg, dataset, model, distributed)
    if distributed:
        from mmpar.runner.dist_utils import destroy_dist

        destroy_dist()  # all collectives are done; rank 0 evaluates on its own
    if outputs is None:  # a non-zero rank: rank 0 evaluates and reports
        return 0
    with user_errors():  # e.g. an unknown --metrics name
        results = dataset.evaluate(
            outputs, metric=metrics, metric_options=args.metric_options or None
        )
    for name, value in results.items():
        print(f"{name}: {value:.4f}")
    if args.out:
        dump_results(args.out, outputs, results, classes)
        print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
