"""Fixtures of the hook tests (the runner fixtures are in tests/test_runner/conftest.py)."""

import pytest

from mmpar.runner import OptimizerHook


@pytest.fixture
def run_two_epochs(make_runner, make_loader):
    """Train and validate 2 epochs of 2 iterations each with ``hooks`` at NORMAL priority and
    ``last`` (a hook that must see the others' effects) at LOWEST; return the runner.
    """

    def run(*hooks, last=None):
        runner = make_runner(max_epochs=2)
        runner.register_hook(OptimizerHook(), "ABOVE_NORMAL")
        for hook in hooks:
            runner.register_hook(hook, "NORMAL")
        if last is not None:
            runner.register_hook(last, "LOWEST")
        # 8 samples in batches of 4: 2 train and 2 val iterations per epoch.
        runner.run([make_loader(n=8), make_loader(n=8)], [("train", 1), ("val", 1)])
        return runner

    return run
