"""Every config in configs/ loads and its model runs one forward pass on a batch of its shape."""

from pathlib import Path

import pytest
import torch

from mmpar import Config
from mmpar.datasets import DATASETS, PIPELINES
from mmpar.datasets.pipelines import Compose
from mmpar.models import build_classifier

torch.set_num_threads(1)

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
CONFIGS = sorted(p for p in CONFIG_DIR.glob("*.py"))
REQUIRED_KEYS = (
    'model', 'data', 'optimizer', 'optimizer_config', 'lr_config', 'runner',
    'checkpoint_config', 'log_config', 'evaluation', 'workflow', 'load_from', 'resume_from',
)  # fmt: skip


def test_configs_found():
    assert {p.name for p in CONFIGS} >= {"cifar10_resnet.py", "cifar10_lenet.py", "digits_lenet.py"}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_loads_and_model_runs(path):
    cfg = Config.fromfile(str(path))
    for key in REQUIRED_KEYS:
        assert key in cfg, f"{path.name} lacks {key}"
    for split in ("train", "val", "test"):
        assert cfg.data[split]["type"] in DATASETS.module_dict
        Compose(cfg.data[split]["pipeline"])  # every transform is registered and builds
        for step in cfg.data[split]["pipeline"]:
            assert step["type"] in PIPELINES.module_dict
    model = build_classifier(cfg.model)
    channels = cfg.model.backbone.get("in_channels", 3)
    size = 8 if cfg.data.train.type == "Digits" else 32
    img = torch.rand(2, channels, size, size)
    out = model.train_step(
        dict(img=img, gt_label=torch.tensor([0, 1]), img_metas=[{}, {}]), optimizer=None
    )
    assert torch.isfinite(out["loss"]) and out["num_samples"] == 2
    model.eval()
    with torch.no_grad():
        scores = model(img, return_loss=False)
    assert len(scores) == 2 and scores[0].shape == (cfg.model.head.num_classes,)


def test_digits_config_pipeline_matches_its_data():
    cfg = Config.fromfile(str(CONFIG_DIR / "digits_lenet.py"))
    from mmpar.datasets import build_dataset

    ds = build_dataset(cfg.data.val)
    sample = ds[0]
    assert sample["img"].data.shape == (1, 8, 8)
    assert abs(float(sample["img"].data.mean())) < 3  # normalised
    assert cfg.evaluation.save_best == "auto"
