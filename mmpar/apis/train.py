"""``train_model``: turn a config, a model and datasets into a running runner (mmcv 1.x style)."""

from __future__ import annotations

import inspect
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from mmpar.parallel import (
    MODULE_WRAPPERS,
    MMDataParallel,
    MMDistributedDataParallel,
    is_module_wrapper,
)
from mmpar.utils import get_logger
from mmpar.utils.registry import (
    ConfigArgumentError,
    check_argument_types,
    config_error_context,
)

from .train_config import check_train_config, runner_config


def wrap_model(
    model: nn.Module,
    distributed: bool,
    *,
    gpu_ids: Sequence[int] | None = None,
    find_unused_parameters: bool = False,
    wrapper_cfg: dict | None = None,
) -> nn.Module:
    """Put ``model`` on its device and wrap it for (distributed) data parallel training.

    The devices are arguments, not read from a config: :func:`build_train_runner` passes
    ``cfg.gpu_ids``, ``cfg.find_unused_parameters`` and ``cfg.model_wrapper``.

    Args:
        model: The bare model.
        distributed: Wrap in :class:`MMDistributedDataParallel` (one process per device)
            instead of :class:`MMDataParallel`.
        gpu_ids: The CUDA devices of a non-distributed run (default ``[0]``; the first one
            becomes the current device); unused on CPU and when distributed (each process uses
            the current device, which ``init_dist`` selected).
        find_unused_parameters: Passed to DDP (distributed only): needed when some parameters
            get no gradient in an iteration.
        wrapper_cfg: The config's ``model_wrapper`` (distributed only): a dict whose ``type``
            names a wrapper of ``MODULE_WRAPPERS``, e.g. ``dict(type=
            'MMFullyShardedDataParallel', wrap_modules=['BasicBlock'])``; the other keys are
            its arguments. None: ``MMDistributedDataParallel``.

    Returns:
        The wrapped model: on CPU ``device_ids=[-1]`` (None for DDP); on CUDA the current
        device (distributed) or ``gpu_ids``.

    Raises:
        ValueError: ``wrapper_cfg`` is given for a non-distributed run.
    """
    wrapper_cfg = dict(wrapper_cfg or {})
    wrapper_type = wrapper_cfg.pop("type", "MMDistributedDataParallel")
    if wrapper_cfg or wrapper_type != "MMDistributedDataParallel":
        if not distributed:
            raise ValueError(
                f"{wrapper_type} needs distributed training; launch with torchrun"
                " and --launcher pytorch (one process is fine: --nproc_per_node=1), or remove "
                "model_wrapper"
            )
        if wrapper_type != "MMDistributedDataParallel":
            # Sharding wrappers place the model themselves (e.g. FSDP with CPU offload).
            return MODULE_WRAPPERS.build(dict(wrapper_cfg, type=wrapper_type, module=model))
    cuda = torch.cuda.is_available()
    # DDP's default buffer broadcast is kept: mmcv passed broadcast_buffers=False, which newer
    # torch deprecates, and syncing BN statistics from rank 0 is the safe default.
    if distributed:
        device_ids = None
        if cuda:
            # init_dist chose LOCAL_RANK % device_count: with one visible GPU per process
            # (slurm --gpus-per-task=1) LOCAL_RANK itself is no valid ordinal.
            device_ids = [torch.cuda.current_device()]
            model = model.cuda(device_ids[0])
        wrapper_cfg.setdefault("find_unused_parameters", find_unused_parameters)
        return MMDistributedDataParallel(model, device_ids=device_ids, **wrapper_cfg)
    if cuda:
        gpu_ids = list(gpu_ids or [0])
        # What is not scattered (GradScaler, autocast, new tensors) goes to the current device.
        torch.cuda.set_device(gpu_ids[0])
        return MMDataParallel(model.cuda(gpu_ids[0]), device_ids=gpu_ids)
    return MMDataParallel(model, device_ids=[-1])


def check_labels_fit_model(model: nn.Module, dataset: Any, key: str = "data") -> None:
    """Check that every ground-truth label of ``dataset`` is a class of ``model``'s head.

    A label outside ``[0, model.head.num_classes)`` would only fail inside the loss, in the
    middle of training (on CUDA as an unreadable device-side assert). Datasets without
    ``get_gt_labels`` and models without ``head.num_classes`` are not checked.

    Args:
        model: The (unwrapped) model.
        dataset: The dataset.
        key: The config key of the dataset, used in the message (``'data.train'``).

    Raises:
        ValueError: A label is out of range; names the sample, the label and ``num_classes``.
    """
    num_classes = getattr(getattr(model, "head", None), "num_classes", None)
    get_gt_labels = getattr(dataset, "get_gt_labels", None)
    if not isinstance(num_classes, int) or get_gt_labels is None:
        return
    labels = np.asarray(get_gt_labels())
    if labels.ndim != 1 or labels.size == 0:
        return
    bad = np.flatnonzero((labels < 0) | (labels >= num_classes))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{key} ({type(dataset).__name__}): sample {i} has gt_label {int(labels[i])}, outside "
            f"[0, {num_classes}) for model.head.num_classes={num_classes} ({bad.size} of "
            f"{labels.size} samples are out of range); make num_classes match the dataset"
        )


