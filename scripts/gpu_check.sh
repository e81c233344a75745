#!/usr/bin/env bash
# Check mmpar's CUDA paths on this machine (docs/distributed.md#gpu-check): the CUDA tests, an
# fp16 training, exact resume after a kill, and with 2+ GPUs the same under torchrun with nccl
# plus MMDataParallel over 2 GPUs. One line per check and a summary.
# Exit code: 0 every check passed, 1 a check failed, 3 no CUDA device (nothing checked).
# Bootstraps .venv the first time; MMPAR_PYTHON=/path/to/python uses that interpreter instead
# (an environment mmpar is installed in) and skips the bootstrap.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${MMPAR_PYTHON:-}"
if [ -z "$python" ]; then
    bash "$root/scripts/bootstrap.sh"
    python="$root/.venv/bin/python"
fi
cd "$root"
exec "$python" scripts/gpu_check.py "$@"
