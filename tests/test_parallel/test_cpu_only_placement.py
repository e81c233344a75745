"""cpu_only DataContainer fields stay on the CPU under MMDistributedDataParallel and FSDP.

mmpar's scatter keeps them on the CPU, but then DDP's ``_pre_forward`` and FSDP2's root
pre-forward move every tensor they find to the device. Without a GPU the move is shown with a
recording ``Tensor.to``: a copy "to CUDA" is a CPU clone remembered as moved.
"""

import pytest
import torch
from torch import nn

from mmpar.parallel import (
    DataContainer,
    MMDistributedDataParallel,
    MMFullyShardedDataParallel,
    collate,
)


@pytest.fixture
def fake_cuda(monkeypatch):
    """``Tensor.to(cuda)`` returns a remembered CPU clone; returns "was this moved?"."""
    moved = []
    to = torch.Tensor.to

    def recording_to(tensor, *args, **kwargs):
        target = args[0] if args else kwargs.get("device")
        if isinstance(target, (str, torch.device)) and torch.device(target).type == "cuda":
            copy = tensor.clone()
            moved.append(copy)
            return copy
        return to(tensor, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", recording_to)
    monkeypatch.setattr(torch.Tensor, "is_pinned", lambda tensor, *args: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    return lambda tensor: any(tensor is m for m in moved)


class Probe(nn.Module):
    """Records what its train_step and forward receive."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1, 1)
        self.seen = []

    def forward(self, img, img_metas):
        self.seen.append((img, img_metas))
        return self.fc(img.sum().view(1, 1)).sum()

    def train_step(self, data_batch, optimizer=None):
        loss = self(data_batch["img"], data_batch["img_metas"])
        return {"loss": loss, "log_vars": {}, "num_samples": len(data_batch["img_metas"])}


def _batch():
    samples = [
        {
            "img": DataContainer(torch.ones(1, 2, 2), stack=True),
            "img_metas": DataContainer({"idx": i, "scale": torch.tensor([i, 1.0])}, cpu_only=True),
        }
        for i in range(4)
    ]
    return collate(samples, samples_per_gpu=2)  # two chunks: merged for the one device


def _check(seen, moved, batch):
    assert len(seen) == 1
    img, metas = seen[0]
    assert moved(img)  # the image went "to the GPU"
    assert [meta["idx"] for meta in metas] == [0, 1, 2, 3]
    originals = [meta["scale"] for chunk in batch["img_metas"].data for meta in chunk]
    for meta, original in zip(metas, originals):
        assert not moved(meta["scale"]) and meta["scale"] is original  # untouched, on the CPU


def test_mmddp_keeps_cpu_only_fields_on_the_cpu(gloo_group, fake_cuda):
    model = Probe()
    ddp = MMDistributedDataParallel(model, device_ids=None)
    # What DDP does with a CUDA module: device_ids=[0] makes _pre_forward move the inputs.
    ddp.device_ids, ddp.device_type = [0], "cuda"
    batch = _batch()
    ddp.train_step(batch, None)
    _check(model.seen, fake_cuda, batch)
    model.seen.clear()
    ddp(img=batch["img"], img_metas=batch["img_metas"])  # forward, as in evaluation
    _check(model.seen, fake_cuda, batch)
    assert "forward" not in model.__dict__


def test_fsdp_keeps_cpu_only_fields_on_the_cpu(gloo_group, fake_cuda):
    model = Probe()
    fsdp = MMFullyShardedDataParallel(model)
    batch = _batch()
    fsdp.train_step(batch, None)  # a first step on the CPU: FSDP's lazy set-up is done
    model.seen.clear()
    # What FSDP2 does on CUDA: the root's pre-forward moves args and kwargs to its device.
    fsdp.device_type = "cuda"
    fsdp.module._get_fsdp_state()._device = torch.device("cuda", 0)
    fsdp.train_step(batch, None)
    _check(model.seen, fake_cuda, batch)
