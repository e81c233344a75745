"""Image classifier: backbone → (neck) → head, with the runner's ``train_step``/``val_step``."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Union

import torch
import torch.distributed as torch_dist
from torch import nn

from mmpar.runner.base_module import BaseModule
from mmpar.runner.checkpoint import _load_checkpoint
from mmpar.runner.model_setup.weight_init import load_pretrained
from mmpar.utils.dist import all_reduce_dict, is_distributed

from ..builder import CLASSIFIERS, build_backbone, build_head, build_neck


def parse_losses(losses: dict) -> tuple[torch.Tensor, OrderedDict]:
    """Sum the loss terms and turn every entry into a logged float.

    A value may be a tensor (averaged), a list of tensors (sum of averages) or a dict of them
    (each logged under its own name, e.g. ``accuracy={'top-1': ...}`` → ``top-1``). The total
    ``loss`` sums every entry whose name contains ``'loss'``. Under ``torch.distributed`` the
    logged values are averaged over ranks (the returned loss stays local, for backward).

    Raises:
        TypeError: A value of another type (names it).
        RuntimeError: Ranks logged different sets of values (they would deadlock otherwise).
    """
    log_vars: OrderedDict[str, torch.Tensor] = OrderedDict()
    for name, value in losses.items():
        if isinstance(value, torch.Tensor):
            log_vars[name] = value.mean()
        elif isinstance(value, (list, tuple)):
            log_vars[name] = sum(v.mean() for v in value)
        elif isinstance(value, dict):
            for sub_name, sub_value in value.items():
                log_vars[sub_name] = sub_value.mean()
        else:
            raise TypeError(f"loss {name!r} must be a tensor, list or dict, got {type(value)}")
    loss = sum(v for k, v in log_vars.items() if "loss" in k)
    if not isinstance(loss, torch.Tensor):
        raise KeyError(f'no loss term: none of {list(log_vars)} contains "loss"')
    log_vars["loss"] = loss

    if is_distributed():
        count = torch.tensor(len(log_vars), device=loss.device)
        torch_dist.all_reduce(count)
        if int(count) != len(log_vars) * torch_dist.get_world_size():
            raise RuntimeError(
                f"ranks logged different loss terms (this rank: {list(log_vars)}); every rank "
                f"must return the same keys from the head"
            )
        log_vars = all_reduce_dict({k: v.detach() for k, v in log_vars.items()}, op="mean")
    out: OrderedDict[str, float] = OrderedDict((k, float(v.item())) for k, v in log_vars.items())
    return loss, out


@CLASSIFIERS.register_module()
class ImageClassifier(BaseModule):
    """Backbone, optional neck and head; the mmcls 0.x classifier API.

    As in mmcls, the weights are set by :meth:`init_weights` (``tools/train.py`` calls it
    after building the model): ``init_cfg``, each part's own ``init_cfg``, then ``pretrained``.

    Args:
        backbone: Backbone config.
        neck: Neck config.
        head: Head config.
        pretrained: Checkpoint whose weights initialise the backbone (a classifier checkpoint's
            ``backbone.*`` keys, or a bare backbone state dict), loaded by :meth:`init_weights`.
        init_cfg: mmcv-style init configs for the whole model.
        train_cfg: Accepted for mmcls compatibility (augment settings are not supported).
    """

    def __init__(
        self,
        backbone: dict,
        neck: dict | None = None,
        head: dict | None = None,
        pretrained: str | None = None,
        init_cfg: Union[dict, list] | None = None,
        train_cfg: dict | None = None,
    ) -> None:
        super().__init__(init_cfg)
        if train_cfg and train_cfg.get("augments"):
            raise ValueError("ImageClassifier: train_cfg augments (mixup/cutmix) are not supported")
        self.backbone = build_backbone(backbone)
        self.neck = build_neck(neck) if neck is not None else None
        self.head = build_head(head) if head is not None else None
        self.pretrained = pretrained

    def init_weights(self) -> None:
        """Apply the ``init_cfg`` of the model and of its parts, then load ``pretrained``.

        Raises:
            PretrainedKeyError: (a KeyError) nothing of ``pretrained`` fits the backbone.
        """
        first_call = not self.is_init  # a later call only warns (BaseModule)
        super().init_weights()
        if first_call and self.pretrained is not None:
            checkpoint = _load_checkpoint(self.pretrained)
            keys = checkpoint.get("state_dict", checkpoint).keys()
            prefix = "backbone" if any(k.startswith("backbone.") for k in keys) else None
            load_pretrained(self.backbone, self.pretrained, prefix)

    @property
    def with_neck(self) -> bool:
        """Whether the model has a neck."""
        return self.neck is not None

    @property
    def with_head(self) -> bool:
        """Whether the model has a head."""
        return self.head is not None

    def extract_feat(self, img: torch.Tensor) -> Any:
        """Backbone (and neck) features."""
        x = self.backbone(img)
        return self.neck(x) if self.neck is not None else x

    def _require_head(self) -> nn.Module:
        if self.head is None:
            raise RuntimeError("ImageClassifier has no head; only extract_feat() is available")
        return self.head

    def forward_train(self, img: torch.Tensor, gt_label: torch.Tensor, **kwargs: Any) -> dict:
        """Return the losses dict."""
        return self._require_head().forward_train(self.extract_feat(img), gt_label)

    def simple_test(self, img: torch.Tensor, img_metas: list | None = None, **kwargs: Any):
        """Return softmax scores: a list with one NumPy array per sample."""
        return self._require_head().simple_test(self.extract_feat(img))

    def forward_test(self, imgs: Union[torch.Tensor, list], img_metas=None, **kwargs: Any):
        """Test forward on a batch (a list with one batch is accepted too)."""
        if isinstance(imgs, (list, tuple)):
            if len(imgs) != 1:
                raise NotImplementedError(
                    f"ImageClassifier got {len(imgs)} augmented views; test-time augmentation "
                    f"is not supported, pass one batch tensor"
                )
            imgs = imgs[0]
            img_metas = img_metas[0] if img_metas else img_metas
        return self.simple_test(imgs, img_metas, **kwargs)

    def forward(self, img: torch.Tensor, return_loss: bool = True, **kwargs: Any):
        """Training (``return_loss=True``, needs ``gt_label``) or test forward."""
        if return_loss:
            if "gt_label" not in kwargs:
                raise KeyError(
                    "ImageClassifier.forward(return_loss=True) needs gt_label; "
                    "pass return_loss=False for inference"
                )
            kwargs.pop("img_metas", None)
            return self.forward_train(img, **kwargs)
        kwargs.pop("gt_label", None)
        return self.forward_test(img, **kwargs)

    def _step(self, data: dict) -> dict:
        losses = self(**data)
        loss, log_vars = parse_losses(losses)
        metas = data.get("img_metas")
        return dict(loss=loss, log_vars=log_vars, num_samples=len(metas or data["img"]))

    def train_step(self, data: dict, optimizer: Any = None, **kwargs: Any) -> dict:
        """One training step's forward: ``dict(loss, log_vars, num_samples)``.

        The backward and optimizer step are done by the runner's OptimizerHook.
        """
        return self._step(data)

    def val_step(self, data: dict, optimizer: Any = None, **kwargs: Any) -> dict:
        """Like :meth:`train_step` (losses on validation data); call it under ``no_grad``."""
        return self._step(data)

    _parse_losses = staticmethod(parse_losses)
