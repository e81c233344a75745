#!/usr/bin/env bash
# Launch tools/train.py on NPROC processes of this node with torchrun.
# Usage: bash tools/dist_train.sh CONFIG NPROC [train.py args...]
# Multi-node, static rendezvous: on every node set NNODES, NODE_RANK (0..NNODES-1),
# MASTER_ADDR (node 0's address) and PORT or MASTER_PORT (default 29500).
# Multi-node, c10d rendezvous: on every node set NNODES and RDZV_ENDPOINT=host:port (a host
# all nodes reach; the agent on that host serves the rendezvous), optionally RDZV_ID and
# LOCAL_ADDR (this node's address for the others, if its host name does not resolve); no
# NODE_RANK needed. PYTHON selects the interpreter (default: python).
# See docs/distributed.md, "Multi-node and SLURM".
set -euo pipefail
if [ "$#" -lt 2 ]; then
    echo "usage: $0 CONFIG NPROC [train.py args...]" >&2
    exit 2
fi
source "$(dirname "$0")/launch_common.sh"
# One node: a work dir that another run holds stops here, with the error line last, rather than
# in every rank under torchrun's long failure report. (Several nodes: the other nodes' runs of
# this very job may hold it, so only the ranks check.)
if [ "${NNODES:-1}" = 1 ] && [ -z "${RDZV_ENDPOINT:-}" ]; then
    "${PYTHON:-python}" -m mmpar.cli.work_dir_check "$1" "${@:3}"
fi
mmpar_torchrun train.py "$2" "$1" --launcher pytorch "${@:3}"
