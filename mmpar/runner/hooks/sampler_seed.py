"""DistSamplerSeedHook: reshuffle distributed samplers each epoch."""

from __future__ import annotations

from ..runner_protocol import RunnerLike
from .hook import HOOKS, Hook


@HOOKS.register_module()
class DistSamplerSeedHook(Hook):
    """Call ``set_epoch(runner.epoch)`` on the train loader's sampler before each epoch.

    Looks at ``data_loader.sampler``, then ``data_loader.batch_sampler`` and its inner
    ``sampler``; the first with ``set_epoch`` is used. Without it, a ``DistributedSampler``
    repeats the same order every epoch.
    What it may use of the runner: :class:`~mmpar.runner.runner_protocol.RunnerLike`.
    """

    def before_train_epoch(self, runner: RunnerLike) -> None:
        """Seed the sampler with the epoch about to run."""
        loader = runner.data_loader
        batch_sampler = getattr(loader, "batch_sampler", None)
        for obj in (
            getattr(loader, "sampler", None),
            batch_sampler,
            getattr(batch_sampler, "sampler", None),
        ):
            if obj is not None and hasattr(obj, "set_epoch"):
                obj.set_epoch(runner.epoch)
                return
