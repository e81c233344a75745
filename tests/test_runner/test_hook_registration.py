"""BaseRunner's register_* methods (mmpar/runner/hook_registration.py)."""

import pytest

from mmpar.runner import HOOKS, Hook


@HOOKS.register_module()
class ZzstepLrUpdaterHook(Hook):
    def __init__(self, step, by_epoch=True):
        self.step, self.by_epoch = step, by_epoch


@HOOKS.register_module()
class CamelPolicyMomentumUpdaterHook(Hook):
    def __init__(self, by_epoch=True):
        self.by_epoch = by_epoch


@HOOKS.register_module()
class H4ListLoggerHook(Hook):
    def __init__(self, interval=10, by_epoch=True):
        self.interval, self.by_epoch = interval, by_epoch


def _types_and_priorities(runner):
    return [(type(h).__name__, h.priority) for h in runner.hooks]


def test_register_training_hooks_types_priorities_and_config_conventions(make_runner):
    runner = make_runner()
    lr_config = dict(policy="zzstep", step=[1])
    runner.register_training_hooks(
        lr_config=lr_config,
        optimizer_config=dict(grad_clip=None),
        checkpoint_config=dict(interval=1),
        log_config=dict(interval=7, hooks=[dict(type="H4ListLoggerHook")]),
        momentum_config=dict(policy="CamelPolicy"),
        custom_hooks_config=[dict(type="DistSamplerSeedHook", priority="HIGHEST")],
    )
    assert lr_config == dict(policy="zzstep", step=[1])  # not mutated
    assert _types_and_priorities(runner) == [
        ("DistSamplerSeedHook", 0),
        ("ZzstepLrUpdaterHook", 10),
        ("CamelPolicyMomentumUpdaterHook", 30),
        ("OptimizerHook", 40),
        ("CheckpointHook", 50),
        ("IterTimerHook", 70),
        ("H4ListLoggerHook", 90),
    ]
    assert runner.hooks[-1].interval == 7


def test_nan_guard_is_opt_in_and_timer_can_be_disabled(make_runner):
    runner = make_runner()
    runner.register_training_hooks(None, timer_config=None)
    assert runner.hooks == []
    runner.register_training_hooks(None, nan_guard_config=False)
    assert _types_and_priorities(runner) == [("IterTimerHook", 70)]
    for opt_in in (True, dict(type="NanGuardHook")):
        runner = make_runner()
        runner.register_training_hooks(dict(policy="zzstep", step=[1]), nan_guard_config=opt_in)
        assert _types_and_priorities(runner) == [
            ("ZzstepLrUpdaterHook", 10),
            ("NanGuardHook", 10),
            ("IterTimerHook", 70),
        ]


def test_iter_runner_defaults_hooks_to_by_epoch_false(make_runner):
    runner = make_runner("iter", max_iters=4)
    runner.register_training_hooks(
        dict(policy="zzstep", step=[1]),
        checkpoint_config=dict(interval=2),
        log_config=dict(interval=1, hooks=[dict(type="H4ListLoggerHook")]),
    )
    by_epoch = {type(h).__name__: getattr(h, "by_epoch", None) for h in runner.hooks}
    assert by_epoch["ZzstepLrUpdaterHook"] is False
    assert by_epoch["CheckpointHook"] is False and by_epoch["H4ListLoggerHook"] is False


def test_lr_config_without_policy_is_a_clear_error(make_runner):
    with pytest.raises(KeyError, match="policy"):
        make_runner().register_training_hooks(dict(step=[1]))


@pytest.mark.parametrize(
    "configs,prefix",
    [
        (dict(custom_hooks_config=["MyPluginHook"]), "custom_hooks: item [0] is str"),
        (dict(custom_hooks_config="MyPluginHook"), "custom_hooks: the value is str"),
        (dict(log_config=dict(interval=1, hooks=["TextLoggerHook"])), "log_config: item hooks[0]"),
    ],
)
def test_hook_given_as_a_name_is_a_one_line_config_error(make_runner, configs, prefix):
    from mmpar.utils.config_args import ConfigArgumentError

    with pytest.raises(ConfigArgumentError) as info:  # a TypeError, as register_hook raised
        make_runner().register_training_hooks(lr_config=None, **configs)
    message = str(info.value)
    assert message.startswith(prefix) and "dict(type=" in message and "{type:" in message


def test_missing_required_argument_of_a_kwargs_hook_names_key_and_argument(make_runner):
    from mmpar.utils.config_args import ConfigArgumentError

    # StepLrUpdaterHook(step, ..., **kwargs): the **kwargs no longer hide the missing step.
    with pytest.raises(ConfigArgumentError, match="^lr_config: StepLrUpdaterHook .*'step'"):
        make_runner().register_training_hooks(lr_config=dict(policy="step"))
