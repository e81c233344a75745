#!/usr/bin/env bash
# Train the offline default demo (handwritten digits, ~1 minute on 2 CPU cores).
# The first run installs mmpar with only the demo extra (scikit-learn, for the Digits data);
# scripts/test.sh adds the test and plot extras.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/bootstrap.sh" demo
cd "$root"
exec "$root/.venv/bin/python" tools/train.py configs/digits_lenet.py "$@"
