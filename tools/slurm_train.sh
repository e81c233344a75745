#!/usr/bin/env bash
# Launch tools/train.py as GPUS tasks of a SLURM job step (srun), one process per task.
# Usage: [GPUS=16] [GPUS_PER_NODE=8] [CPUS_PER_TASK=5] [SRUN_ARGS="..."] \
#     bash tools/slurm_train.sh PARTITION JOB_NAME CONFIG WORK_DIR [train.py args...]
# Runs: srun -p PARTITION --job-name=JOB_NAME --gres=gpu:GPUS_PER_NODE --ntasks=GPUS
#     --ntasks-per-node=GPUS_PER_NODE --cpus-per-task=CPUS_PER_TASK --kill-on-bad-exit=1
#     SRUN_ARGS PYTHON -u tools/train.py CONFIG --work-dir=WORK_DIR --launcher=slurm ARGS
# Defaults: GPUS=8, GPUS_PER_NODE=8, CPUS_PER_TASK=5, SRUN_ARGS empty, PYTHON=python.
# CPU clusters: GPUS_PER_NODE=0 requests no --gres; GPUS is then the number of processes and
# TASKS_PER_NODE (optional) their number per node. Each task finds its rank in SLURM_PROCID,
# the job size in SLURM_NTASKS and the master in `scontrol show hostnames` (first host);
# MASTER_PORT (default 29500) must be free on that host. WORK_DIR must be on a filesystem all
# nodes share (rank 0 writes it; every rank reads it to resume).
set -euo pipefail
if [ "$#" -lt 4 ]; then
    echo "usage: $0 PARTITION JOB_NAME CONFIG WORK_DIR [train.py args...]" >&2
    exit 2
fi
source "$(dirname "$0")/launch_common.sh"
mmpar_srun "$1" "$2" train.py "$3" --work-dir="$4" --launcher=slurm "${@:5}"