def _optimizer_hook_cfg(cfg: Any) -> dict | None:
    """``cfg.optimizer_config``, turned into an Fp16OptimizerHook config when ``cfg.fp16``."""
    optimizer_config = cfg.get("optimizer_config")
    fp16_cfg = cfg.get("fp16")
    if fp16_cfg is None:
        return optimizer_config
    hook_cfg = dict(optimizer_config or {})
    if hook_cfg.get("type", "OptimizerHook") != "OptimizerHook":
        raise ValueError(
            f"fp16 is set but optimizer_config.type is {hook_cfg['type']!r}; fp16 replaces the "
            "plain OptimizerHook only. Remove fp16 or optimizer_config.type."
        )
    hook_cfg.update(fp16_cfg)
    hook_cfg["type"] = "Fp16OptimizerHook"
    return hook_cfg


def _build_optimizers(build_optimizer: Any, model: Any, optimizer_cfg: Any) -> Any:
    """An optimizer, or a dict of them when every value of ``optimizer_cfg`` is a config.

    ``optimizer=dict(generator=dict(type='Adam', lr=1e-4), discriminator=dict(...))`` builds
    one optimizer per named submodule of the (unwrapped) model, the rule of the
    ``build_optimizers`` that mmcv-based GAN and restoration projects use; the runner then
    gets the dict and the model's ``train_step`` steps them.
    """
    values = list(optimizer_cfg.values()) if isinstance(optimizer_cfg, dict) else []
    if not values or not all(isinstance(v, dict) for v in values):
        return build_optimizer(model, optimizer_cfg)
    inner = model.module if is_module_wrapper(model) else model
    optimizers = {}
    for name, cfg in optimizer_cfg.items():
        module = getattr(inner, name, None)
        if not isinstance(module, nn.Module):
            raise AttributeError(
                f"optimizer.{name}: {type(inner).__name__} has no submodule {name!r}; a dict of "
                "optimizer configs names the model's submodules, e.g. optimizer=dict("
                "generator=dict(type='Adam', lr=1e-4), discriminator=dict(type='Adam', lr=4e-4))"
            )
        optimizers[name] = build_optimizer(module, cfg)
    return optimizers


# Loader arguments build_train_dataloaders takes from cfg.data (their config key there).
_DATA_LOADER_KEYS = ("samples_per_gpu", "workers_per_gpu")


def build_train_dataloaders(datasets: Sequence, cfg: Any, distributed: bool) -> list:
    """Build one training loader per dataset from ``cfg.data`` (mmcls 0.x keys).

    ``samples_per_gpu``/``workers_per_gpu`` come from ``cfg.data``; ``cfg.data.train_dataloader``
    (a dict) overrides any loader argument. Their types are checked against
    ``build_dataloader``'s annotations first (``ConfigArgumentTypeError`` naming
    ``samples_per_gpu`` or ``train_dataloader.<argument>``).
    """
    from mmpar.datasets import build_dataloader

    num_gpus = (
        len(cfg.get("gpu_ids") or [0]) if torch.cuda.is_available() and not distributed else 1
    )
    loader_cfg = dict(
        samples_per_gpu=cfg.data.samples_per_gpu,
        workers_per_gpu=cfg.data.workers_per_gpu,
        num_gpus=num_gpus,
        dist=distributed,
        seed=cfg.get("seed"),
    )
    train_loader_cfg = cfg.data.get("train_dataloader", {})
    check_argument_types(build_dataloader, {k: loader_cfg[k] for k in _DATA_LOADER_KEYS})
    with config_error_context("train_dataloader"):
        check_argument_types(build_dataloader, train_loader_cfg)
    loader_cfg.update(train_loader_cfg)
    return [build_dataloader(ds, **loader_cfg) for ds in datasets]


