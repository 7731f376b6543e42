#!/usr/bin/env bash
# Install everything and make sure the agent runs (scripts/setup.sh, which calls scripts/agent.sh), then open the
# designer on a lab. Run through sudo, the designer opens as the invoking user ($SUDO_USER, added to the vtopo group) and deploys
# through the agent. Without a display it says so and shows the headless command line instead.
#
# Usage: scripts/run.sh [LAB]   (default: topologies/l2-vs-l3.vtopo)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB=${1:-topologies/l2-vs-l3.vtopo}

bash "$ROOT/scripts/setup.sh"
cd "$ROOT"

if [[ -z ${DISPLAY:-} && -z ${WAYLAND_DISPLAY:-} ]]; then
    cat <<MSG

vtopo is installed, but there is no display here (\$DISPLAY and \$WAYLAND_DISPLAY are unset),
so the designer cannot open. The same engine works from the command line, as root:

    . .venv/bin/activate                    # puts vtopo on PATH (or call .venv/bin/vtopo)
    vtopo --help
    vtopo plan $LAB --explain
    vtopo deploy $LAB

The labs are in topologies/. To open the designer, run 'make run' again from a graphical session
(ssh -X works too).
MSG
    exit 0
fi

if [[ -n ${SUDO_USER:-} && $SUDO_USER != root ]]; then
    if ! id -nG "$SUDO_USER" | tr ' ' '\n' | grep -qx vtopo; then
        usermod -aG vtopo "$SUDO_USER"
        echo "run: added $SUDO_USER to the vtopo group (other sessions see it after logging in again)"
    fi
    echo "run: opening the designer on $LAB as $SUDO_USER"
    exec runuser -u "$SUDO_USER" -- "$ROOT/.venv/bin/vtopo" gui "$LAB"
fi
echo "run: opening the designer on $LAB (as root: it shows a warning; run 'sudo make run' from your own account)"
exec "$ROOT/.venv/bin/vtopo" gui "$LAB"
