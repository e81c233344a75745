"""Train a classifier from a config file (mmcls 0.x ``tools/train.py`` flags).

Examples (``mmpar-train`` is this command, installed with mmpar; ``tools/train.py`` in a clone):
    mmpar-train digits_lenet          # a config shipped with mmpar, from any directory
    mmpar-train --list-configs
    python tools/train.py configs/digits_lenet.py
    python tools/train.py configs/digits_lenet.py --work-dir work_dirs/run1 --auto-resume
    bash tools/dist_train.sh configs/digits_lenet.py 2

Exit codes:
    0   training finished.
    1   a checkpoint could not be written (disk full, file-size limit): one ``error:`` line.
    2   bad input (config, data, checkpoint, flag, work dir): one ``error:`` line, nothing
        written into the work dir. A new run (no --auto-resume/--resume-from) in a work dir
        that holds checkpoints is one too (mmpar/runner/work_dir_guard/run_mixing.py).
    75  preempted (EX_TEMPFAIL, "try again"): SIGTERM or SIGUSR1 (the config key
        ``preemption``, on by default; ``preemption = None`` turns it off) saved
        ``preempted_iter_<N>.pth`` (``latest.pth``) after the current iteration; run the same
        command with ``--auto-resume`` to continue exactly. A second signal ends the process
        at once (exit by the signal, e.g. -15 / 143).
    130 interrupted by Ctrl-C (SIGINT): saved and summarised as for code 75; a second Ctrl-C
        ends the process at once, unsaved.
"""

from __future__ import annotations

import argparse
import copy
import os
import os.path as osp
import sys
import time

import torch

import mmpar
from mmpar.cli import (
    ENVIRONMENT_ERRORS,
    DeferredLogFile,
    UsageError,
    WorkDirLock,
    add_trust_checkpoint_argument,
    check_checkpoint_path,
    check_shared_work_dir,
    check_work_dir,
    environment_errors,
    init_launcher,
    new_log_name,
    on_rank_zero,
    report_summary,
    run_status,
    user_errors,
)
from mmpar.cli.args import train_work_dir
from mmpar.cli.packaged_configs import ListConfigsAction, resolve_config
from mmpar.runner.hooks.preemption import TrainingPreempted
from mmpar.runner.work_dir_guard import check_new_run_work_dir, options_declared
from mmpar.utils import Config, DictAction, get_logger
from mmpar.utils.config.key_reads import report_unread_keys, watch_keys

# A run without --seed and without cfg.seed uses this seed, so two runs of the same command
# give the same model (mmcv draws a random seed instead; pass --seed to choose another).
DEFAULT_SEED = 0


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description="Train a model from a config file.")
    parser.add_argument(
        "config",
        type=resolve_config,
        help="config file (.py, .json or .yaml) or shipped config name",
    )
    parser.add_argument("--list-configs", action=ListConfigsAction)
    parser.add_argument(
        "--work-dir",
        help="directory for logs and checkpoints "
        "(default: cfg.work_dir, else work_dirs/<config name>)",
    )
    parser.add_argument(
        "--resume-from",
        help="checkpoint to resume from (continues its run), or 'auto' (as --auto-resume)",
    )
    parser.add_argument(
        "--auto-resume",
        action="store_true",
        help="continue the run that last started in the work dir (last_run.json) from its newest "
        "checkpoint; start from scratch when it has none (docs/resume.md)",
    )
    parser.add_argument("--load-from", help="checkpoint whose weights initialise the model")
    add_trust_checkpoint_argument(parser, "--resume-from/--load-from")
    parser.add_argument(
        "--no-validate", action="store_true", help="do not evaluate on cfg.data.val during training"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help=f"random seed (default: cfg.seed, else {DEFAULT_SEED})",
    )
    parser.add_argument(
        "--diff-seed",
        action="store_true",
        help="add the rank to the seed so every process draws different numbers",
    )
    parser.add_argument(
        "--deterministic",
        action="store_true",
        help="use deterministic algorithms (torch.use_deterministic_algorithms)",
    )
    parser.add_argument(
        "--gpu-ids",
        type=int,
        nargs="+",
        help="GPUs of a non-distributed run (MMDataParallel); default [0]",
    )
    parser.add_argument(
        "--cfg-options",
        nargs="+",
        action=DictAction,
        default={},
        help="override config keys, e.g. runner.max_epochs=2 data.samples_per_gpu=8",
    )
    parser.add_argument(
        "--launcher",
        choices=["none", "pytorch", "slurm", "mpi"],
        default="none",
        help="job launcher; 'pytorch' under torchrun (tools/dist_train.sh)",
    )
    parser.add_argument(
        "--requeue-on-preempt",
        action="store_true",
        help="when preempted under SLURM, run `scontrol requeue $SLURM_JOB_ID` after saving "
        "(sets preemption.requeue=True)",
    )
    parser.add_argument(
        "--local_rank", "--local-rank", type=int, default=0, help=argparse.SUPPRESS
    )  # torch.distributed.launch passes it
    return parser.parse_args(argv)


