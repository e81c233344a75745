"""What a training config must hold, checked before anything is built or written.

``tools/train.py`` and :func:`mmpar.apis.build_train_runner` read some keys without a default
(``cfg.model``, ``cfg.data.train``, ``cfg.optimizer`` ...). A config without one of them used to
fail somewhere in the middle of the set-up with an ``AttributeError`` traceback, and a runner
without its limit only when training started. :func:`check_train_config` names every missing
key at once, before the model or the datasets are built.
"""

from __future__ import annotations

import copy
import difflib
import warnings
from typing import Any

from mmpar.runner import RUNNERS, EpochBasedRunner, IterBasedRunner
from mmpar.utils.config import ConfigMissingKeyError

__all__ = ["check_train_config", "runner_config"]

# Keys read without a default, with an example of each for the message. None is a valid value
# only where said (lr_config=None: a constant learning rate, as in mmcv).
_REQUIRED: tuple[tuple[str, str, bool], ...] = (
    ("model", "model = dict(type='ImageClassifier', backbone=..., head=...)", False),
    ("data", "data = dict(samples_per_gpu=32, workers_per_gpu=2, train=..., val=...)", False),
    ("data.train", "data = dict(train=dict(type=..., pipeline=[...]), ...)", False),
    ("data.samples_per_gpu", "data = dict(samples_per_gpu=32, ...)", False),
    ("data.workers_per_gpu", "data = dict(workers_per_gpu=2, ...)", False),
    ("optimizer", "optimizer = dict(type='SGD', lr=0.1, momentum=0.9)", False),
    ("lr_config", "lr_config = dict(policy='step', step=[30]) (None: a constant rate)", True),
    ("workflow", "workflow = [('train', 1)]", False),
)


# Keys of mmcv 1.x configs, top level and in ``data``: never offered as "did you mean".
_KNOWN_KEYS: dict[str, set[str]] = {
    "": {
        "checkpoint_config", "custom_hooks", "custom_imports", "dist_params", "evaluation",
        "fp16", "gpu_ids", "load_from", "log_config", "log_level", "momentum_config",
        "optimizer_config", "opencv_num_threads", "mp_start_method", "resume_from", "runner",
        "total_epochs", "work_dir", "auto_resume", "device", "seed",
    },
    "data": {
        "test", "train_dataloader", "val_dataloader", "test_dataloader", "persistent_workers",
        "shuffle", "pin_memory", "drop_last",
    },
}  # fmt: skip


def _lookup(cfg: Any, key: str) -> tuple[bool, Any]:
    """``(found, value)`` of a dotted ``key`` in ``cfg`` (dicts all the way down)."""
    node = cfg
    for part in key.split("."):
        if not hasattr(node, "get") or part not in node:
            return False, None
        node = node[part]
    return True, node


def _two_phase(cfg: Any) -> bool:
    """A ``[('train', n), ('val', m)]`` workflow: the val phase reads ``data.val`` too."""
    workflow = cfg.get("workflow")
    return isinstance(workflow, (list, tuple)) and len(workflow) == 2


def check_train_config(cfg: Any, validate: bool = False) -> None:
    """Check that ``cfg`` has every key training reads and that its runner has a limit.

    Args:
        cfg: The merged config.
        validate: Whether an evaluation hook will read ``data.val``.

    Raises:
        ConfigMissingKeyError: Keys are missing (all of them named, with an example each), or
            the runner has no limit: ``max_epochs`` for an EpochBasedRunner (``total_epochs``
            stands in for it, with a warning, as in mmcv), ``max_iters`` for an
            IterBasedRunner. A ``KeyError`` and an ``AttributeError``. A key beside a missing
            one that is close to its name is named too (``did you mean
            data.sample_per_gpu?``).
    """
    required = list(_REQUIRED)
    if validate or _two_phase(cfg):
        required.append(("data.val", "data = dict(val=dict(type=..., pipeline=[...]), ...)", False))
    if _two_phase(cfg):
        # The val phase runs val_step on data.val with the training pipeline.
        required.append(("data.train.pipeline", "data = dict(train=dict(pipeline=[...]))", False))
    missing = []
    for key, example, none_ok in required:
        if any(key.startswith(f"{m}.") for m, _ in missing):
            continue  # its parent is reported already
        found, value = _lookup(cfg, key)
        if not found or (value is None and not none_ok):
            missing.append((key, example))
    limit = _missing_limit(cfg)
    if limit is not None:
        missing.append(limit)
    if missing:
        raise ConfigMissingKeyError(_message(cfg, missing))


