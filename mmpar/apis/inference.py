"""Build a classifier from a config + checkpoint and predict the classes of images.

Images go through the test pipeline of ``cfg.data.test``. Datasets that keep their images in
memory (Digits, CIFAR) have no loading step in that pipeline; image files are then read with
:class:`~mmpar.datasets.pipelines.LoadImageFromFile` in the model's channel format (grayscale
when ``cfg.model.backbone.in_channels == 1``, RGB otherwise) and must have the size the model
was trained on (8×8 for Digits, 32×32 for CIFAR), because such pipelines do not resize.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Sequence, Union

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from mmpar.engine.workers import batch_ranges, run_in_processes
from mmpar.parallel import MMDataParallel, collate
from mmpar.utils import Config

ImageInput = Union[str, os.PathLike, np.ndarray]


def init_model(
    config: str | os.PathLike | Config,
    checkpoint: str | None = None,
    device: str | torch.device = "cpu",
    cfg_options: dict | None = None,
    strict: bool = False,
    weights_only: bool = True,
) -> nn.Module:
    """Build a classifier from ``config``, load ``checkpoint`` and put it in eval mode.

    Args:
        config: A config file path or a :class:`~mmpar.utils.Config`.
        checkpoint: Checkpoint path (``None``: random weights, e.g. for smoke tests).
        device: Where to put the model.
        cfg_options: Overrides merged into the config (dotted keys).
        strict: Refuse a checkpoint whose tensors do not fit the model exactly (default: load
            what fits and warn about the rest, as mmcls does).
        weights_only: Unpickle only tensors and plain containers (see
            :func:`mmpar.runner.load_checkpoint`); False only for trusted files.

    Returns:
        The model, with ``model.cfg`` (the config) and ``model.CLASSES`` (from the
        checkpoint's ``meta['CLASSES']``, else the test dataset class's ``CLASSES``).

    Raises:
        TypeError: ``config`` is neither a path nor a Config.
        mmpar.runner.CheckpointError: The checkpoint is corrupt, unsafe (``weights_only``)
            or does not fit the model (``strict``, or no tensor fits at all).
    """
    from mmpar.models import build_classifier
    from mmpar.runner.checkpoint import load_checkpoint

    if isinstance(config, (str, os.PathLike)):
        config = Config.fromfile(os.fspath(config))
    elif not isinstance(config, Config):
        raise TypeError(f"config must be a file path or a Config, got {type(config).__name__}")
    if cfg_options:
        config.merge_from_dict(cfg_options)
    if "pretrained" in config.model:
        config.model.pretrained = None
    model = build_classifier(config.model)
    classes = None
    if checkpoint is not None:
        ckpt = load_checkpoint(
            model, checkpoint, map_location="cpu", strict=strict, weights_only=weights_only
        )
        classes = (ckpt.get("meta") or {}).get("CLASSES")
    if classes is None:
        classes = _dataset_classes(config)
        if checkpoint is not None:
            warnings.warn(
                f"checkpoint {checkpoint} has no meta['CLASSES']; using the class names of "
                f"{config.data.test.type}",
                UserWarning,
                stacklevel=2,
            )
    model.CLASSES = classes
    model.cfg = config
    model.to(device)
    model.eval()
    return model


def _dataset_classes(cfg: Config) -> list | None:
    """Class names of the test dataset's type (``classes`` key or the class attribute)."""
    from mmpar.datasets import DATASETS

    test_cfg = cfg.data.test
    if test_cfg.get("classes") is not None:
        return list(test_cfg.classes)
    dataset_cls = DATASETS.get(test_cfg.type)
    names = getattr(dataset_cls, "CLASSES", None)
    return None if names is None else list(names)


