#!/usr/bin/env bash
# Create .venv and install mmpar with its test/demo extras, once.
# Re-running is cheap: the install is skipped while pyproject.toml is unchanged.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="$venv/.mmpar-installed"
want="$(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$venv/bin/python" -c "import mmpar" 2>/dev/null; then
    exit 0
fi
echo "[bootstrap] installing mmpar into $venv (first run only, a few minutes)" >&2
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# torch/torchvision pinned to the releases this machine ships on disk; the package itself
# declares torch>=2.1 so users elsewhere are not pinned.
"$venv/bin/pip" install -q "torch==2.14.1" "torchvision==0.29.1"
"$venv/bin/pip" install -q -e "$root[test,demo,plot]"
echo "$want" > "$stamp"
