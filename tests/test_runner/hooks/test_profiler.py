"""ProfilerHook: a real torch.profiler trace is written for the profiled iterations."""

import json
import logging
import os

import pytest
import torch
from torch import nn

from mmpar.runner.hooks import HOOKS
from mmpar.runner.hooks.profiler import ProfilerHook

torch.set_num_threads(1)


class FakeRunner:
    def __init__(self, hook, work_dir, max_epochs=2, iters_per_epoch=3, rank=0):
        self.hook = hook
        self.work_dir = str(work_dir)
        self.timestamp = "20240101_000000"
        self.logger = logging.getLogger("test_profiler")
        self.rank = rank
        self.max_epochs = max_epochs
        self.max_iters = max_epochs * iters_per_epoch
        self.iters_per_epoch = iters_per_epoch
        self.epoch = self.iter = 0
        self.model = nn.Linear(8, 8)
        self.trace_existed_after = {}

    def run(self, stop_after_iters=None):
        self.hook.before_run(self)
        try:
            for _ in range(self.max_epochs):
                for _ in range(self.iters_per_epoch):
                    if self.iter == stop_after_iters:
                        return
                    self.model(torch.randn(4, 8)).sum().backward()
                    self.hook.after_train_iter(self)
                    self.iter += 1
                    self.trace_existed_after[self.iter] = self.hook.profiler is None
                self.hook.after_train_epoch(self)
                self.epoch += 1
        finally:
            self.hook.after_run(self)


def load_trace(path):
    with open(path) as f:
        trace = json.load(f)
    names = {event.get("name", "") for event in trace["traceEvents"]}
    return trace, names


def test_registered():
    assert HOOKS.get("ProfilerHook") is ProfilerHook


def test_by_iter_writes_chrome_trace(tmp_path):
    hook = ProfilerHook(by_epoch=False, profile_iters=2, activities=["cpu"])
    runner = FakeRunner(hook, tmp_path)
    runner.run()
    path = tmp_path / "profiler_20240101_000000.json"
    trace, names = load_trace(path)
    assert "aten::addmm" in names  # the Linear forward was recorded
    # The profiler stopped right after the 2nd iteration, not at the end of the run.
    assert runner.trace_existed_after[1] is False and runner.trace_existed_after[2] is True


def test_by_epoch_custom_path_and_shapes(tmp_path):
    hook = ProfilerHook(
        profile_iters=1, activities=["cpu"], record_shapes=True, json_trace_path="t/trace.json"
    )
    os.makedirs(tmp_path / "t")
    runner = FakeRunner(hook, tmp_path)
    runner.run()
    trace, _ = load_trace(tmp_path / "t" / "trace.json")
    assert any("Input Dims" in e.get("args", {}) for e in trace["traceEvents"])
    assert runner.trace_existed_after[3] is False  # stopped at the end of epoch 1, not before


def test_stops_in_after_run_when_training_ends_early(tmp_path):
    hook = ProfilerHook(by_epoch=False, profile_iters=5, activities=["cpu"])
    FakeRunner(hook, tmp_path).run(stop_after_iters=1)
    load_trace(tmp_path / "profiler_20240101_000000.json")
    assert hook.profiler is None


def test_log_trace_handler_with_schedule(tmp_path, caplog):
    hook = ProfilerHook(
        by_epoch=False,
        profile_iters=3,
        activities=["cpu"],
        schedule=dict(wait=0, warmup=1, active=1, repeat=1),
        on_trace_ready=dict(type="log_trace", sort_by="cpu_time_total", row_limit=5),
    )
    with caplog.at_level(logging.INFO, logger="test_profiler"):
        FakeRunner(hook, tmp_path).run()
    # The handler logged a key_averages table (its op rows depend on the profiler backend).
    assert any("# of Calls" in r.getMessage() for r in caplog.records)
    assert not any(name.endswith(".json") for name in os.listdir(tmp_path))


def test_nonzero_rank_does_not_profile(tmp_path):
    hook = ProfilerHook(by_epoch=False, activities=["cpu"])
    FakeRunner(hook, tmp_path, rank=1).run()
    assert os.listdir(tmp_path) == []


def test_cuda_activity_dropped_without_cuda():
    if torch.cuda.is_available():
        pytest.skip("checks the CPU-only fallback")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        hook = ProfilerHook()
    assert hook.activities == [torch.profiler.ProfilerActivity.CPU]


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="profile_iters"):
        ProfilerHook(profile_iters=0)
    with pytest.raises(ValueError, match="unknown activity"):
        ProfilerHook(activities=["tpu"])
    with pytest.raises(TypeError, match="activities must be a list"):
        ProfilerHook(activities="cpu")
    with pytest.raises(ValueError, match="exceeds the 2 epochs"):
        FakeRunner(ProfilerHook(profile_iters=3, activities=["cpu"]), tmp_path).run()
    with pytest.raises(ValueError, match="log_trace"):
        hook = ProfilerHook(activities=["cpu"], on_trace_ready=dict(type="nope"))
        FakeRunner(hook, tmp_path).run()
