#!/usr/bin/env bash
# Make sure the vtopo agent runs, as root: under systemd its socket unit (installed by scripts/setup.sh),
# elsewhere `vtopo agent --daemon` with its pid in /run/vtopo/agent.pid. Does nothing when one already listens.
#
# Usage: scripts/agent.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SOCKET=/run/vtopo/agent.sock

if [[ -d /run/systemd/system ]] && systemctl cat vtopo-agent.socket >/dev/null 2>&1; then
    systemctl start vtopo-agent.socket
    echo "agent: vtopo-agent.socket is active (systemd starts the agent on demand)"
elif "$ROOT/.venv/bin/python" -c 'import sys; from vtopo.agent.client import agent_running; sys.exit(not agent_running())'; then
    echo "agent: already listening on $SOCKET"
else
    "$ROOT/.venv/bin/vtopo" agent --daemon
    echo "agent: started, pid $(cat /run/vtopo/agent.pid), listening on $SOCKET (stop it: kill \$(cat /run/vtopo/agent.pid))"
fi