def _register_eval_hook(runner: Any, cfg: Any, distributed: bool, runner_type: str) -> None:
    """Build the validation loader and register EvalHook/DistEvalHook at LOW priority."""
    from mmpar.datasets import build_dataloader, build_dataset
    from mmpar.runner.hooks.evaluation import DistEvalHook, EvalHook

    val_dataset = build_dataset(cfg.data.val, dict(test_mode=True))
    loader_cfg = dict(
        samples_per_gpu=cfg.data.get("val_samples_per_gpu", cfg.data.samples_per_gpu),
        workers_per_gpu=cfg.data.workers_per_gpu,
        dist=distributed,
        shuffle=False,
    )
    loader_cfg.update(cfg.data.get("val_dataloader", {}))
    val_loader = build_dataloader(val_dataset, **loader_cfg)
    eval_cfg = dict(cfg.get("evaluation", {}))
    eval_cfg.setdefault("by_epoch", runner_type != "IterBasedRunner")
    # The hooks' default test_fn is the engine's loop without a progress bar, which would
    # interleave with the training log.
    hook_cls = DistEvalHook if distributed else EvalHook
    check_argument_types(hook_cls, eval_cfg)
    hook = hook_cls(val_loader, **eval_cfg)
    runner.register_hook(hook, priority="LOW")


def _register_preemption_hook(runner: Any, preemption: Any) -> None:
    """Register a PreemptionHook at LOWEST from ``cfg.preemption`` (a dict; None: none).

    None also turns off the runner's own handler, which ``runner.run`` uses when no
    PreemptionHook is registered (a config without the key gets that one).

    Raises:
        ConfigArgumentError: (a TypeError) ``preemption`` is not a dict, or an argument has
            the wrong type; the message starts with ``preemption:``.
        ValueError: An unknown or uncatchable signal.
    """
    from mmpar.runner import HOOKS
    from mmpar.runner.work_dir_guard import set_preemption

    if preemption is None:
        set_preemption(runner, None)
        return
    with config_error_context("preemption"):
        if not isinstance(preemption, dict):
            raise ConfigArgumentError(
                "expected a dict such as dict(signals=['SIGTERM', 'SIGUSR1'], requeue=False), "
                f"or None to turn preemption handling off; got {preemption!r}"
            )
        # build_from_cfg checks the arguments' types (requeue='yes': preemption.requeue ...).
        hook = HOOKS.build({**preemption, "type": "PreemptionHook"})
        runner.register_hook(hook, priority="LOWEST")