def load_config(args: argparse.Namespace) -> Config:
    """Read the config, apply the command-line overrides and choose the work dir."""
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
        watch_keys(cfg.added_option_keys)  # reported by lock_and_build if nothing reads them
    cfg.work_dir = train_work_dir(args.work_dir, cfg, args.config)
    if args.resume_from is not None:
        cfg.resume_from = args.resume_from
    if args.load_from is not None:
        cfg.load_from = args.load_from
    cfg.auto_resume = args.auto_resume or cfg.get("auto_resume", False)
    set_preemption(cfg, args.requeue_on_preempt)
    for key in ("resume_from", "load_from"):
        path = cfg.get(key)
        if path and path != "auto" and "://" not in path:
            check_checkpoint_path(path, f"{key} checkpoint")
    if torch.backends.cudnn.is_available() and cfg.get("cudnn_benchmark", False):
        torch.backends.cudnn.benchmark = True
    return cfg


def set_preemption(cfg: Config, requeue: bool) -> None:
    """Preemption handling is on unless the config sets ``preemption = None``.

    Raises:
        UsageError: ``--requeue-on-preempt`` with ``preemption = None`` in the config.
    """
    if "preemption" not in cfg:
        cfg.preemption = dict()
    if requeue:
        if cfg.preemption is None:
            raise UsageError(
                "--requeue-on-preempt needs preemption handling, but the config sets "
                "preemption = None; remove that line or the flag"
            )
        cfg.preemption.requeue = True


def setup(args: argparse.Namespace):
    """Config, distribution, seed, model and data; writes nothing into the work dir."""
    from mmpar.apis.train import check_labels_fit_model
    from mmpar.apis.train_config import check_train_config
    from mmpar.datasets import build_dataset
    from mmpar.models import build_classifier
    from mmpar.runner.dist_utils import get_dist_info
    from mmpar.utils import collect_env, get_logger, set_random_seed
    from mmpar.utils.registry import config_error_context

    cfg = load_config(args)
    # Every key the run reads, before the launcher, the model or the data: all missing ones
    # are named in one error.
    check_train_config(cfg, validate=not args.no_validate)
    distributed = init_launcher(args.launcher, cfg.get("dist_params", {}), cfg.get("model_wrapper"))
    if distributed:
        _, world_size = get_dist_info()
        cfg.gpu_ids = list(range(world_size))
    else:
        cfg.gpu_ids = args.gpu_ids or [0]
    rank, _ = get_dist_info()
    check_work_dir(cfg.work_dir)
    logger = get_logger("mmpar", log_level=cfg.get("log_level", "INFO"))

    env_info = "\n".join(f"{k}: {v}" for k, v in collect_env().items())
    dash = "-" * 60
    logger.info(f"Environment info:\n{dash}\n{env_info}\n{dash}")
    logger.info(f"Distributed training: {distributed}")
    logger.info(f"Config:\n{cfg.pretty_text}")

    seed = args.seed if args.seed is not None else cfg.get("seed", DEFAULT_SEED)
    if seed is None:
        seed = DEFAULT_SEED
    seed = seed + rank if args.diff_seed else seed
    logger.info(f"Set random seed to {seed}, deterministic: {args.deterministic}")
    set_random_seed(seed, deterministic=args.deterministic)
    cfg.seed = seed

    with config_error_context("model"):
        model = build_classifier(cfg.model)
        # Inside the context: a bad init_cfg or pretrained file is reported under "model".
        if hasattr(model, "init_weights"):
            model.init_weights()
    with config_error_context("data.train"):
        datasets = [build_dataset(cfg.data.train)]
    check_labels_fit_model(model, datasets[0], "data.train")
    if isinstance(cfg.workflow, (list, tuple)) and len(cfg.workflow) == 2:
        # A ('val', N) phase runs val_step (losses) on the val set with the train pipeline.
        val_cfg = copy.deepcopy(cfg.data.val)
        val_cfg.pipeline = cfg.data.train.pipeline
        with config_error_context("data.val"):
            datasets.append(build_dataset(val_cfg))
        check_labels_fit_model(model, datasets[1], "data.val")

    meta = dict(
        env_info=env_info,
        config=cfg.pretty_text,
        seed=seed,
        exp_name=osp.basename(args.config),
        mmpar_version=mmpar.__version__,
        CLASSES=getattr(datasets[0], "CLASSES", None),
    )
    if cfg.get("checkpoint_config") is not None:
        cfg.checkpoint_config.setdefault("meta", {})
        cfg.checkpoint_config.meta.update(
            mmpar_version=mmpar.__version__, CLASSES=getattr(datasets[0], "CLASSES", None)
        )
    return cfg, model, datasets, distributed, meta


