"""call_hook is mmcv's loop over the live hook list: every hook, in order, at every stage."""

import pytest

from mmpar.runner import Hook


class Log(Hook):
    """Records ``(name, stage)`` of every call it gets in a shared list."""

    def __init__(self, name, calls):
        self.name, self.calls = name, calls


class IterOnly(Log):
    def before_iter(self, runner):
        self.calls.append((self.name, "before_iter", runner.mode))


class TrainIterOnly(Log):
    def after_train_iter(self, runner):
        self.calls.append((self.name, "after_train_iter"))


class HidesItsStages(TrainIterOnly):
    """get_triggered_stages is public API a hook may override: it must not decide the calls."""

    def get_triggered_stages(self):
        return []


def _run(runner, make_loader, workflow=(("train", 1),)):
    loaders = [make_loader(8, 4) for _ in workflow]
    runner.run(loaders, list(workflow))


def test_a_hook_overriding_only_before_iter_is_called_at_train_and_val_iters(
    make_runner, make_loader
):
    calls = []
    runner = make_runner(max_epochs=1)
    runner.register_hook(IterOnly("a", calls))
    _run(runner, make_loader, (("train", 1), ("val", 1)))
    assert calls == [("a", "before_iter", "train")] * 2 + [("a", "before_iter", "val")] * 2


def test_overridden_get_triggered_stages_does_not_hide_a_stage(make_runner, make_loader):
    calls = []
    runner = make_runner(max_epochs=1)
    runner.register_hook(HidesItsStages("a", calls))
    _run(runner, make_loader)
    assert calls == [("a", "after_train_iter")] * 2


def test_a_method_assigned_on_the_instance_is_called(make_runner, make_loader):
    calls = []
    before, during = Log("before", calls), Log("during", calls)
    before.after_train_iter = lambda runner: calls.append(("before", runner.iter))
    # A generic method on the instance is what Hook's after_val_iter forwards to.
    before.after_iter = lambda runner: calls.append(("generic", runner.mode))

    class Assigner(Log):
        def after_train_iter(self, runner):
            if runner.iter == 0:  # after the stage was called once
                during.after_train_iter = lambda r: calls.append(("during", r.iter))

    runner = make_runner(max_epochs=1)
    runner.register_hook(Assigner("x", calls), "HIGHEST")
    runner.register_hook(before)
    runner.register_hook(during)
    _run(runner, make_loader, (("train", 1), ("val", 1)))
    # As in mmcv's loop: "during" gets its new method in the stage where it was assigned.
    train = [("before", 0), ("during", 0), ("before", 1), ("during", 1)]
    assert calls == train + [("generic", "val")] * 2


def test_a_hook_registered_during_the_run_is_called(make_runner, make_loader):
    calls = []
    late = TrainIterOnly("late", calls)

    class Registers(Log):
        def after_train_epoch(self, runner):
            if runner.epoch == 0:
                runner.register_hook(late)

    runner = make_runner(max_epochs=2)
    runner.register_hook(TrainIterOnly("early", calls))
    runner.register_hook(Registers("r", calls))
    _run(runner, make_loader)
    assert (
        calls
        == [("early", "after_train_iter")] * 2
        + [
            ("early", "after_train_iter"),
            ("late", "after_train_iter"),
        ]
        * 2
    )


def test_replacing_a_hook_in_runner_hooks_takes_effect(make_runner, make_loader):
    # mmaction2's LongShortCycleHook does runner.hooks[index] = new_hook in before_run: the
    # list keeps its length, the new hook must be called and the old one no longer.
    calls = []

    class Replacer(Log):
        def before_run(self, runner):
            index = next(i for i, h in enumerate(runner.hooks) if getattr(h, "name", "") == "old")
            runner.hooks[index] = TrainIterOnly("new", calls)

    runner = make_runner(max_epochs=1)
    runner.register_hook(TrainIterOnly("old", calls), "HIGHEST")
    runner.register_hook(Replacer("r", calls))
    _run(runner, make_loader)
    assert calls == [("new", "after_train_iter")] * 2


def test_a_hook_inserted_during_a_stage_is_called_later_in_that_stage(make_runner, make_loader):
    # As in a loop over the live list: a hook put after the current one runs in the same stage.
    calls = []
    added = TrainIterOnly("added", calls)

    class Inserter(TrainIterOnly):
        def after_train_iter(self, runner):
            super().after_train_iter(runner)
            if added not in runner.hooks:
                runner.hooks.append(added)

    runner = make_runner(max_epochs=1)
    runner.register_hook(Inserter("ins", calls))
    _run(runner, make_loader)
    assert calls == [("ins", "after_train_iter"), ("added", "after_train_iter")] * 2


def test_a_plain_list_assigned_to_the_runner_is_called_in_full(make_runner, make_loader):
    calls = []
    runner = make_runner(max_epochs=1)
    hook = IterOnly("a", calls)
    hook.priority = 50
    runner._hooks = [hook]
    _run(runner, make_loader)
    assert calls == [("a", "before_iter", "train")] * 2


