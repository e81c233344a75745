# Shared by tools/dist_*.sh and tools/slurm_*.sh (sourced, not run): how they start a tool.
# Each function takes the tool's file name (train.py, test.py, next to this file) and the
# tool's arguments, reads the launcher's environment variables and replaces the shell with
# the launcher (exec).

# torchrun on this node. NPROC processes; the rendezvous is chosen from the environment:
#   static (default, the mmdet convention): NNODES (1), NODE_RANK (0), MASTER_ADDR
#     (127.0.0.1), PORT or MASTER_PORT (29500); every node passes the same MASTER_ADDR/PORT
#     and its own NODE_RANK.
#   c10d (RDZV_ENDPOINT=host:port set): --rdzv_backend=c10d --rdzv_endpoint=RDZV_ENDPOINT
#     --rdzv_id=RDZV_ID (default mmpar); the agents agree on node ranks themselves, so
#     NODE_RANK/MASTER_ADDR/PORT are not used. NNODES may be a range MIN:MAX. The workers
#     reach rank 0 at the address of the agent that became node 0: its host name, or
#     LOCAL_ADDR (--local_addr) when set on that node.
# PYTHON selects the interpreter (default python).
mmpar_torchrun() {
    local tool=$1 nproc=$2
    shift 2
    local -a rdzv
    if [ -n "${RDZV_ENDPOINT:-}" ]; then
        rdzv=(
            --rdzv_backend=c10d
            --rdzv_endpoint="$RDZV_ENDPOINT"
            --rdzv_id="${RDZV_ID:-mmpar}"
        )
        if [ -n "${LOCAL_ADDR:-}" ]; then
            rdzv+=(--local_addr="$LOCAL_ADDR")
        fi
    else
        rdzv=(
            --node_rank="${NODE_RANK:-0}"
            --master_addr="${MASTER_ADDR:-127.0.0.1}"
            --master_port="${PORT:-${MASTER_PORT:-29500}}"
        )
    fi
    exec "${PYTHON:-python}" -m torch.distributed.run \
        --nnodes="${NNODES:-1}" \
        "${rdzv[@]}" \
        --nproc_per_node="$nproc" \
        "$(dirname "${BASH_SOURCE[0]}")/$tool" "$@"
}

# srun on a SLURM partition: GPUS tasks in all (default 8), GPUS_PER_NODE per node (default
# 8), CPUS_PER_TASK (default 5), SRUN_ARGS (extra srun options, split on whitespace), PYTHON
# (default python). The caller passes the tool's arguments, --launcher=slurm among them.
# GPUS_PER_NODE=0 is a CPU cluster: no --gres is requested, GPUS counts processes, and
# --ntasks-per-node is passed only when TASKS_PER_NODE is set (else SLURM places the tasks).
mmpar_srun() {
    local partition=$1 job_name=$2 tool=$3
    shift 3
    local gpus=${GPUS:-8} gpus_per_node=${GPUS_PER_NODE:-8} name
    for name in GPUS GPUS_PER_NODE CPUS_PER_TASK TASKS_PER_NODE; do
        case "${!name:-0}" in
            '' | *[!0-9]*)
                echo "$name must be a whole number, got '${!name}'" >&2
                exit 2
                ;;
        esac
    done
    local -a gres=() per_node=() extra=()
    if [ "$gpus_per_node" -gt 0 ]; then
        gres=(--gres=gpu:"$gpus_per_node")
        per_node=(--ntasks-per-node="${TASKS_PER_NODE:-$gpus_per_node}")
    elif [ -n "${TASKS_PER_NODE:-}" ]; then
        per_node=(--ntasks-per-node="$TASKS_PER_NODE")
    fi
    read -r -a extra <<< "${SRUN_ARGS:-}"
    exec srun -p "$partition" \
        --job-name="$job_name" \
        "${gres[@]}" \
        --ntasks="$gpus" \
        "${per_node[@]}" \
        --cpus-per-task="${CPUS_PER_TASK:-5}" \
        --kill-on-bad-exit=1 \
        "${extra[@]}" \
        "${PYTHON:-python}" -u "$(dirname "${BASH_SOURCE[0]}")/$tool" "$@"
}
