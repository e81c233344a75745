"""Registering hooks: the runner's mmcv 1.x ``register_hook`` and ``register_*_hook(s)``.

``register_hook`` keeps the hook list sorted by priority; each ``register_*`` method builds a
hook from its config dict (or takes a ready Hook instance) and registers it at its fixed
priority; :meth:`HookRegistrationMixin.register_training_hooks` does all of them from the usual
config keys.
"""

from __future__ import annotations

import copy
import difflib
from typing import Any, Callable, Union, cast

from mmpar.utils.compat_errors import CheckTypeError, MessageKeyError
from mmpar.utils.config_args import ConfigArgumentError, config_item_context
from mmpar.utils.registry import config_error_context

from .checkpointing.checkpointer import Checkpointer
from .hooks import HOOKS, Hook
from .hooks.hook import StepContextHook
from .priority import Priority, get_priority

HookConfig = Union[dict, Hook, None]


class MissingPolicyError(MessageKeyError, AssertionError):
    """An lr/momentum config without ``policy`` (mmcv 1.x asserted it: also an AssertionError)."""


class HookRegistrationMixin:
    """BaseRunner's hook list: registration by priority, and the ``register_*`` config methods.

    The runner attributes it uses are declared below (BaseRunner sets them in ``__init__``).
    """

    # Declarations only (no values): what the mixin reads of BaseRunner, for the type checker.
    _hooks: list[Hook]  # in call order
    _step_context_hooks: list[StepContextHook]
    checkpointer: Checkpointer

    # ``by_epoch`` that register_training_hooks gives the LR, momentum, checkpoint and logger
    # configs that do not set it (IterBasedRunner: False); None keeps the hooks' own default.
    _config_by_epoch: bool | None = None

    def register_hook(self, hook: Hook, priority: Union[int, str, Priority] = "NORMAL") -> None:
        """Insert ``hook`` by priority; equal priorities keep their registration order.

        Raises:
            TypeError: ``hook`` is not a :class:`Hook`.
            ValueError: ``hook`` already has a ``priority`` (registered twice?).
        """
        if not isinstance(hook, Hook):
            raise CheckTypeError(f"hook must be a Hook instance, but got {type(hook).__name__}")
        if hasattr(hook, "priority"):
            raise ValueError(
                f'{type(hook).__name__} already has a "priority" attribute: it is reserved for '
                "the runner (was this hook instance registered twice?)"
            )
        hook.priority = get_priority(priority)
        index = len(self._hooks)
        while index > 0 and self._hooks[index - 1].priority > hook.priority:
            index -= 1
        self._hooks.insert(index, hook)
        self._update_step_context_hooks()

    def _update_step_context_hooks(self) -> None:
        """Note the hooks whose ``train_step_context`` wraps ``train_step``.

        Called on registration and when each workflow phase begins (after ``before_run``),
        so a hook put into ``runner.hooks`` directly gets its context from the next phase on.
        """
        # A hook without one has Hook's ``train_step_context = None``: not callable.
        self._step_context_hooks = cast(
            "list[StepContextHook]",
            [h for h in self._hooks if callable(getattr(h, "train_step_context", None))],
        )

    def get_hook_info(self) -> str:
        """Return a table of which hooks run at each stage, with their priorities."""
        stage_hooks: dict[str, list[str]] = {stage: [] for stage in Hook.stages}
        for hook in self._hooks:
            try:
                level = Priority(hook.priority).name
            except ValueError:
                level = str(hook.priority)
            for stage in hook.get_triggered_stages():
                stage_hooks[stage].append(f"({level:<12}) {type(hook).__name__:<35}")
        lines = []
        for stage, hooks in stage_hooks.items():
            if hooks:
                lines.append(f"{stage}:\n" + "\n".join(hooks) + "\n" + "-" * 50)
        return "\n".join(lines)

    def register_hook_from_cfg(self, hook_cfg: dict) -> None:
        """Build a hook from a config dict (``priority`` key optional) and register it."""
        hook_cfg = copy.deepcopy(hook_cfg)
        priority = hook_cfg.pop("priority", "NORMAL")
        self.register_hook(HOOKS.build(hook_cfg), priority=priority)

    def register_lr_hook(self, lr_config: HookConfig) -> None:
        """Register the LR updater (``policy='step'`` → ``StepLrUpdaterHook``), VERY_HIGH."""
        self._register_policy_hook(lr_config, "LrUpdaterHook", "lr_config", "VERY_HIGH")

    def register_momentum_hook(self, momentum_config: HookConfig) -> None:
        """Register the momentum updater (``policy`` → ``<Policy>MomentumUpdaterHook``), HIGH."""
        self._register_policy_hook(
            momentum_config, "MomentumUpdaterHook", "momentum_config", "HIGH"
        )

    def _register_policy_hook(
        self, cfg: HookConfig, suffix: str, cfg_name: str, priority: str
    ) -> None:
        if cfg is None:
            return
        if isinstance(cfg, dict):
            cfg = copy.deepcopy(cfg)
            if "policy" not in cfg:
                raise MissingPolicyError(
                    f'{cfg_name} needs a "policy" key (e.g. policy="step"), got keys {sorted(cfg)}'
                )
            policy = cfg.pop("policy")
            # mmcv: 'step' → 'Step'; names already in CamelCase ('CosineAnnealing') stay.
            name = (
                policy.title() if isinstance(policy, str) and policy == policy.lower() else policy
            )
            cfg["type"] = f"{name}{suffix}"
            if HOOKS.get(cfg["type"]) is None:
                policies = [n[: -len(suffix)] for n in HOOKS.module_dict if n.endswith(suffix)]
                close = difflib.get_close_matches(str(name), policies, n=3, cutoff=0.5)
                hint = f" Did you mean: {', '.join(close)}?" if close else ""
                raise KeyError(
                    f'unknown policy "{policy}" (no {cfg["type"]} in the hook registry).{hint} '
                    f"Known policies: {', '.join(sorted(policies))}"
                )
            hook = HOOKS.build(cfg)
        else:
            hook = cfg
        self.register_hook(hook, priority=priority)

    def _register_typed_hook(self, cfg: HookConfig, default_type: str, priority: str) -> None:
        if cfg is None:
            return
        if isinstance(cfg, dict):
            cfg = copy.deepcopy(cfg)
            cfg.setdefault("type", default_type)
            hook = HOOKS.build(cfg)
        else:
            hook = cfg
        self.register_hook(hook, priority=priority)

    def register_optimizer_hook(self, optimizer_config: HookConfig) -> None:
        """Register the optimizer hook (default type ``OptimizerHook``), ABOVE_NORMAL."""
        self._register_typed_hook(optimizer_config, "OptimizerHook", "ABOVE_NORMAL")

    def register_checkpoint_hook(self, checkpoint_config: HookConfig) -> None:
        """Register the checkpoint hook (default type ``CheckpointHook``), NORMAL.

        ``sharded=True`` is checked against the model here, before the run starts.
        """
        self._register_typed_hook(checkpoint_config, "CheckpointHook", "NORMAL")
        if isinstance(checkpoint_config, dict) and checkpoint_config.get("sharded"):
            self.checkpointer.use_sharded()

    def register_timer_hook(self, timer_config: HookConfig) -> None:
        """Register the iteration timer (default type ``IterTimerHook``), LOW."""
        self._register_typed_hook(timer_config, "IterTimerHook", "LOW")

    def register_nan_guard_hook(self, nan_guard_config: Union[dict, Hook, bool, None]) -> None:
        """Register the NaN guard (default type ``NanGuardHook``), VERY_HIGH; None/False: off."""
        if nan_guard_config is None or nan_guard_config is False:
            return
        if nan_guard_config is True:
            nan_guard_config = {}
        self._register_typed_hook(nan_guard_config, "NanGuardHook", "VERY_HIGH")

    def register_logger_hooks(self, log_config: dict | None) -> None:
        """Register ``log_config['hooks']`` with ``interval=log_config['interval']``, VERY_LOW."""
        if log_config is None:
            return
        if "interval" not in log_config or "hooks" not in log_config:
            raise KeyError(
                'log_config needs "interval" and "hooks", e.g. '
                f"dict(interval=50, hooks=[dict(type='TextLoggerHook')]); got {sorted(log_config)}"
            )
        for i, info in enumerate(log_config["hooks"]):
            if isinstance(info, Hook):
                self.register_hook(info, priority="VERY_LOW")
                continue
            _check_hook_item(info, f"hooks[{i}]")
            with config_item_context(f"hooks[{i}]"):
                hook = HOOKS.build(
                    copy.deepcopy(info), default_args={"interval": log_config["interval"]}
                )
            self.register_hook(hook, priority="VERY_LOW")

    def register_custom_hooks(self, custom_config: Union[list, dict, Hook, None]) -> None:
        """Register user hooks: dicts (with optional ``priority``) or Hook instances (NORMAL)."""
        if custom_config is None:
            return
        items = custom_config if isinstance(custom_config, list) else [custom_config]
        for i, item in enumerate(items):
            if isinstance(item, dict):
                with config_item_context(f"[{i}]" if items is custom_config else ""):
                    self.register_hook_from_cfg(item)
            else:
                _check_hook_item(item, f"[{i}]" if items is custom_config else "")
                self.register_hook(item, priority="NORMAL")

    def register_training_hooks(
        self,
        lr_config: HookConfig,
        optimizer_config: HookConfig = None,
        checkpoint_config: HookConfig = None,
        log_config: dict | None = None,
        momentum_config: HookConfig = None,
        timer_config: HookConfig = {"type": "IterTimerHook"},  # noqa: B006
        custom_hooks_config: Union[list, dict, Hook, None] = None,
        nan_guard_config: Union[dict, Hook, bool, None] = None,
    ) -> None:
        """Register the default training hooks from config dicts (mmcv 1.x keys).

        Priorities: LR VERY_HIGH, NaN guard VERY_HIGH, momentum HIGH, optimizer ABOVE_NORMAL,
        checkpoint NORMAL, timer LOW, loggers VERY_LOW; custom hooks as configured.
        Every config is also accepted as a Hook instance; None leaves that hook out (the
        defaults are copied, never mutated). The NaN guard is opt-in here
        (``nan_guard_config=dict(type='NanGuardHook')`` or True), so mmcv-style calls get
        exactly mmcv's hook list; :func:`mmpar.apis.train_model` turns it on by default.
        An IterBasedRunner gives the LR, momentum, checkpoint and logger configs
        ``by_epoch=False`` unless they set it.

        Errors name the config key whose hook failed to build (``log_config: ...``).
        """
        if self._config_by_epoch is not None:
            lr_config, momentum_config, checkpoint_config = (
                self._with_by_epoch(cfg) for cfg in (lr_config, momentum_config, checkpoint_config)
            )
            if log_config is not None:
                log_config = copy.deepcopy(log_config)
                log_config["hooks"] = [self._with_by_epoch(h) for h in log_config.get("hooks", [])]
        registrations: tuple[tuple[str, Callable[[Any], None], Any], ...] = (
            ("lr_config", self.register_lr_hook, lr_config),
            ("nan_guard_config", self.register_nan_guard_hook, nan_guard_config),
            ("momentum_config", self.register_momentum_hook, momentum_config),
            ("optimizer_config", self.register_optimizer_hook, optimizer_config),
            ("checkpoint_config", self.register_checkpoint_hook, checkpoint_config),
            ("timer_config", self.register_timer_hook, timer_config),
            ("log_config", self.register_logger_hooks, log_config),
            ("custom_hooks", self.register_custom_hooks, custom_hooks_config),
        )
        for key, register, config in registrations:
            with config_error_context(key):
                register(config)

    def _with_by_epoch(self, cfg: Any) -> Any:
        """A copy of config dict ``cfg`` with ``by_epoch`` defaulted; Hooks and None as given."""
        if isinstance(cfg, dict):
            cfg = copy.deepcopy(cfg)
            cfg.setdefault("by_epoch", self._config_by_epoch)
        return cfg


def _check_hook_item(item: Any, where: str) -> None:
    """Refuse a hook given as neither a config dict nor a Hook (e.g. a bare type name).

    Raises:
        ConfigArgumentError: Naming the item (``[0]``, ``hooks[1]``) and how to write it.
    """
    if isinstance(item, (dict, Hook)):
        return
    example = f"dict(type={item!r})" if isinstance(item, str) else "dict(type='MyHook')"
    cli = f"{{type:{item}}}" if isinstance(item, str) else "{type:MyHook}"
    what = f"item {where}" if where else "the value"
    raise ConfigArgumentError(
        f"{what} is {type(item).__name__} {item!r}, not a hook: give a config dict such as "
        f"{example} (on the command line: {cli}) or a Hook instance"
    )
