"""Import every module of a project, then one training step of a model from its own config.

Run by the real-client tests through the zero-edit mode, in a fresh process:

    python -m mmpar.as_mmcv walk_and_step.py PACKAGE CONFIG OUT_JSON [KEY=VALUE ...]

With ``--xtcocotools-from-pycocotools`` (mmpose) the names ``xtcocotools``, ``.coco``,
``.cocoeval`` and ``.mask`` are served by pycocotools, the COCO API xtcocotools was forked from:
mmpose's dataset modules import them at module level, and the last xtcocotools wheels (1.14.3)
are compiled against numpy 1 and fail to load under numpy 2. It is COCO evaluation code that has
nothing to do with mmcv, and nothing here calls it.

``KEY=VALUE`` options are applied to the config (values parsed as Python literals). The model
is built with the project's own ``build_*`` function named in ``BUILDERS`` and gets a forward
and backward pass on small random input. The report written to ``OUT_JSON`` lists the modules
found, the ones that failed to import (with the error), the loss and the parameters that got a
gradient; the test asserts on it.
"""

import ast
import importlib
import json
import pkgutil
import sys
import traceback

import torch

# package -> (module, function) building a model from a config dict.
BUILDERS = {
    "mmaction": ("mmaction.models", "build_model"),
    "mmpose": ("mmpose.models", "build_posenet"),
}


def walk(package):
    """Import every module under ``package``; return (names, {name: error})."""
    root = importlib.import_module(package)
    names, failures = [], {}

    def record(name):
        failures[name] = _error()

    for info in pkgutil.walk_packages(root.__path__, package + ".", onerror=record):
        names.append(info.name)
        try:
            importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - every failure is reported, not just ImportError
            failures[info.name] = _error()
    return names, failures


def _error():
    exc_type, exc, _ = sys.exc_info()
    where = traceback.extract_tb(exc.__traceback__)[-1]
    return f"{exc_type.__name__}: {exc} ({where.filename}:{where.lineno})"


def batch(package):
    """Small random inputs for one training step of the model this test builds."""
    torch.manual_seed(0)
    if package == "mmaction":  # Recognizer2D: (N, segments, C, H, W) clips and their labels
        return dict(imgs=torch.randn(2, 3, 3, 64, 64), label=torch.tensor([[1], [2]]))
    # TopDown heatmaps: the head upsamples the stride-32 features 8x, to stride 4
    return dict(
        img=torch.randn(2, 3, 64, 64),
        target=torch.rand(2, 17, 16, 16),
        target_weight=torch.ones(2, 17, 1),
        img_metas=[{} for _ in range(2)],
    )


def step(package, config, options):
    from mmcv import Config

    cfg = Config.fromfile(config)
    cfg.merge_from_dict(options)
    module, function = BUILDERS[package]
    model = getattr(importlib.import_module(module), function)(cfg.model)
    model.init_weights()
    model.train()
    losses = model(return_loss=True, **batch(package))
    loss = sum(v for k, v in losses.items() if "loss" in k)
    loss.backward()
    params = list(model.parameters())
    return dict(
        model=type(model).__name__,
        loss=float(loss.detach()),
        losses=sorted(losses),
        parameters=len(params),
        with_grad=sum(p.grad is not None for p in params),
        nonzero_grad=sum(p.grad is not None and bool(p.grad.any()) for p in params),
    )


def xtcocotools_from_pycocotools():
    """Serve the xtcocotools modules mmpose imports from pycocotools (see the module docstring)."""
    import importlib

    import pycocotools

    sys.modules["xtcocotools"] = pycocotools
    for name in ("coco", "cocoeval", "mask"):
        sys.modules[f"xtcocotools.{name}"] = importlib.import_module(f"pycocotools.{name}")


def main():
    args = sys.argv[1:]
    if "--xtcocotools-from-pycocotools" in args:
        args.remove("--xtcocotools-from-pycocotools")
        xtcocotools_from_pycocotools()
    package, config, out, *pairs = args
    options = {}
    for pair in pairs:
        key, value = pair.split("=", 1)
        options[key] = ast.literal_eval(value)
    names, failures = walk(package)
    report = dict(modules=names, failures=failures)
    report["step"] = step(package, config, options)
    with open(out, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
