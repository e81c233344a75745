"""EmptyCacheHook: releases the CUDA cache at the configured stages of a real run."""

import pytest
import torch

from mmpar.runner.hooks import HOOKS, EmptyCacheHook, Hook


class StageTracer(Hook):
    """Appends the name of every stage it runs at to ``events``."""

    def __init__(self, events):
        self.events = events
        for stage in self.stages:
            setattr(self, stage, lambda runner, stage=stage: events.append(stage))


def expected_stages(per_iter_release, before_epoch_release, after_epoch_release):
    """The tracer's stages with 'E' where the cache must be released (tracer runs last)."""
    events = ["before_run"]
    for _ in range(2):
        for mode in ("train", "val"):
            events += ["E"] * before_epoch_release + [f"before_{mode}_epoch"]
            for _ in range(2):
                events += [f"before_{mode}_iter"] + ["E"] * per_iter_release
                events += [f"after_{mode}_iter"]
            events += ["E"] * after_epoch_release + [f"after_{mode}_epoch"]
    return events + ["after_run"]


@pytest.mark.parametrize(
    "flags",
    [
        dict(before_epoch=True, after_epoch=True, after_iter=True),
        dict(),  # mmcv's defaults: after every epoch only
        dict(before_epoch=True, after_epoch=False),
    ],
)
def test_empty_cache_called_at_configured_stages(monkeypatch, run_two_epochs, flags):
    events = []
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: events.append("E"))
    hook = HOOKS.build(dict(type="EmptyCacheHook", **flags))
    run_two_epochs(hook, last=StageTracer(events))
    assert events == expected_stages(
        flags.get("after_iter", False),
        flags.get("before_epoch", False),
        flags.get("after_epoch", True),
    )


def test_empty_cache_does_nothing_without_cuda(monkeypatch, run_two_epochs):
    calls = []
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: calls.append(1))
    run_two_epochs(EmptyCacheHook(True, True, True))
    assert calls == []
