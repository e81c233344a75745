#!/usr/bin/env bash
# Launch tools/test.py as GPUS tasks of a SLURM job step (srun), one process per task.
# Usage: [GPUS=16] [GPUS_PER_NODE=8] [CPUS_PER_TASK=5] [SRUN_ARGS="..."] \
#     bash tools/slurm_test.sh PARTITION JOB_NAME CONFIG CHECKPOINT [test.py args...]
# The same srun command and environment as tools/slurm_train.sh (GPUS_PER_NODE=0 for CPU
# clusters: no --gres), running tools/test.py CONFIG CHECKPOINT --launcher=slurm ARGS.
set -euo pipefail
if [ "$#" -lt 4 ]; then
    echo "usage: $0 PARTITION JOB_NAME CONFIG CHECKPOINT [test.py args...]" >&2
    exit 2
fi
source "$(dirname "$0")/launch_common.sh"
mmpar_srun "$1" "$2" test.py "$3" "$4" --launcher=slurm "${@:5}"