class Generic(Log):
    """Overrides only the generic ``after_iter``: called for after_train_iter too."""

    def after_iter(self, runner):
        self.calls.append((self.name, "after_iter"))


class Changer(TrainIterOnly):
    """Records its call, then, the first time, changes ``target`` with ``change(target, self)``."""

    def __init__(self, name, calls, change):
        super().__init__(name, calls)
        self.change, self.target = change, None

    def after_train_iter(self, runner):
        super().after_train_iter(runner)
        if self.change is not None:
            self.change(self.target, self)
            self.change = None


def _named(hooks, name):
    return next(h for h in hooks if getattr(h, "name", "") == name)


CHANGES = {
    "remove a later hook": lambda hooks, me: hooks.remove(_named(hooks, "d")),
    "remove itself": lambda hooks, me: hooks.remove(me),
    "remove an earlier hook": lambda hooks, me: hooks.remove(_named(hooks, "a")),
    "insert at the front": lambda hooks, me: hooks.insert(0, TrainIterOnly("new", me.calls)),
    "append": lambda hooks, me: hooks.append(TrainIterOnly("new", me.calls)),
    "replace a later hook": lambda hooks, me: hooks.__setitem__(
        hooks.index(_named(hooks, "d")), TrainIterOnly("new", me.calls)
    ),
    "clear": lambda hooks, me: hooks.clear(),
    "two changes": lambda hooks, me: (
        hooks.remove(_named(hooks, "e")),
        hooks.insert(hooks.index(me) + 1, Generic("new", me.calls)),
    ),
    "reverse": lambda hooks, me: hooks.reverse(),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_during_a_stage_goes_on_as_mmcvs_loop_over_the_live_list(make_runner, change):
    def build(calls):
        # Hooks with only Hook's empty methods (plain Log) between the others; "g" is called
        # through its generic method.
        return [
            TrainIterOnly("a", calls),
            Log("skip1", calls),
            Changer("x", calls, CHANGES[change]),
            Log("skip2", calls),
            Generic("g", calls),
            TrainIterOnly("d", calls),
            Log("skip3", calls),
            TrainIterOnly("e", calls),
        ]

    runner = make_runner(max_epochs=1)
    expected, got = [], []
    reference = build(expected)
    _named(reference, "x").target = reference
    for hook in build(got):
        runner.register_hook(hook)
    _named(runner.hooks, "x").target = runner.hooks
    for _ in range(2):  # the change, then the stage over the changed list
        for hook in reference:  # mmcv's call_hook: a loop over the live list
            hook.after_train_iter(runner)
        runner.call_hook("after_train_iter")
        assert got == expected


def test_a_stage_method_assigned_on_a_hook_called_through_its_generic_one_wins(make_runner):
    calls = []
    generic = Generic("g", calls)
    runner = make_runner(max_epochs=1)
    runner.register_hook(generic)
    runner.call_hook("after_train_iter")  # Hook's after_train_iter forwards to g's after_iter
    generic.after_train_iter = lambda r: calls.append(("g", "own after_train_iter"))
    runner.call_hook("after_train_iter")
    runner.call_hook("after_val_iter")  # Hook's after_val_iter still forwards to after_iter
    assert calls == [("g", "after_iter"), ("g", "own after_train_iter"), ("g", "after_iter")]


class ReturnsTrue(Log):
    def after_train_iter(self, runner):
        self.calls.append(self.name)
        return True  # a truthy result must not end the stage


def test_every_hook_of_a_stage_runs_in_order_whatever_they_return(make_runner, make_loader):
    calls = []
    runner = make_runner(max_epochs=1)
    for name in "abc":
        runner.register_hook(ReturnsTrue(name, calls))
    _run(runner, make_loader)
    assert calls == list("abcabc")


class Raises(Log):
    def before_train_iter(self, runner):
        self.calls.append(self.name)
        raise KeyError("from a hook")


class Records(Log):
    def before_train_iter(self, runner):
        self.calls.append(self.name)


def test_a_hook_error_ends_the_stage_and_propagates(make_runner, make_loader):
    calls = []
    runner = make_runner(max_epochs=1)
    runner.register_hook(Raises("raises", calls), "HIGH")
    runner.register_hook(Records("after", calls), "LOW")
    with pytest.raises(KeyError, match="from a hook"):
        _run(runner, make_loader)
    assert calls == ["raises"]


def test_a_custom_stage_is_called_on_every_hook(make_runner):
    calls = []
    hook = Log("a", calls)
    hook.my_stage = lambda runner: calls.append(("a", "my_stage"))
    runner = make_runner(max_epochs=1)
    runner.register_hook(hook)
    runner.call_hook("my_stage")
    assert calls == [("a", "my_stage")]
    with pytest.raises(AttributeError, match="other_stage"):
        runner.call_hook("other_stage")  # a stage no hook has fails, as in mmcv
