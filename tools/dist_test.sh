#!/usr/bin/env bash
# Launch tools/test.py on NPROC processes of this node with torchrun.
# Usage: bash tools/dist_test.sh CONFIG CHECKPOINT NPROC [test.py args...]
# Multi-node: set NNODES, NODE_RANK, MASTER_ADDR (and PORT) on every node.
# PYTHON selects the interpreter (default: python).
set -euo pipefail
if [ "$#" -lt 3 ]; then
    echo "usage: $0 CONFIG CHECKPOINT NPROC [test.py args...]" >&2
    exit 2
fi
CONFIG=$1
CHECKPOINT=$2
NPROC=$3
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-${MASTER_PORT:-29500}}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
PYTHON=${PYTHON:-python}
exec "$PYTHON" -m torch.distributed.run \
    --nnodes="$NNODES" \
    --node_rank="$NODE_RANK" \
    --master_addr="$MASTER_ADDR" \
    --master_port="$PORT" \
    --nproc_per_node="$NPROC" \
    "$(dirname "$0")/test.py" "$CONFIG" "$CHECKPOINT" --launcher pytorch "${@:4}"
