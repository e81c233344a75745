#!/usr/bin/env bash
# Create .venv and install mmpar (editable) with the extras given, once.
#   bash scripts/bootstrap.sh               # test,demo,plot: what scripts/test.sh needs
#   bash scripts/bootstrap.sh demo          # only what scripts/demo.sh needs
# Re-running is cheap: the install is skipped while pyproject.toml is unchanged and the venv
# already has the extras asked for (a venv made for the tests serves the demo too).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
extras="${1:-test,demo,plot}"
stamp="$venv/.mmpar-installed"
want="$(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)"

# The stamp holds "<pyproject.toml hash> <extras>"; a stamp without extras is from the time
# every run installed test,demo,plot.
covered() {
    local have=",$1,"
    local extra
    for extra in ${extras//,/ }; do
        [[ "$have" == *",$extra,"* ]] || return 1
    done
}
if [ -f "$stamp" ] && read -r have_hash have_extras < "$stamp" \
    && [ "$have_hash" = "$want" ] && covered "${have_extras:-test,demo,plot}" \
    && "$venv/bin/python" -c "import mmpar" 2>/dev/null; then
    exit 0
fi
echo "[bootstrap] installing mmpar[$extras] into $venv (first run only, a few minutes)" >&2
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# torch/torchvision pinned to the releases this machine ships on disk; the package itself
# declares torch>=2.1 so users elsewhere are not pinned.
"$venv/bin/pip" install -q "torch==2.14.1" "torchvision==0.29.1"
"$venv/bin/pip" install -q -e "$root[$extras]"
echo "$want $extras" > "$stamp"
