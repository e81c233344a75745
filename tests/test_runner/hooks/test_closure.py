"""ClosureHook: runs its function at its stage in a real run; bad arguments."""

import pytest

from mmpar.runner.hooks import HOOKS, ClosureHook


def test_closure_hook_runs_fn_at_its_stage(run_two_epochs):
    seen = []
    epoch_end = ClosureHook(
        "after_train_epoch", lambda runner: seen.append(("epoch", runner.epoch))
    )
    every_iter = ClosureHook(
        "after_iter", lambda runner: seen.append((runner.mode, runner.inner_iter))
    )
    runner = run_two_epochs(epoch_end, every_iter)
    per_epoch = [("train", 0), ("train", 1), ("epoch", None), ("val", 0), ("val", 1)]
    expected = []
    for epoch in range(2):
        expected += [(k, epoch) if k == "epoch" else (k, i) for k, i in per_epoch]
    assert seen == expected
    assert "after_val_iter" in every_iter.get_triggered_stages()
    assert "ClosureHook" in runner.get_hook_info()


def test_closure_hook_rejects_bad_arguments():
    with pytest.raises(AssertionError, match="not a hook stage"):
        ClosureHook("after_trian_epoch", print)
    with pytest.raises(AssertionError, match="must be callable"):
        HOOKS.build(dict(type="ClosureHook", fn_name="after_run", fn="print"))
