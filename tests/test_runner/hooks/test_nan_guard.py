"""NanGuardHook: a non-finite loss or log value stops training before the step and the save."""

import re
from types import SimpleNamespace

import pytest
import torch
import torch.nn as nn

from mmpar.runner import NanGuardHook


class NanAt(nn.Module):
    def __init__(self, at):
        super().__init__()
        self.linear = nn.Linear(4, 1)
        self.at, self.calls = at, 0

    def train_step(self, batch, optimizer):
        x, y = batch
        self.calls += 1
        loss = ((self.linear(x).squeeze(-1) - y) ** 2).mean()
        aux = loss * 0
        if self.calls == self.at:
            loss = loss * float("nan")
            aux = aux + float("inf")
        return {
            "loss": loss,
            "log_vars": {"loss": loss.item(), "aux": aux.item()},
            "num_samples": len(x),
        }


def test_nan_guard_stops_before_step_and_save(make_runner, make_loader, tmp_path):
    model = NanAt(at=3)
    runner = make_runner(model=model, max_epochs=2)
    runner.register_training_hooks(
        None,
        optimizer_config={},
        checkpoint_config=dict(interval=1, by_epoch=False),
        nan_guard_config=True,
    )
    assert isinstance(runner.hooks[0], NanGuardHook)
    with pytest.raises(
        FloatingPointError, match=r"iteration 3 \(epoch 2, batch 1.*loss=nan, aux=inf"
    ):
        runner.run([make_loader(8, 4)], [("train", 1)])
    work = tmp_path / "work"
    assert sorted(p.name for p in work.glob("*.pth")) == ["iter_1.pth", "iter_2.pth", "latest.pth"]
    last = torch.load(work / "latest.pth", weights_only=True)["state_dict"]
    assert torch.equal(last["linear.weight"], model.linear.weight)  # no step after the NaN
    assert torch.isfinite(model.linear.weight).all()


@pytest.mark.parametrize(
    ("log_vars", "bad"),
    [
        ({"a": 1e308, "b": 1e308}, None),  # the quick sum overflows; each value is finite
        ({"a": float("inf"), "b": -float("inf")}, "a=inf, b=-inf"),  # the sum is nan
        ({"acc": torch.tensor(float("nan"))}, "acc=nan"),
        ({"name": "x", "n": float("nan")}, "n=nan"),  # a string: checked term by term
        ({"vec": torch.tensor([1.0, float("inf")])}, "vec=tensor"),
    ],
)
def test_nan_guard_checks_every_log_value(log_vars, bad):
    runner = SimpleNamespace(
        outputs={"loss": torch.tensor(0.5), "log_vars": log_vars}, iter=0, epoch=0, inner_iter=0
    )
    if bad is None:
        NanGuardHook().after_train_iter(runner)
    else:
        with pytest.raises(FloatingPointError, match=re.escape(bad)):
            NanGuardHook().after_train_iter(runner)
