"""PaviLoggerHook: metrics, the run's config, model graphs and checkpoints to PAVI."""

from __future__ import annotations

import json
import os
import os.path as osp
import warnings
from functools import partial
from typing import Any

import torch

from mmpar.fileio import dump
from mmpar.parallel import is_module_wrapper as is_module_wrapper  # mmcv's module has it
from mmpar.parallel import scatter
from mmpar.parallel.utils import unwrap_model
from mmpar.utils.compat_errors import CheckTypeError
from mmpar.utils.config import Config
from mmpar.utils.dist import master_only

from ...resume.loader_position import IterLoader
from ...runner_protocol import RunnerLike
from ..hook import HOOKS
from .base import LoggerHook, import_tracker


@HOOKS.register_module()
class PaviLoggerHook(LoggerHook):
    """Log records to PAVI (OpenMMLab's internal training visualiser) with its SummaryWriter.

    The calls are mmcv 1.7.2's, on rank 0: :meth:`before_run` imports ``pavi.SummaryWriter``
    and opens it with ``init_kwargs`` completed by ``name`` (the ``work_dir``'s name),
    ``model`` (the model's class name) and ``session_text`` (the run's config as YAML, from
    ``runner.meta['config_dict']`` or ``runner.meta['config_file']``, with ``max_iter``);
    each record goes to ``writer.add_scalars(mode, tags, step)`` (tags without the
    ``train/``/``val/`` prefix; the step is the epoch for val records when ``by_epoch``, else
    ``runner.iter + 1``); optionally the model graph and checkpoints are uploaded at
    epochs/iterations; :meth:`after_run` uploads ``latest.pth`` (``add_last_ckpt``) and closes
    the writer. ``pavi`` is also imported when the hook is built, so a missing package is
    reported before training.

    Args:
        init_kwargs: Keyword arguments of ``pavi.SummaryWriter`` (``name``, ``project``,
            ``model``, ``session_text``, ``training_id``, ``compare_id``,
            ``overwrite_last_training``); ``name``, ``model`` and ``session_text`` default as
            described above.
        add_graph: Deprecated, use ``add_graph_kwargs['active']``.
        img_key: Deprecated, use ``add_graph_kwargs['img_key']``.
        add_last_ckpt: Upload ``latest.pth`` of ``work_dir`` after the run.
        interval, ignore_last, reset_flag: As :class:`LoggerHook`.
        by_epoch: Whether graphs/checkpoints are handled per epoch (and val steps are epochs).
        add_graph_kwargs: ``active`` (False), ``start`` (0), ``interval`` (1), ``img_key``
            ('img'), ``opset_version`` (11), ``dummy_forward_kwargs`` ({}): upload the model
            graph, traced on a batch of the train loader, every ``interval`` epochs/iterations
            from ``start``.
        add_ckpt_kwargs: ``active`` (False), ``start`` (0), ``interval`` (1): upload
            ``epoch_<n>.pth`` / ``iter_<n>.pth`` of ``work_dir`` every ``interval`` epochs or
            iterations from ``start``.

    Raises:
        ImportError: pavi is not installed.
    """

    def __init__(
        self,
        init_kwargs: dict | None = None,
        add_graph: bool | None = None,
        img_key: str | None = None,
        add_last_ckpt: bool = False,
        interval: int = 10,
        ignore_last: bool = True,
        reset_flag: bool = False,
        by_epoch: bool = True,
        add_graph_kwargs: dict | None = None,
        add_ckpt_kwargs: dict | None = None,
    ) -> None:
        super().__init__(interval, ignore_last, reset_flag, by_epoch)
        import_tracker("pavi", "pavi", type(self).__name__)  # a missing package fails here
        self.init_kwargs = init_kwargs
        graph = dict(add_graph_kwargs or {})
        self.add_graph = graph.get("active", False)
        self.add_graph_start = graph.get("start", 0)
        self.add_graph_interval = graph.get("interval", 1)
        self.img_key = graph.get("img_key", "img")
        self.opset_version = graph.get("opset_version", 11)
        self.dummy_forward_kwargs = graph.get("dummy_forward_kwargs", {})
        for old, value, key in (
            ("add_graph", add_graph, "active"),
            ("img_key", img_key, "img_key"),
        ):
            if value is not None:
                warnings.warn(
                    f"PaviLoggerHook: {old!r} is deprecated; use add_graph_kwargs[{key!r}]",
                    DeprecationWarning,
                    stacklevel=2,
                )
        if add_graph is not None:
            self.add_graph = add_graph
        if img_key is not None:
            self.img_key = img_key
        ckpt = dict(add_ckpt_kwargs or {})
        self.add_ckpt = ckpt.get("active", False)
        self.add_last_ckpt = add_last_ckpt
        self.add_ckpt_start = ckpt.get("start", 0)
        self.add_ckpt_interval = ckpt.get("interval", 1)
        self.writer: Any = None

    @master_only
    def before_run(self, runner: RunnerLike) -> None:
        """Open the PAVI writer with the run's name, model and config (rank 0)."""
        super().before_run(runner)
        # Imported again (first at construction), as mmcv does: the pavi module of the run.
        writer_cls = import_tracker("pavi", "pavi", type(self).__name__).SummaryWriter
        self.run_name = runner.work_dir.split("/")[-1]
        if not self.init_kwargs:
            self.init_kwargs = dict()
        self.init_kwargs.setdefault("name", self.run_name)
        self.init_kwargs.setdefault("model", runner.model_name)
        session_text = self._session_text(runner)
        if session_text is not None:
            self.init_kwargs.setdefault("session_text", session_text)
        self.writer = writer_cls(**self.init_kwargs)

    def _session_text(self, runner: RunnerLike) -> str | None:
        meta = runner.meta or {}
        if "config_dict" in meta:
            config = meta["config_dict"]
            if not isinstance(config, dict):
                raise CheckTypeError(
                    f"PaviLoggerHook: runner.meta['config_dict'] must be a dict, "
                    f"got {type(config).__name__}"
                )
        elif "config_file" in meta:
            config = dict(Config.fromfile(meta["config_file"]))
        else:
            return None
        import yaml

        config = config.copy()
        # PAVI reads 'max_.*iter' to size its progress bar.
        config.setdefault("max_iter", runner.max_iters)
        # Through JSON first, as mmcv: sets, ranges and arrays become lists.
        return yaml.dump(json.loads(dump(config, file_format="json")))

    def get_step(self, runner: RunnerLike) -> int:
        """Return the epoch for val records when ``by_epoch``, else ``runner.iter + 1``."""
        if self.get_mode(runner) == "val" and self.by_epoch:
            return self.get_epoch(runner)
        return self.get_iter(runner)

    @master_only
    def log(self, runner: RunnerLike) -> None:
        """Send the record as ``add_scalars(mode, tags, step)`` (rank 0)."""
        tags = self.get_loggable_tags(runner, add_mode=False)
        if tags:
            self.writer.add_scalars(self.get_mode(runner), tags, self.get_step(runner))

    @staticmethod
    def _due(active: bool, step: int, start: int, interval: int) -> bool:
        return active and step >= start and (step - start) % interval == 0

    @master_only
    def before_train_epoch(self, runner: RunnerLike) -> None:
        """Upload the model graph at due epochs (rank 0)."""
        super().before_train_epoch(runner)
        step = self.get_epoch(runner)
        if self.by_epoch and self._due(
            self.add_graph, step, self.add_graph_start, self.add_graph_interval
        ):
            self._add_graph(runner, step)

    @master_only
    def before_train_iter(self, runner: RunnerLike) -> None:
        """Upload the model graph at due iterations (rank 0)."""
        super().before_train_iter(runner)
        step = self.get_iter(runner)
        if not self.by_epoch and self._due(
            self.add_graph, step, self.add_graph_start, self.add_graph_interval
        ):
            self._add_graph(runner, step)

    @master_only
    def after_train_epoch(self, runner: RunnerLike) -> None:
        """Log epoch-end results; upload ``epoch_<n>.pth`` at due epochs (rank 0)."""
        super().after_train_epoch(runner)
        step = self.get_epoch(runner)
        if self.by_epoch and self._due(
            self.add_ckpt, step, self.add_ckpt_start, self.add_ckpt_interval
        ):
            self._add_ckpt(runner, osp.join(runner.work_dir, f"epoch_{step}.pth"), step)

    @master_only
    def after_train_iter(self, runner: RunnerLike) -> None:
        """Log the record; upload ``iter_<n>.pth`` at due iterations (rank 0)."""
        super().after_train_iter(runner)
        step = self.get_iter(runner)
        if not self.by_epoch and self._due(
            self.add_ckpt, step, self.add_ckpt_start, self.add_ckpt_interval
        ):
            self._add_ckpt(runner, osp.join(runner.work_dir, f"iter_{step}.pth"), step)

    @master_only
    def after_run(self, runner: RunnerLike) -> None:
        """Upload ``latest.pth`` if ``add_last_ckpt``, then close the writer (rank 0)."""
        try:
            if self.add_last_ckpt:
                # The counters already include the last epoch/iteration.
                step = runner.epoch if self.by_epoch else runner.iter
                self._add_ckpt(runner, osp.join(runner.work_dir, "latest.pth"), step)
        finally:
            # Flushes and tells PAVI the training ended; the writer stays on the hook as in mmcv.
            self.writer.close()

    def _add_ckpt(self, runner: RunnerLike, path: str, step: int) -> None:
        if osp.islink(path):
            path = osp.join(runner.work_dir, os.readlink(path))
        if osp.isfile(path):
            self.writer.add_snapshot_file(
                tag=self.run_name, snapshot_file_path=path, iteration=step
            )

    def _add_graph(self, runner: RunnerLike, step: int) -> None:
        model = unwrap_model(runner.model)
        device = next(model.parameters()).device
        loader = runner.data_loader
        if isinstance(loader, IterLoader):
            loader = loader.dataloader
        data = next(iter(loader))
        data = scatter(data, [device.index if device.type == "cuda" else -1])[0]
        img = data[self.img_key]
        # Trace ``forward_dummy`` (if the model has one) with the extra kwargs, then put the
        # model's own ``forward`` back.
        saved = vars(model).get("forward")
        forward = getattr(model, "forward_dummy", model.forward)
        if self.dummy_forward_kwargs:
            forward = partial(forward, **self.dummy_forward_kwargs)
        model.forward = forward
        try:
            with torch.no_grad():
                self.writer.add_graph(
                    model, img, tag=f"{self.run_name}_{step}", opset_version=self.opset_version
                )
        finally:
            if saved is None:
                del model.forward
            else:
                model.forward = saved
