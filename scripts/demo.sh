#!/usr/bin/env bash
# Train the offline default demo (handwritten digits, ~1 minute on 2 CPU cores).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/bootstrap.sh"
cd "$root"
exec "$root/.venv/bin/python" tools/train.py configs/digits_lenet.py "$@"
