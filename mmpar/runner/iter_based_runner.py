"""IterBasedRunner: train/val by iterations over endlessly restarted data loaders."""

from __future__ import annotations

import copy
from typing import Any, Union

import torch

from .base_runner import BaseRunner, set_loader_epoch, start_loader_iter
from .builder import RUNNERS
from .epoch_based_runner import check_workflow
from .hooks import Hook


class IterLoader:
    """Iterate a data loader forever; each restart begins a new epoch and calls ``set_epoch``.

    Args:
        dataloader: A torch DataLoader (or any re-iterable with a length).
        epoch: Epoch to start in.
        start: Batches of ``epoch`` already consumed (resume position).
        sampler_state: Sampler ``state_dict`` to restore before the first iterator is made.
        logger: Where resume warnings go.

    Raises:
        RuntimeError: The loader yields no batch at all.
    """

    def __init__(
        self,
        dataloader: Any,
        epoch: int = 0,
        start: int = 0,
        sampler_state: dict | None = None,
        logger: Any = None,
    ) -> None:
        self._dataloader = dataloader
        self._epoch = epoch
        self._consumed = start
        self._iter = start_loader_iter(dataloader, start, sampler_state, logger)

    @property
    def epoch(self) -> int:
        """Epoch of the batches currently served."""
        return self._epoch

    @property
    def consumed(self) -> int:
        """Batches of the current epoch served so far (= index of the next batch)."""
        return self._consumed

    @property
    def dataloader(self) -> Any:
        """The wrapped data loader."""
        return self._dataloader

    @property
    def sampler(self) -> Any:
        """The wrapped loader's sampler."""
        return getattr(self._dataloader, "sampler", None)

    @property
    def batch_sampler(self) -> Any:
        """The wrapped loader's batch sampler."""
        return getattr(self._dataloader, "batch_sampler", None)

    def __next__(self) -> Any:
        try:
            data = next(self._iter)
        except StopIteration:
            self._epoch += 1
            self._consumed = 0
            set_loader_epoch(self._dataloader, self._epoch)
            self._iter = iter(self._dataloader)
            try:
                data = next(self._iter)
            except StopIteration:
                raise RuntimeError(
                    f"data loader over {type(getattr(self._dataloader, 'dataset', None)).__name__} "
                    "yields no batch; check the dataset length, batch size and drop_last"
                ) from None
        self._consumed += 1
        return data

    def __iter__(self) -> IterLoader:
        return self

    def __len__(self) -> int:
        return len(self._dataloader)


