#!/usr/bin/env bash
# Launch tools/test.py on NPROC processes of this node with torchrun.
# Usage: bash tools/dist_test.sh CONFIG CHECKPOINT NPROC [test.py args...]
# Multi-node: the same environment as tools/dist_train.sh (NNODES with NODE_RANK, MASTER_ADDR
# and PORT/MASTER_PORT, or with RDZV_ENDPOINT and RDZV_ID for a c10d rendezvous).
# PYTHON selects the interpreter (default: python).
set -euo pipefail
if [ "$#" -lt 3 ]; then
    echo "usage: $0 CONFIG CHECKPOINT NPROC [test.py args...]" >&2
    exit 2
fi
source "$(dirname "$0")/launch_common.sh"
mmpar_torchrun test.py "$3" "$1" "$2" --launcher pytorch "${@:4}"
