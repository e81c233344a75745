"""Small models and helpers shared by the FSDP checkpoint tests (sharded vs plain training)."""

import copy

import torch
from torch import nn

from mmpar.parallel import MMFullyShardedDataParallel


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return torch.relu(self.bn(self.fc(x)))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.block = Block()
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.block(x))

    def train_step(self, data_batch, optimizer=None, **kwargs):
        x, y = data_batch
        loss = ((self(x).squeeze(-1) - y) ** 2).mean()
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": len(x)}


def _optimizer(model):
    """SGD with two param groups, the head's first, so numbering follows the groups."""
    head = [p for n, p in model.named_parameters() if "head" in n]
    rest = [p for n, p in model.named_parameters() if "head" not in n]
    return torch.optim.SGD([{"params": head, "lr": 0.05}, {"params": rest}], lr=0.1, momentum=0.9)


def _steps(model, optimizer, steps=2, start=0):
    for step in range(start, start + steps):
        g = torch.Generator().manual_seed(step)
        x, y = torch.randn(8, 4, generator=g), torch.randn(8, generator=g)
        optimizer.zero_grad()
        model.train_step((x, y), optimizer)["loss"].backward()
        optimizer.step()


def _trained_pair():
    plain = Mlp()
    sharded = MMFullyShardedDataParallel(copy.deepcopy(plain), wrap_modules=["Block"])
    plain_opt, sharded_opt = _optimizer(plain), _optimizer(sharded)
    _steps(plain, plain_opt)
    _steps(sharded, sharded_opt)
    return plain, plain_opt, sharded, sharded_opt


def _assert_same_state(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], torch.Tensor):
            assert type(b[key]) is torch.Tensor, key  # plain tensors, no DTensor shards
            torch.testing.assert_close(a[key], b[key], msg=key)
        elif isinstance(a[key], dict):
            _assert_same_state(a[key], b[key])
        elif isinstance(a[key], list):
            assert len(a[key]) == len(b[key])
            for x, y in zip(a[key], b[key]):
                _assert_same_state(x, y) if isinstance(x, dict) else None
        else:
            assert a[key] == b[key], key