@RUNNERS.register_module()
class IterBasedRunner(BaseRunner):
    """Train by iterations; data loaders restart transparently at epoch ends (mmcv 1.x API).

    The loop: ``before_run`` → ``before_epoch`` → repeat the workflow phases
    (``[('train', 1000), ('val', 100)]`` = 1000 train then 100 val iterations) until
    ``max_iters`` → ``after_epoch`` → ``after_run`` (always, also on errors). ``inner_iter``
    counts iterations within the current workflow phase, as in mmcv.
    """

    def train(self, data_loader: IterLoader, **kwargs: Any) -> None:
        """Run one training iteration."""
        self.model.train()
        self.mode = "train"
        self.data_loader = data_loader
        data_batch = next(data_loader)
        self._epoch = data_loader.epoch
        self.data_batch = data_batch
        self.call_hook("before_train_iter")
        self.run_iter(data_batch, train_mode=True, **kwargs)
        self._next_position = {
            "epoch": data_loader.epoch,
            "iter": self._iter + 1,
            "inner_iter": data_loader.consumed,
        }
        self.call_hook("after_train_iter")
        self.data_batch = None
        self._inner_iter += 1
        self._iter += 1

    @torch.no_grad()
    def val(self, data_loader: IterLoader, **kwargs: Any) -> None:
        """Run one validation iteration under ``torch.no_grad()``."""
        self.model.eval()
        self.mode = "val"
        self.data_loader = data_loader
        data_batch = next(data_loader)
        self.data_batch = data_batch
        self.call_hook("before_val_iter")
        self.run_iter(data_batch, train_mode=False, **kwargs)
        self.call_hook("after_val_iter")
        self.data_batch = None
        self._inner_iter += 1

    def run(
        self,
        data_loaders: list,
        workflow: list,
        max_iters: int | None = None,
        **kwargs: Any,
    ) -> None:
        """Run the workflow until ``max_iters`` training iterations are done.

        Args:
            data_loaders: One loader per workflow phase.
            workflow: ``[(mode, iters), ...]``, e.g. ``[('train', 1000), ('val', 100)]``.
            max_iters: Deprecated; set it in the constructor.
            **kwargs: Passed to ``train_step``/``val_step``.
        """
        check_workflow(data_loaders, workflow)
        self._run_limit("max_iters", max_iters)
        self.logger.info("workflow: %s, max: %d iters", workflow, self._max_iters)
        self._begin_run()
        iter_loaders = self._make_iter_loaders(data_loaders, workflow)
        self.call_hook("before_run")
        try:
            self.call_hook("before_epoch")
            while self._iter < self._max_iters and not self.should_stop:
                for (mode, iters), loader in zip(workflow, iter_loaders):
                    self._inner_iter = 0
                    iter_runner = getattr(self, mode)
                    for _ in range(iters):
                        if self.should_stop or (mode == "train" and self._iter >= self._max_iters):
                            break
                        iter_runner(loader, **kwargs)
            self.call_hook("after_epoch")
        finally:
            self.call_hook("after_run")

    def _make_iter_loaders(self, data_loaders: list, workflow: list) -> list[IterLoader]:
        pending = self._pending_resume or {}
        train_index = next((i for i, (mode, _) in enumerate(workflow) if mode == "train"), None)
        loaders = []
        for i, loader in enumerate(data_loaders):
            if i == train_index:
                self._train_loader = loader
                start = pending.pop("inner_iter", 0)
                loaders.append(
                    IterLoader(
                        loader, self._epoch, start, pending.pop("sampler", None), self.logger
                    )
                )
            else:
                loaders.append(IterLoader(loader))
        # Iterators exist now; creating them drew from torch's RNG as in the saved run.
        self._restore_rng()
        return loaders

    def save_checkpoint(
        self,
        out_dir: str,
        filename_tmpl: str = "iter_{}.pth",
        save_optimizer: bool = True,
        meta: dict | None = None,
        create_symlink: bool = True,
    ) -> str:
        """Save ``out_dir/filename_tmpl.format(iter + 1)`` and point ``latest.pth`` at it.

        Returns:
            The path written.
        """
        filename = filename_tmpl.format(self._iter + 1)
        return self._save_checkpoint_file(out_dir, filename, save_optimizer, meta, create_symlink)

    def register_training_hooks(
        self,
        lr_config: Union[dict, Hook, None],
        optimizer_config: Union[dict, Hook, None] = None,
        checkpoint_config: Union[dict, Hook, None] = None,
        log_config: dict | None = None,
        momentum_config: Union[dict, Hook, None] = None,
        timer_config: Union[dict, Hook, None] = {"type": "IterTimerHook"},  # noqa: B006
        custom_hooks_config: Union[list, dict, Hook, None] = None,
        nan_guard_config: Union[dict, Hook, bool, None] = {"type": "NanGuardHook"},  # noqa: B006
    ) -> None:
        """As :meth:`BaseRunner.register_training_hooks`, defaulting hooks to ``by_epoch=False``.

        LR, momentum, checkpoint and logger configs get ``by_epoch=False`` unless they set it.
        """

        def iter_based(cfg: Any) -> Any:
            if isinstance(cfg, dict):
                cfg = copy.deepcopy(cfg)
                cfg.setdefault("by_epoch", False)
            return cfg

        if log_config is not None:
            log_config = copy.deepcopy(log_config)
            log_config["hooks"] = [iter_based(h) for h in log_config.get("hooks", [])]
        super().register_training_hooks(
            iter_based(lr_config),
            optimizer_config,
            iter_based(checkpoint_config),
            log_config,
            iter_based(momentum_config),
            timer_config,
            custom_hooks_config,
            nan_guard_config,
        )
