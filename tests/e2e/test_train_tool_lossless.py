"""tools/train.py with a GAN config: a dict of optimizer configs, a train_step without loss."""

import textwrap

import pytest
import torch

pytestmark = pytest.mark.slow

PLUGIN = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

from mmpar.datasets import DATASETS
from mmpar.models import MODELS


@DATASETS.register_module()
class GaussianPoints(torch.utils.data.Dataset):
    def __init__(self, n, pipeline=None, test_mode=False):
        self.points = torch.randn(n, 2, generator=torch.Generator().manual_seed(0)) + 2

    def __len__(self):
        return len(self.points)

    def __getitem__(self, i):
        return {"real": self.points[i]}


@MODELS.register_module()
class TinyGAN(nn.Module):
    """Steps the optimizers it is given inside train_step; returns no loss."""

    def __init__(self):
        super().__init__()
        self.generator = nn.Linear(2, 2)
        self.discriminator = nn.Linear(2, 1)

    def train_step(self, data_batch, optimizer, **kwargs):
        real = data_batch["real"]
        fake = self.generator(torch.randn(len(real), 2))
        d = self.discriminator
        loss_d = F.softplus(-d(real)).mean() + F.softplus(d(fake.detach())).mean()
        optimizer["discriminator"].zero_grad()
        loss_d.backward()
        optimizer["discriminator"].step()
        loss_g = F.softplus(-d(fake)).mean()
        optimizer["generator"].zero_grad()
        loss_g.backward()
        optimizer["generator"].step()
        log_vars = {"loss_d": loss_d.item(), "loss_g": loss_g.item()}
        return {"log_vars": log_vars, "num_samples": len(real)}
'''

CONFIG = """
custom_imports = dict(imports=["gan_plugin"], allow_failed_imports=False)
model = dict(type="TinyGAN")
data = dict(samples_per_gpu=2, workers_per_gpu=0, train=dict(type="GaussianPoints", n=8))
optimizer = dict(
    generator=dict(type="Adam", lr=1e-3),
    discriminator=dict(type="SGD", lr=1e-2, momentum=0.9),
)
optimizer_config = None
lr_config = None
runner = dict(type="IterBasedRunner", max_iters=8)
checkpoint_config = dict(interval=4)
log_config = dict(interval=2, hooks=[dict(type="TextLoggerHook")])
workflow = [("train", 1)]
"""


def test_train_tool_builds_a_dict_of_optimizers_and_trains_without_loss(e2e, tmp_path):
    (tmp_path / "gan_plugin.py").write_text(textwrap.dedent(PLUGIN))
    config = tmp_path / "tiny_gan.py"
    config.write_text(CONFIG)
    work_dir = tmp_path / "work"
    e2e.run_tool(
        "tools/train.py",
        config,
        "--work-dir",
        work_dir,
        "--no-validate",
        env=e2e.tool_env(tmp_path),
        check=True,
    )
    train = [e for e in e2e.json_log(work_dir) if e["mode"] == "train"]
    assert [e["iter"] for e in train] == [2, 4, 6, 8]
    assert all({"loss_d", "loss_g"} <= set(e) for e in train)
    assert train[0]["lr"] == {"generator": 0.001, "discriminator": 0.01}
    ckpt = torch.load(work_dir / "iter_8.pth", map_location="cpu", weights_only=False)
    optimizers = ckpt["optimizer"]
    assert set(optimizers) == {"generator", "discriminator"}
    assert {float(s["step"]) for s in optimizers["generator"]["state"].values()} == {8.0}
    assert all("momentum_buffer" in s for s in optimizers["discriminator"]["state"].values())
