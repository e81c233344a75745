#!/usr/bin/env bash
# Run the whole test suite (bootstraps .venv the first time).
# Test files are spread over one pytest-xdist worker per core (at most 4; a file's tests stay
# together so its module fixtures run once): most tests wait on subprocesses that use one core.
# Files go out in collection order, where tests/conftest.py puts the long ones first.
# MMPAR_TEST_WORKERS=0 runs everything in this process.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/bootstrap.sh"
cd "$root"
exec "$root/.venv/bin/python" -m pytest -n "${MMPAR_TEST_WORKERS:-auto}" --maxprocesses 4 \
    --dist loadfile --no-loadscope-reorder "$@"
