"""The few lines ``tools/train.py`` prints when a run ends: how far it got and what it left.

Example (``python tools/train.py configs/digits_lenet.py``)::

    Run summary (work_dir: /work/mmpar/work_dirs/digits_lenet)
      status:          finished
      trained:         epoch 30 of 30, iteration 1350 of 1350
      best:            accuracy_top-1 = 98.3287 (best_accuracy_top-1_epoch_22.pth)
      last checkpoint: epoch_30.pth
      wall time:       0:00:19
"""

from __future__ import annotations

import datetime
import logging
import os
import os.path as osp
import re
from typing import Any

# ``best_<metric>_<epoch|iter>_<n>.pth``, the name EvalHook's save_best gives its checkpoint.
_BEST_NAME = re.compile(r"best_(?P<metric>.+)_(?:epoch|iter)_\d+\.pth$")


def run_status(runner: Any) -> str:
    """``'finished'`` or ``'stopped early'`` for a run whose ``runner.run`` returned.

    A hook (e.g. EarlyStoppingHook) that set ``runner.should_stop`` before the last epoch or
    iteration stopped it early.
    """
    if runner.max_epochs is not None:
        reached = runner.epoch >= runner.max_epochs
    else:
        reached = runner.iter >= (runner.max_iters or 0)
    return "stopped early" if runner.should_stop and not reached else "finished"


def _best_metric_name(runner: Any, best_ckpt: str | None) -> str | None:
    """The metric ``save_best`` compares: from the evaluation hook, else the file name."""
    for hook in getattr(runner, "hooks", []):
        name = getattr(getattr(hook, "best_checkpoint", None), "key_indicator", None)
        if name not in (None, "auto"):
            return name
    match = _BEST_NAME.search(osp.basename(best_ckpt or ""))
    return match.group("metric") if match else None


def last_checkpoint(runner: Any) -> str | None:
    """The checkpoint written last: ``hook_msgs['last_ckpt']`` or ``latest.pth``'s target.

    Of the two, the newer one wins (a checkpoint saved outside CheckpointHook, e.g. on
    preemption, only moves ``latest.pth``). A checkpoint is a file, or a directory for sharded
    (FSDP) checkpoints. None when neither exists.
    """
    msgs = (runner.meta or {}).get("hook_msgs") or {}
    candidates = [msgs.get("last_ckpt"), osp.join(runner.work_dir, "latest.pth")]
    files = [path for path in candidates if path and osp.exists(path)]
    if not files:
        return None
    newest = max(files, key=lambda path: os.stat(path).st_mtime_ns)
    if osp.islink(newest):  # name the file latest.pth points to
        newest = osp.join(osp.dirname(newest), os.readlink(newest))
    return osp.normpath(newest)


def _short(runner: Any, path: str) -> str:
    """``path`` relative to the work dir when it lies inside it (the header names the dir)."""
    rel = osp.relpath(osp.abspath(path), osp.abspath(runner.work_dir))
    return path if rel.startswith(os.pardir) else rel


def format_summary(runner: Any, status: str, wall_time: float) -> str:
    """The summary block of a run (no trailing newline).

    Args:
        runner: The runner after ``run`` returned or raised.
        status: How it ended: ``'finished'``, ``'stopped early'``, ``'preempted'``,
            ``'failed: <reason>'``.
        wall_time: Seconds from the command's start to its end.

    Returns:
        Lines ``status``, ``trained`` (epochs of an epoch-based run, and iterations),
        ``best`` (only with ``evaluation.save_best``), ``last checkpoint`` and ``wall time``.
        Checkpoints inside the work dir are named relative to it.
    """
    done = runner.progress  # completed epochs/iterations, exact also mid-epoch
    if runner.max_epochs is not None:
        trained = f"epoch {done['epoch']} of {runner.max_epochs}"
        if done["inner_iter"]:  # stopped mid-epoch (preempted)
            trained += f" + {done['inner_iter']} iterations of epoch {done['epoch'] + 1}"
        trained += ", "
    else:
        trained = ""
    trained += f"iteration {done['iter']}"
    if runner.max_iters is not None:  # an epoch-based run knows it once its loader is known
        trained += f" of {runner.max_iters}"
    lines = [f"status:          {status}", f"trained:         {trained}"]
    msgs = (runner.meta or {}).get("hook_msgs") or {}
    if msgs.get("best_score") is not None:
        metric = _best_metric_name(runner, msgs.get("best_ckpt")) or "best score"
        best = f"{metric} = {msgs['best_score']:.4f}"
        if msgs.get("best_ckpt"):
            best += f" ({_short(runner, msgs['best_ckpt'])})"
        lines.append(f"best:            {best}")
    last = last_checkpoint(runner)
    lines.append(f"last checkpoint: {_short(runner, last) if last else 'none written'}")
    lines.append(f"wall time:       {datetime.timedelta(seconds=round(wall_time))}")
    return "\n".join([f"Run summary (work_dir: {runner.work_dir})", *("  " + x for x in lines)])


def report_summary(runner: Any, status: str, wall_time: float) -> str | None:
    """Print :func:`format_summary` on stdout and write it into the run's log file (rank 0).

    Returns:
        The summary, or None on ranks other than 0 (which print nothing).
    """
    if runner.rank != 0:
        return None
    text = format_summary(runner, status, wall_time)
    print(text, flush=True)
    logger = runner.logger
    record = logger.makeRecord(logger.name, logging.INFO, __file__, 0, text, None, None)
    for handler in logger.handlers:
        if isinstance(handler, logging.FileHandler):  # the console has it already
            handler.handle(record)
    return text
