"""Checkpoints of mmpar's classifiers from before they were built on mmpar.cnn still load.

``tests/data/model_checkpoints/before_cnn.pt`` was written by ``make_before_cnn.py`` (beside
it) on commit 8ba1f5e, whose ResNet had its own norm builder: per model, its config, a state
dict of non-initial values, an input batch and the scores the model gave for it.
"""

from pathlib import Path

import numpy as np
import pytest
import torch

from mmpar.models import build_classifier

DATA = Path(__file__).resolve().parents[1] / "data" / "model_checkpoints" / "before_cnn.pt"
BEFORE = torch.load(DATA, weights_only=True)


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_a_checkpoint_of_the_old_models_loads_strictly_and_scores_the_same(name):
    case = BEFORE[name]
    model = build_classifier(case["config"])
    assert list(model.state_dict()) == list(case["state_dict"])  # same keys, same order
    model.load_state_dict(case["state_dict"], strict=True)
    model.eval()
    with torch.no_grad():
        scores = np.stack(model(case["img"], return_loss=False))
    np.testing.assert_allclose(scores, case["scores"].numpy(), rtol=1e-5, atol=1e-6)


def test_the_data_file_covers_both_blocks_a_shortcut_and_lenet():
    keys = {name: list(case["state_dict"]) for name, case in BEFORE.items()}
    assert "backbone.layers.1.0.downsample.0.weight" in keys["resnet18_cifar"]
    assert "backbone.layers.0.0.norm3.weight" in keys["resnet50_imagenet"]  # Bottleneck
    assert "backbone.fc.2.weight" in keys["lenet_digits"]