def _did_you_mean(cfg: Any, key: str) -> str:
    """`` (did you mean data.sample_per_gpu?)`` when a key beside the missing one is close."""
    parent_key, _, name = key.rpartition(".")
    found, parent = _lookup(cfg, parent_key) if parent_key else (True, cfg)
    if not found or not hasattr(parent, "keys"):
        return ""
    # A key mmcv configs use is not a misspelling of another (log_config is not lr_config).
    required = {k.rpartition(".")[2] for k, _, _ in _REQUIRED if k.rpartition(".")[0] == parent_key}
    known = _KNOWN_KEYS.get(parent_key, set()) | required
    # The key itself may be present with a value of None: it is not its own misspelling.
    candidates = [str(k) for k in parent.keys() if str(k) not in known and str(k) != name]
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75)
    prefix = f"{parent_key}." if parent_key else ""
    return f" (did you mean {prefix}{close[0]}?)" if close else ""


def _message(cfg: Any, missing: list[tuple[str, str]]) -> str:
    keys = ", ".join(key + _did_you_mean(cfg, key) for key, _ in missing)
    source = f" {cfg.filename}" if getattr(cfg, "filename", None) else ""
    them = "it" if len(missing) == 1 else "them"
    return f"the config{source} has no {keys}; training needs {them}, e.g. " + "; ".join(
        example for _, example in missing
    )


def _runner_class(runner_cfg: Any) -> type | None:
    """The registered class of ``runner_cfg['type']`` (None: unknown, left to the builder)."""
    runner_type = runner_cfg.get("type", "EpochBasedRunner")
    if isinstance(runner_type, type):
        return runner_type
    try:
        return RUNNERS.get(runner_type)
    except (KeyError, ValueError):
        return None


def _missing_limit(cfg: Any) -> tuple[str, str] | None:
    """``(key, example)`` of the run limit the config lacks, or None when it has one."""
    runner_cfg = cfg.get("runner")
    has_total = cfg.get("total_epochs") is not None
    if runner_cfg is None:
        if has_total:
            return None  # mmcv's fallback: EpochBasedRunner for total_epochs epochs
        example = "runner = dict(type='EpochBasedRunner', max_epochs=10) (or total_epochs = 10)"
        return "runner", example
    if not hasattr(runner_cfg, "get"):
        return None  # not a dict: the runner builder names the type error
    cls = _runner_class(runner_cfg)
    if cls is None:
        return None
    name = runner_cfg.get("type", "EpochBasedRunner")
    if issubclass(cls, IterBasedRunner) and runner_cfg.get("max_iters") is None:
        hint = " (max_epochs is for an EpochBasedRunner)" if "max_epochs" in runner_cfg else ""
        return "runner.max_iters", f"runner = dict(type='{name}', max_iters=10000){hint}"
    if issubclass(cls, EpochBasedRunner) and runner_cfg.get("max_epochs") is None and not has_total:
        hint = " (max_iters is for an IterBasedRunner)" if "max_iters" in runner_cfg else ""
        return "runner.max_epochs", f"runner = dict(type='{name}', max_epochs=10){hint}"
    return None


def runner_config(cfg: Any) -> dict:
    """A copy of ``cfg.runner``, with mmcv's fallback to ``total_epochs`` applied.

    A config without ``runner`` but with the legacy ``total_epochs`` trains an
    EpochBasedRunner for that many epochs; so does a ``runner`` of an epoch-based type without
    ``max_epochs``. Both warn.

    Raises:
        ConfigMissingKeyError: Neither ``runner`` nor ``total_epochs``, or a runner without
            its limit (see :func:`check_train_config`).
        ValueError: ``total_epochs`` and ``runner.max_epochs`` disagree.
    """
    limit = _missing_limit(cfg)
    if limit is not None:
        raise ConfigMissingKeyError(_message(cfg, [limit]))
    total = cfg.get("total_epochs")
    if cfg.get("runner") is None:
        warnings.warn(
            "config has no 'runner'; using EpochBasedRunner with max_epochs=total_epochs. "
            "Set runner = dict(type='EpochBasedRunner', max_epochs=...) instead.",
            UserWarning,
            stacklevel=3,
        )
        return dict(type="EpochBasedRunner", max_epochs=total)
    runner_cfg = copy.deepcopy(dict(cfg.runner))
    if total is None:
        return runner_cfg
    max_epochs = runner_cfg.get("max_epochs")
    cls = _runner_class(runner_cfg)
    if max_epochs is None and cls is not None and issubclass(cls, EpochBasedRunner):
        warnings.warn(
            f"runner has no max_epochs; using total_epochs={total}. Set runner.max_epochs instead.",
            UserWarning,
            stacklevel=3,
        )
        runner_cfg["max_epochs"] = total
    elif max_epochs is not None and total != max_epochs:
        raise ValueError(
            f"config total_epochs={total} disagrees with runner.max_epochs={max_epochs}; "
            "remove total_epochs"
        )
    return runner_cfg
