"""PaviLoggerHook: metrics, the run's config, model graphs and checkpoints to PAVI."""

from __future__ import annotations

import json
import os
import os.path as osp
import warnings
from functools import partial
from typing import Any

import torch

from mmpar.parallel import is_module_wrapper, scatter
from mmpar.utils.config import Config

from ...loaders import IterLoader
from ..hook import HOOKS
from .base import LoggerHook, import_tracker


def _plain(value: Any) -> Any:
    """JSON fallback for config values: arrays/tensors as lists, sets as lists, else str."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return list(value)
    return str(value)


@HOOKS.register_module()
class PaviLoggerHook(LoggerHook):
    """Log records to PAVI (OpenMMLab's internal training visualiser) with its SummaryWriter.

    On rank 0, :meth:`before_run` opens a ``pavi.SummaryWriter`` named after ``work_dir`` with
    the model's class name and the run's config as YAML session text (from
    ``runner.meta['config_dict']`` or ``runner.meta['config_file']``); each record goes to
    ``add_scalars(mode, tags, step)`` (tags without the ``train/``/``val/`` prefix); optionally
    the model graph and checkpoints are uploaded at epochs/iterations. The ``pavi`` package is
    imported when the hook is built.

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
        self._writer_cls = import_tracker("pavi", "pavi", type(self).__name__).SummaryWriter
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

    def before_run(self, runner: Any) -> None:
        """Open the PAVI writer with the run's name, model and config (rank 0)."""
        super().before_run(runner)
        if runner.rank != 0:
            return
        self.run_name = osp.basename(osp.normpath(runner.work_dir))
        kwargs = dict(self.init_kwargs or {})
        kwargs.setdefault("name", self.run_name)
        kwargs.setdefault("model", runner.model_name)
        session_text = self._session_text(runner)
        if session_text is not None:
            kwargs.setdefault("session_text", session_text)
        self.writer = self._writer_cls(**kwargs)

    def _session_text(self, runner: Any) -> str | None:
        meta = runner.meta or {}
        if "config_dict" in meta:
            config = meta["config_dict"]
            if not isinstance(config, dict):
                raise TypeError(
                    f"PaviLoggerHook: runner.meta['config_dict'] must be a dict, "
                    f"got {type(config).__name__}"
                )
        elif "config_file" in meta:
            config = Config.fromfile(meta["config_file"]).to_dict()
        else:
            return None
        import yaml

        config = dict(config)
        # PAVI reads 'max_.*iter' to size its progress bar.
        config.setdefault("max_iter", runner.max_iters)
        return yaml.dump(json.loads(json.dumps(config, default=_plain)))

    def get_step(self, runner: Any) -> int:
        """Return the epoch for val records when ``by_epoch``, else the global step."""
        if self.by_epoch and self.get_mode(runner) == "val":
            return self.get_epoch(runner)
        return super().get_step(runner)

    def log(self, runner: Any) -> None:
        """Send the record as ``add_scalars(mode, tags, step)`` (rank 0)."""
        if self.writer is None:
            return
        tags = self.get_record_tags(runner, add_mode=False)
        if tags:
            self.writer.add_scalars(self.get_mode(runner), tags, self.get_step(runner))

    @staticmethod
    def _due(active: bool, step: int, start: int, interval: int) -> bool:
        return active and step >= start and (step - start) % interval == 0

    def before_train_epoch(self, runner: Any) -> None:
        """Upload the model graph at due epochs."""
        super().before_train_epoch(runner)
        step = self.get_epoch(runner)
        if (
            self.writer is not None
            and self.by_epoch
            and self._due(self.add_graph, step, self.add_graph_start, self.add_graph_interval)
        ):
            self._add_graph(runner, step)

    def before_train_iter(self, runner: Any) -> None:
        """Upload the model graph at due iterations."""
        super().before_train_iter(runner)
        step = self.get_iter(runner)
        if (
            self.writer is not None
            and not self.by_epoch
            and self._due(self.add_graph, step, self.add_graph_start, self.add_graph_interval)
        ):
            self._add_graph(runner, step)

    def after_train_epoch(self, runner: Any) -> None:
        """Log epoch-end results; upload ``epoch_<n>.pth`` at due epochs."""
        super().after_train_epoch(runner)
        step = self.get_epoch(runner)
        if self.by_epoch and self._due(
            self.add_ckpt, step, self.add_ckpt_start, self.add_ckpt_interval
        ):
            self._add_ckpt(runner, osp.join(runner.work_dir, f"epoch_{step}.pth"), step)

    def after_train_iter(self, runner: Any) -> None:
        """Log the record; upload ``iter_<n>.pth`` at due iterations."""
        super().after_train_iter(runner)
        step = self.get_iter(runner)
        if not self.by_epoch and self._due(
            self.add_ckpt, step, self.add_ckpt_start, self.add_ckpt_interval
        ):
            self._add_ckpt(runner, osp.join(runner.work_dir, f"iter_{step}.pth"), step)

    def after_run(self, runner: Any) -> None:
        """Upload ``latest.pth`` if ``add_last_ckpt``, then close the writer (rank 0)."""
        if self.writer is None:
            return
        try:
            if self.add_last_ckpt:
                step = runner.epoch if self.by_epoch else runner.iter
                self._add_ckpt(runner, osp.join(runner.work_dir, "latest.pth"), step)
        finally:
            self.writer.close()
            self.writer = None

    def _add_ckpt(self, runner: Any, path: str, step: int) -> None:
        if self.writer is None:
            return
        if osp.islink(path):
            path = osp.join(runner.work_dir, os.readlink(path))
        if osp.isfile(path):
            self.writer.add_snapshot_file(
                tag=self.run_name, snapshot_file_path=path, iteration=step
            )

    def _add_graph(self, runner: Any, step: int) -> None:
        model = runner.model.module if is_module_wrapper(runner.model) else runner.model
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