def build_train_runner(
    model: nn.Module,
    dataset: Any | Sequence[Any],
    cfg: Any,
    distributed: bool = False,
    validate: bool = False,
    timestamp: str | None = None,
    meta: dict | None = None,
    weights_only: bool = True,
) -> tuple[Any, list]:
    """Every step of :func:`train_model` before ``runner.run``; nothing is written to disk.

    Builds the loaders, wraps the model (``MMDataParallel`` or ``MMDistributedDataParallel``
    on ``cfg.gpu_ids``), builds the optimizer and the runner, registers the training hooks from
    the config (``lr_config``, ``optimizer_config``/``fp16``, ``checkpoint_config``,
    ``log_config``, ``momentum_config``, ``custom_hooks``, ``nan_guard_config``), the
    sampler-seed hook, when ``validate`` the evaluation hook, and when ``cfg.preemption`` is a
    dict a :class:`~mmpar.runner.PreemptionHook` (``PreemptionHook(**cfg.preemption)`` at
    ``LOWEST``: on SIGTERM/SIGUSR1 it saves and raises ``TrainingPreempted``, exit code 75,
    on Ctrl-C the same with exit code 130; without the key ``runner.run`` does the same with
    its own handler, and ``preemption = None`` turns both off), then resumes
    (``resume_from``, ``'auto'`` or ``auto_resume=True``: the newest loadable checkpoint of
    the run that last started in ``work_dir``, see ``runner.resume``) or loads weights
    (``load_from``). So every mistake in the config or the checkpoint is found before the run
    writes its first file. Errors name the config key at fault
    (``optimizer: SGD (registry "optimizer"): unexpected keyword argument "lrr" ...``).
    The runner creates ``cfg.work_dir`` if it is missing (an empty directory).
    ``cfg.compile`` (True, or a dict of ``torch.compile`` arguments) compiles the model in
    place before it is wrapped (see :func:`mmpar.runner.model_setup.compile.compile_model`).

    Args:
        model: The bare model (``train_step``/``val_step`` API).
        dataset: A dataset or a list of datasets, one per workflow phase.
        cfg: The merged config (``cfg.work_dir`` must be set).
        distributed: Whether this process is one rank of a distributed job
            (``init_dist`` was called).
        validate: Register an evaluation hook on ``cfg.data.val``.
        timestamp: Names the log files (``<timestamp>.log``/``.log.json``); keep it equal to
            the one of the logger's file.
        meta: Stored in the runner and in checkpoints (env info, seed, config text ...).
        weights_only: Load ``resume_from``/``load_from`` with ``weights_only`` (see
            :func:`mmpar.runner.load_checkpoint`); False only for trusted files.

    Returns:
        ``(runner, data_loaders)``; train with ``runner.run(data_loaders, cfg.workflow)``.
    """
    from mmpar.runner import DistSamplerSeedHook, build_optimizer, build_runner
    from mmpar.runner.arg_checks import check_workflow
    from mmpar.runner.model_setup.compile import compile_model

    check_train_config(cfg, validate)
    logger = get_logger("mmpar", log_level=cfg.get("log_level", "INFO"))
    datasets = list(dataset) if isinstance(dataset, (list, tuple)) else [dataset]
    with config_error_context("workflow"):
        check_workflow(datasets, cfg.workflow)
    with config_error_context("data"):
        data_loaders = build_train_dataloaders(datasets, cfg, distributed)

    # In place, before any wrapper; refused for MMDataParallel over several GPUs.
    replicas = 1 if distributed or not torch.cuda.is_available() else len(cfg.get("gpu_ids") or [0])
    model = compile_model(model, cfg.get("compile"), replicas)
    with config_error_context("model_wrapper"):
        model = wrap_model(
            model,
            distributed,
            gpu_ids=cfg.get("gpu_ids"),
            find_unused_parameters=cfg.get("find_unused_parameters", False),
            wrapper_cfg=cfg.get("model_wrapper"),
        )
    with config_error_context("optimizer"):
        optimizer = _build_optimizers(build_optimizer, model, cfg.optimizer)
    with config_error_context("runner"):
        runner_cfg = runner_config(cfg)
        runner_type = runner_cfg.get("type", "EpochBasedRunner")
        runner = build_runner(
            runner_cfg,
            default_args=dict(
                model=model, optimizer=optimizer, work_dir=cfg.work_dir, logger=logger, meta=meta
            ),
        )
    runner.timestamp = timestamp

    # The runner's NaN guard is opt-in (its default hook list is mmcv's); our own training
    # entry point turns it on unless the config says ``nan_guard_config=None``.
    nan_guard = cfg.get("nan_guard_config", {"type": "NanGuardHook"})
    runner.register_training_hooks(
        cfg.lr_config,
        _optimizer_hook_cfg(cfg),
        cfg.get("checkpoint_config"),
        cfg.get("log_config"),
        cfg.get("momentum_config"),
        custom_hooks_config=cfg.get("custom_hooks"),
        nan_guard_config=nan_guard,
    )
    # Our loaders always use a seedable sampler (also without distribution, so training is
    # resumable); it must learn the epoch to reshuffle, hence the hook in both cases.
    runner.register_hook(DistSamplerSeedHook())
    if validate:
        with config_error_context("evaluation"):
            _register_eval_hook(runner, cfg, distributed, runner_type)
    _register_preemption_hook(runner, cfg.get("preemption"))

    resume_from = configured_resume(cfg)
    if resume_from:
        runner.resume(resume_from, weights_only=weights_only)
    elif cfg.get("load_from"):
        runner.load_checkpoint(cfg.load_from, weights_only=weights_only)
    return runner, data_loaders


def configured_resume(cfg: Any) -> str | None:
    """What a run of ``cfg`` resumes from: the one place that decides whether it resumes.

    ``cfg.resume_from`` (a path, or ``'auto'``) wins; else ``'auto'`` with ``auto_resume``
    (the run named in ``work_dir/last_run.json``, see ``runner.resume``); else None.
    """
    resume_from = cfg.get("resume_from")
    if cfg.get("auto_resume") and not resume_from:
        return "auto"
    return resume_from or None


def train_model(model: nn.Module, dataset: Any | Sequence[Any], cfg: Any, *args, **kwargs) -> Any:
    """Train ``model`` on ``dataset`` as configured by ``cfg`` (mmcv 1.x / mmcls 0.x semantics).

    :func:`build_train_runner`, then ``runner.run(data_loaders, cfg.workflow)``. The arguments
    are those of :func:`build_train_runner`, in mmcv's order: ``train_model(model, dataset, cfg,
    distributed=False, validate=False, timestamp=None, meta=None)``, plus ``weights_only``.

    Returns:
        The runner, after training.
    """
    runner, data_loaders = build_train_runner(model, dataset, cfg, *args, **kwargs)
    runner.run(data_loaders, cfg.workflow)
    return runner


# help() and inspect show the arguments train_model forwards, not ``*args, **kwargs``.
train_model.__signature__ = inspect.signature(build_train_runner).replace(return_annotation="Any")
