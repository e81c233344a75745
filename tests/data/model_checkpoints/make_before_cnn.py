"""Write ``before_cnn.pt``: state dicts and outputs of mmpar's classifiers before mmpar.cnn.

Run once on commit 8ba1f5e (the models with their own norm builder), from a checkout of it:
``PYTHONPATH=<that checkout> python make_before_cnn.py before_cnn.pt``. The file is kept so
that ``tests/test_models/test_checkpoint_compat.py`` can show that checkpoints of those models
still load strictly, and compute the same scores, in today's models.
"""

import sys

import numpy as np
import torch

from mmpar.models import build_classifier

CASES = {
    "resnet18_cifar": dict(
        type="ImageClassifier",
        backbone=dict(type="ResNet", depth=18, stem="cifar", stem_channels=2, base_channels=2),
        neck=dict(type="GlobalAveragePooling"),
        head=dict(type="LinearClsHead", num_classes=3, in_channels=16),
    ),
    "resnet50_imagenet": dict(
        type="ImageClassifier",
        backbone=dict(
            type="ResNet",
            depth=50,
            stem_channels=4,
            base_channels=2,
            num_stages=2,
            out_indices=(0, 1),
            norm_cfg=dict(type="GN", num_groups=2),
        ),
        neck=dict(type="GlobalAveragePooling"),
        head=dict(type="LinearClsHead", num_classes=3, in_channels=16),
    ),
    "lenet_digits": dict(
        type="ImageClassifier",
        backbone=dict(type="LeNet", in_channels=1, input_size=8, padding=2),
        head=dict(type="LinearClsHead", num_classes=10, in_channels=84),
    ),
}


def main(path: str) -> None:
    torch.manual_seed(0)
    out = {}
    for name, cfg in CASES.items():
        model = build_classifier(cfg)
        # Values unlike any initialisation (zero-initialised norms included), so a tensor that
        # lands on the wrong layer changes the scores.
        with torch.no_grad():
            for tensor in model.state_dict().values():
                if tensor.is_floating_point():
                    if tensor.dim() == 1:
                        tensor.copy_(torch.rand_like(tensor) * 0.2 + 0.9)
                    else:
                        tensor.copy_(torch.randn_like(tensor) * 0.2)
        model.eval()
        channels = cfg["backbone"].get("in_channels", 3)
        size = cfg["backbone"].get("input_size", 32)
        img = torch.rand(2, channels, size, size)
        with torch.no_grad():
            scores = torch.from_numpy(np.stack(model(img, return_loss=False)))
        out[name] = dict(config=cfg, state_dict=model.state_dict(), img=img, scores=scores)
    torch.save(out, path)


if __name__ == "__main__":
    main(sys.argv[1])