class InferencePipeline:
    """Turn one image (file path or H×W×C array) into a sample of ``cfg.data.test``'s pipeline.

    Label keys (``gt_label``) are dropped from its ``Collect``/``ToTensor`` steps, since images
    to predict have no label.

    Args:
        cfg: The model's config.

    Attributes:
        fixed_size: True when the test pipeline has no loading step (an in-memory dataset such
            as Digits or CIFAR): its transforms do not resize, so image files must have the
            size the model was trained on.
    """

    def __init__(self, cfg: Config) -> None:
        from mmpar.datasets import PIPELINES
        from mmpar.datasets.pipelines import Compose, LoadImageFromFile

        steps = [_unlabelled(s) for s in cfg.data.test.pipeline]
        steps = [s for s in steps if s is not None]
        first = steps[0] if steps else None
        loads_files = isinstance(first, dict) and first.get("type") == "LoadImageFromFile"
        self.fixed_size = not loads_files
        if loads_files:
            self.loader = PIPELINES.build(first)
            steps = steps[1:]
        else:
            in_channels = cfg.model.get("backbone", {}).get("in_channels", 3)
            self.loader = LoadImageFromFile(color_type="grayscale" if in_channels == 1 else "color")
        self.transforms = Compose(steps)

    def __call__(self, img: ImageInput) -> dict:
        """Return the pipeline's output for ``img``."""
        if isinstance(img, (str, os.PathLike)):
            results = self.loader({"img_path": os.fspath(img)})
            if results["img"].ndim == 2:  # grayscale file → H×W×1 like in-memory datasets
                results["img"] = results["img"][..., None]
                results["img_shape"] = results["ori_shape"] = results["img"].shape
        elif isinstance(img, np.ndarray):
            results = {"img": img, "img_shape": img.shape, "ori_shape": img.shape}
            results["filename"] = results["ori_filename"] = None
        else:
            raise TypeError(f"an image must be a file path or a numpy array, got {type(img)}")
        try:
            return self.transforms(results)
        except KeyError as err:
            missing = err.args[0] if err.args else err
            raise KeyError(
                f"the test pipeline of cfg.data.test failed on an unlabelled image ({missing}); "
                "make its Collect step keep only the image (keys=['img'])"
            ) from err


# Keys that only labelled samples have; test pipelines often format them too.
LABEL_KEYS = ("gt_label",)


def _unlabelled(step: Any) -> Any:
    """A pipeline step config without label keys (None when nothing is left for it to do)."""
    if not isinstance(step, dict) or step.get("type") not in ("Collect", "ToTensor"):
        return step
    step = dict(step)
    step["keys"] = [k for k in step.get("keys", []) if k not in LABEL_KEYS]
    if step["type"] == "ToTensor" and not step["keys"]:
        return None
    return step


class _InferStep:
    """Run the pipeline on a batch of images and turn the scores into predictions."""

    def __init__(self, cfg: Config, classes: Sequence[str] | None) -> None:
        self.pipeline = InferencePipeline(cfg)
        self.classes = list(classes) if classes is not None else None
        self._wrapped: MMDataParallel | None = None

    def __call__(self, model: nn.Module, imgs: list) -> list[dict]:
        if self._wrapped is None:
            device = next(model.parameters()).device
            ids = [device.index or 0] if device.type == "cuda" else [-1]
            self._wrapped = MMDataParallel(model, device_ids=ids)
        data = collate([self.pipeline(img) for img in imgs], samples_per_gpu=len(imgs))
        with torch.no_grad():
            scores = self._wrapped(return_loss=False, **data)
        return [self._prediction(s) for s in scores]

    def _prediction(self, score: Any) -> dict:
        score = score.detach().cpu().numpy() if isinstance(score, torch.Tensor) else score
        score = np.asarray(score)
        label = int(np.argmax(score))
        pred_class = self.classes[label] if self.classes is not None else str(label)
        return {"pred_label": label, "pred_score": float(score[label]), "pred_class": pred_class}


def inference_model(
    model: nn.Module,
    imgs: ImageInput | Sequence[ImageInput],
    batch_size: int = 16,
    workers: int = 0,
    progress: bool = False,
) -> dict | list[dict]:
    """Predict the class of one or more images.

    Args:
        model: A model from :func:`init_model` (needs ``model.cfg``).
        imgs: An image (file path or H×W×C array) or a list of them.
        batch_size: Images per forward pass.
        workers: ``> 1``: run in that many CPU worker processes sharing the model's memory
            (CPU models only); otherwise in this process.
        progress: Show a tqdm progress bar.

    Returns:
        ``dict(pred_label, pred_score, pred_class)`` for a single image (mmcls's return value),
        a list of them, in input order, for a list of images.

    Raises:
        AttributeError: ``model`` has no ``cfg`` (build it with :func:`init_model`).
    """
    if not hasattr(model, "cfg"):
        raise AttributeError("inference_model needs model.cfg; build the model with init_model()")
    single = isinstance(imgs, (str, os.PathLike, np.ndarray))
    items = [imgs] if single else list(imgs)
    step = _InferStep(model.cfg, getattr(model, "CLASSES", None))
    if workers > 1:
        if next(model.parameters()).device.type != "cpu":
            raise ValueError("inference with workers > 1 runs on CPU; move the model to CPU")
        preds = run_in_processes(
            model, items, step, workers=workers, batch_size=batch_size, progress=progress
        )
    else:
        model.eval()
        preds = []
        with tqdm(total=len(items), disable=not progress) as bar:
            for _, start, end in batch_ranges(len(items), batch_size):
                preds.extend(step(model, items[start:end]))
                bar.update(end - start)
    return preds[0] if single else preds
