"""TextLoggerHook: console/text log lines and the JSON-lines log (mmcv 1.x format)."""

from __future__ import annotations

import datetime
import json
import os
import os.path as osp
from collections import OrderedDict
from typing import Any, Union

import torch
import torch.distributed as dist

from mmpar.fileio import FileClient
from mmpar.utils import is_tuple_of as is_tuple_of  # mmcv's module imports it too
from mmpar.utils import scandir as scandir  # mmcv's module imports it too
from mmpar.utils.dist import comm_device, is_distributed

from ...runner_protocol import RunnerLike
from ..hook import HOOKS
from .base import LoggerHook

# Keys already rendered in the head of a line (or internal), not repeated in the key: value list.
_HEAD_KEYS = ("mode", "Epoch", "iter", "lr", "time", "data_time", "memory", "epoch")
# runner.meta keys that describe the run; counters and hook messages stay out of the header line
# (a header with 'epoch' would be read as a log record by log analysers).
_META_SKIP = ("epoch", "iter", "hook_msgs", "mmpar_state", "time")


@HOOKS.register_module()
class TextLoggerHook(LoggerHook):
    r"""Log records as text lines through ``runner.logger`` and as JSON lines to a file.

    Text lines look like mmcv's::

        Epoch [1][10/50]\tlr: 1.000e-01, eta: 0:01:02, time: 0.120, data_time: 0.010, loss: 0.6931
        Epoch(val) [1][20]\taccuracy: 0.8125

    JSON lines go to ``<work_dir>/<runner.timestamp>.log.json``: first ``runner.meta``'s run
    description (``env_info``, ``config``, ``seed``, ``exp_name`` when present), then one object
    per record with ``mode``, ``epoch``, ``iter``, ``lr``, ``memory`` (CUDA only), ``time``,
    ``data_time`` and the losses or metrics, floats rounded to 5 decimals. Only rank 0 writes;
    the plain ``.log`` file is written by the runner's logger, not by this hook.

    Args:
        by_epoch: Whether lines show ``Epoch [e][i/n]`` (``True``) or ``Iter [i/N]``.
        interval, ignore_last, reset_flag: As :class:`LoggerHook`.
        interval_exp_name: Print ``runner.meta['exp_name']`` every this many iterations.
        out_dir: If set, copy the logs (files of ``work_dir`` ending with ``out_suffix``) to
            ``<out_dir>/<basename of work_dir>`` after the run.
        out_suffix: File name endings copied to ``out_dir``.
        keep_local: Keep the local copies after copying them to ``out_dir``.
        file_client_args: Arguments of the :class:`~mmpar.fileio.FileClient` that writes to
            ``out_dir`` (default: inferred from its prefix, e.g. a local folder).
    """

    def __init__(
        self,
        by_epoch: bool = True,
        interval: int = 10,
        ignore_last: bool = True,
        reset_flag: bool = False,
        interval_exp_name: int = 1000,
        out_dir: str | None = None,
        out_suffix: Union[str, tuple[str, ...]] = (".log.json", ".log", ".py"),
        keep_local: bool = True,
        file_client_args: dict | None = None,
    ) -> None:
        super().__init__(interval, ignore_last, reset_flag, by_epoch)
        if out_dir is None and not keep_local:
            raise ValueError(
                "TextLoggerHook: keep_local=False would delete the logs because out_dir is None; "
                "set out_dir to copy them somewhere first, or keep keep_local=True"
            )
        # mmcv 1.x's checks and exception types: file_client_args only goes with out_dir.
        if out_dir is None and file_client_args is not None:
            raise ValueError(
                "TextLoggerHook: file_client_args is given but out_dir is None; it configures "
                "the client that copies the logs to out_dir, so set both or neither"
            )
        if not (out_dir is None or isinstance(out_dir, str) or _is_str_tuple(out_dir)):
            raise TypeError(f"TextLoggerHook: out_dir must be None or a str, got {out_dir!r}")
        self.interval_exp_name = interval_exp_name
        self.out_dir = out_dir
        # Built here so that a bad backend fails before training, not after it.
        self.file_client_args = file_client_args
        self.file_client = (
            None if out_dir is None else FileClient.infer_client(file_client_args, out_dir)
        )
        self.out_suffix = (out_suffix,) if isinstance(out_suffix, str) else tuple(out_suffix)
        self.keep_local = keep_local
        self.time_sec_tot = 0.0
        self.start_iter = 0
        self.json_log_path: str | None = None

    def before_run(self, runner: RunnerLike) -> None:
        """Open the JSON log and write the run description from ``runner.meta``."""
        super().before_run(runner)
        self.start_iter = runner.iter
        self.time_sec_tot = 0.0
        self.json_log_path = osp.join(runner.work_dir, f"{runner.timestamp}.log.json")
        if runner.rank == 0 and runner.meta is not None:
            # Always a line when there is a meta, as in mmcv: readers skip the first line.
            self._write_json({k: v for k, v in runner.meta.items() if k not in _META_SKIP})

    def _get_max_memory(self, runner: RunnerLike) -> int:
        """Return the peak CUDA memory in MiB (max over ranks when distributed)."""
        device = getattr(runner.model, "output_device", None)
        mem_mb = torch.cuda.max_memory_allocated(device=device) // (1024 * 1024)
        if is_distributed() and dist.get_world_size() > 1:
            tensor = torch.tensor([mem_mb], dtype=torch.int64, device=comm_device())
            dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
            mem_mb = int(tensor.item())
        return int(mem_mb)

    def _format_line(self, log_dict: dict, runner: RunnerLike) -> str:
        if log_dict["mode"] == "train":
            lr = log_dict["lr"]
            if isinstance(lr, dict):
                lr_str = " ".join(f"lr_{k}: {v:.3e}" for k, v in lr.items())
            else:
                lr_str = f"lr: {lr:.3e}"
            if self.by_epoch:
                n_iters = len(runner.data_loader)
                head = f"Epoch [{log_dict['epoch']}][{log_dict['iter']}/{n_iters}]\t"
            else:
                head = f"Iter [{log_dict['iter']}/{runner.max_iters}]\t"
            head += f"{lr_str}, "
            if "time" in log_dict:
                # ETA from the mean iteration time since this run started (not since iter 0).
                self.time_sec_tot += log_dict["time"] * self.interval
                done = max(runner.iter - self.start_iter + 1, 1)
                eta_sec = self.time_sec_tot / done * (runner.max_iters - runner.iter - 1)
                head += f"eta: {datetime.timedelta(seconds=int(max(eta_sec, 0)))}, "
                head += f"time: {log_dict['time']:.3f}, data_time: {log_dict['data_time']:.3f}, "
                if "memory" in log_dict:
                    head += f"memory: {log_dict['memory']}, "
        elif self.by_epoch:
            head = f"Epoch({log_dict['mode']}) [{log_dict['epoch']}][{log_dict['iter']}]\t"
        else:
            head = f"Iter({log_dict['mode']}) [{log_dict['iter']}]\t"
        items = []
        for name, val in log_dict.items():
            if name in _HEAD_KEYS:
                continue
            if isinstance(val, float):
                val = f"{val:.4f}"
            items.append(f"{name}: {val}")
        return head + ", ".join(items)

    def _write_json(self, record: dict) -> None:
        with open(self.json_log_path, "a+", encoding="utf-8") as f:
            f.write(json.dumps(_to_json(record), default=str))
            f.write("\n")

    def log(self, runner: RunnerLike) -> OrderedDict:
        """Write the current buffer output as a text line and a JSON line.

        Returns:
            The record that was written (before rounding).
        """
        output = runner.log_buffer.output
        if "eval_iter_num" in output:
            # Set by EvalHook: the number of eval batches, independent of the train counters.
            cur_iter = output.pop("eval_iter_num")
        else:
            cur_iter = self.get_iter(runner, inner_iter=True)
        log_dict = OrderedDict(
            mode=self.get_mode(runner), epoch=self.get_epoch(runner), iter=cur_iter
        )
        cur_lr = runner.current_lr()
        if isinstance(cur_lr, dict):
            log_dict["lr"] = {k: v[0] for k, v in cur_lr.items()}
        else:
            log_dict["lr"] = cur_lr[0]
        if "time" in output and torch.cuda.is_available():
            log_dict["memory"] = self._get_max_memory(runner)
        log_dict.update(output)
        if runner.rank == 0:
            if runner.meta and "exp_name" in runner.meta:
                if self.every_n_iters(runner, self.interval_exp_name) or (
                    self.by_epoch and self.end_of_epoch(runner)
                ):
                    runner.logger.info(f"Exp name: {runner.meta['exp_name']}")
            runner.logger.info(self._format_line(log_dict, runner))
            self._write_json(log_dict)
        return log_dict

    def after_run(self, runner: RunnerLike) -> None:
        """Copy the logs to ``out_dir`` (and delete the local ones unless ``keep_local``)."""
        if self.out_dir is None or runner.rank != 0:
            return
        client = self.file_client
        target = client.join_path(self.out_dir, osp.basename(osp.normpath(runner.work_dir)))
        for name in sorted(os.listdir(runner.work_dir)):
            local = osp.join(runner.work_dir, name)
            if not (name.endswith(self.out_suffix) and osp.isfile(local)):
                continue
            with open(local, "rb") as file:
                client.put(file.read(), client.join_path(target, name))
            runner.logger.info(f"{local} was copied to {target}")
            if not self.keep_local:
                os.remove(local)


def _to_json(value: Any) -> Any:
    """Round floats to 5 decimals and turn tensors/numpy values into plain Python values."""
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, str):  # numpy / torch
        return _to_json(value.tolist())
    if isinstance(value, float):
        return round(float(value), 5)
    return value


def _is_str_tuple(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, str) for v in value)
