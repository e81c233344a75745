"""RUNNERS registry and build_runner (mmcv 1.x API)."""

from __future__ import annotations

from typing import Any

from mmpar.utils.registry import Registry

from .arg_checks import split_constructor

__all__ = [
    "RUNNERS",
    "RUNNER_BUILDERS",
    "DefaultRunnerConstructor",
    "build_runner",
    "build_runner_constructor",
]

RUNNERS = Registry("runner")
RUNNER_BUILDERS = Registry("runner builder")


@RUNNER_BUILDERS.register_module()
class DefaultRunnerConstructor:
    """Build a runner from ``runner_cfg`` (``type`` plus constructor arguments).

    Args:
        runner_cfg: e.g. ``dict(type='EpochBasedRunner', max_epochs=12)``.
        default_args: Arguments the config does not set (model, optimizer, work_dir, ...).
    """

    def __init__(self, runner_cfg: dict, default_args: dict | None = None) -> None:
        if not isinstance(runner_cfg, dict):
            raise TypeError(f"runner_cfg must be a dict, but got {type(runner_cfg).__name__}")
        self.runner_cfg = runner_cfg
        self.default_args = default_args

    def __call__(self) -> Any:
        """Build and return the runner."""
        return RUNNERS.build(self.runner_cfg, default_args=self.default_args)


def build_runner_constructor(cfg: dict) -> Any:
    """Build a runner constructor from ``cfg`` (registry ``RUNNER_BUILDERS``)."""
    return RUNNER_BUILDERS.build(cfg)


def build_runner(cfg: dict, default_args: dict | None = None) -> Any:
    """Build a runner from a config dict.

    Args:
        cfg: ``dict(type='EpochBasedRunner', max_epochs=...)``; an optional ``constructor``
            key names a custom constructor in ``RUNNER_BUILDERS``.
        default_args: Usually ``dict(model=..., optimizer=..., work_dir=..., logger=...,
            meta=...)``.

    Returns:
        The runner.
    """
    runner_cfg, constructor_type = split_constructor(cfg, "runner", "DefaultRunnerConstructor")
    constructor = build_runner_constructor(
        {"type": constructor_type, "runner_cfg": runner_cfg, "default_args": default_args}
    )
    return constructor()
