#!/usr/bin/env bash
# Install everything (scripts/setup.sh) and open the designer on a lab, as root.
# Without a display it says so and shows the headless command line instead.
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

echo "run: opening the designer on $LAB"
exec "$ROOT/.venv/bin/vtopo" gui "$LAB"