def open_work_dir(cfg: Config, config_path: str, timestamp: str, log: DeferredLogFile) -> None:
    """Create the work dir, dump the config into it and start the log file (rank 0 writes).

    The log file ``<timestamp>.log`` must not exist yet (see :func:`mmpar.cli.new_log_name`).
    """
    from mmpar.runner.dist_utils import get_dist_info

    os.makedirs(osp.abspath(cfg.work_dir), exist_ok=True)
    if get_dist_info()[0] == 0:
        cfg.dump(osp.join(cfg.work_dir, osp.basename(config_path)))
    log.open(osp.join(cfg.work_dir, f"{timestamp}.log"), cfg.get("log_level", "INFO"), "x")


def lock_and_build(args: argparse.Namespace, setup_result: tuple, log: DeferredLogFile):
    """Take the work dir's lock (rank 0), then build the runner, resume and open the log.

    Returns:
        ``(lock, runner, data_loaders)``; the caller releases the lock when the run ends.

    Raises:
        WorkDirLockedError: Another run holds the work dir (on every rank under torchrun).
    """
    from mmpar.apis.train import build_train_runner, configured_resume

    cfg, model, datasets, distributed, meta = setup_result
    lock = WorkDirLock(cfg.work_dir)
    on_rank_zero(lock.acquire)
    try:
        check_shared_work_dir(lock, configured_resume(cfg) == "auto")
        # Unique per run (rank 0 draws it): names both <timestamp>.log and .log.json.
        timestamp = on_rank_zero(lambda: new_log_name(cfg.work_dir))
        runner, data_loaders = build_train_runner(
            model,
            datasets,
            cfg,
            distributed=distributed,
            validate=not args.no_validate,
            timestamp=timestamp,
            meta=meta,
            weights_only=not args.trust_checkpoint,
        )
        # After the build, so that config errors are named first; before anything is written.
        resuming = configured_resume(cfg) is not None
        on_rank_zero(lambda: check_new_run_work_dir(cfg.work_dir, meta["config"], resuming))
        open_work_dir(cfg, args.config, timestamp, log)
        on_rank_zero(lambda: report_unread_keys(get_logger("mmpar")))
    except BaseException:
        lock.release(discard=True)  # a failed set-up leaves the work dir as it found it
        raise
    return lock, runner, data_loaders


def main(argv=None) -> int:
    """Run the command; return the exit code.

    Bad input found while setting the run up (config, data, checkpoint, launcher, work dir)
    exits with code 2 and one ``error:`` line, before anything is written into the work dir.
    So does a work dir that another run holds (its lock, see
    :mod:`mmpar.runner.work_dir_guard.lock`).
    A checkpoint that cannot be written while training (disk full, file-size limit) exits
    with code 1 and one ``error:`` line after the run summary; the previous checkpoints are
    left as they were. A preempted run (SIGTERM/SIGUSR1) saves a checkpoint and exits with
    code 75. A run that finishes, stops early or is preempted prints the summary (rank 0).
    """
    # The runner's messages (preemption save, a refused new run) name these options while
    # the command runs (and no longer once it returned: it may be called in-process).
    with options_declared("--auto-resume", "--resume-from", "--work-dir"):
        return _main(argv)


def _main(argv) -> int:
    started = time.monotonic()
    args = parse_args(argv)
    # The log file is written only once the set-up succeeded.
    with DeferredLogFile("mmpar") as log, user_errors():
        setup_result = setup(args)
        lock, runner, data_loaders = lock_and_build(args, setup_result, log)
    cfg, distributed = setup_result[0], setup_result[3]

    status, code = None, 0  # how the run ended, for the summary
    # The summary comes first, then environment_errors' one error line (exit code 1).
    with environment_errors():
        try:
            runner.run(data_loaders, cfg.workflow)
            status = run_status(runner)
        except TrainingPreempted as preempted:  # saved and logged; exit 75 (Ctrl-C: 130)
            status, code = preempted.status, preempted.code
        except ENVIRONMENT_ERRORS as err:  # e.g. CheckpointSaveError: disk full
            status = f"failed: {type(err).__name__}"
            raise
        finally:
            if status is not None:
                report_summary(runner, status, time.monotonic() - started)
            lock.release()
    if distributed:
        from mmpar.runner.dist_utils import destroy_dist

        destroy_dist()
    return code


if __name__ == "__main__":
    sys.exit(main())
