#!/usr/bin/env bash
# Make sure the vtopo agent runs, as root: under systemd its socket unit (installed by scripts/setup.sh), elsewhere
# `vtopo agent --daemon` with its pid in agent.pid beside the socket. Idempotent: when an agent already listens, it
# is left alone, and when that agent runs another checkout's code, or started before this checkout's code last
# changed, this says which and how to replace it.
#
# Usage: scripts/agent.sh   (VTOPO_AGENT_SOCKET: another socket than /run/vtopo/agent.sock; VTOPO_VENV: another venv)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${VTOPO_VENV:-$ROOT/.venv}
SOCKET=${VTOPO_AGENT_SOCKET:-/run/vtopo/agent.sock}
PID_FILE=$(dirname "$SOCKET")/agent.pid

listening() {
    VTOPO_AGENT_SOCKET=$SOCKET "$VENV/bin/python" -c \
        'import sys; from vtopo.client.agent_client import agent_running; sys.exit(not agent_running())'
}

if [[ -d /run/systemd/system ]] && [[ $SOCKET == /run/vtopo/agent.sock ]] && systemctl cat vtopo-agent.socket >/dev/null 2>&1; then
    systemctl start vtopo-agent.socket
    echo "agent: vtopo-agent.socket is active (systemd starts the agent on demand)"
elif listening; then
    pid=$(cat "$PID_FILE" 2>/dev/null || true)
    command=$( [[ -n $pid && -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" || true)
    changed=$( [[ -n $pid && -d /proc/$pid ]] && find "$ROOT/app" "$ROOT/plugins" -name '*.py' -newer "/proc/$pid" \
               -print -quit || true)
    if [[ $command == *"$VENV/bin/"* && -n $changed ]]; then
        # It imports some modules only when a request first needs them: it would run this code mixed with the old.
        echo "agent: the agent listening on $SOCKET (pid $pid) started before this checkout's code changed" \
             "(${changed#"$ROOT/"} and maybe more), so it would run old and new code mixed; leaving it, as it may be" \
             "serving a deploy. To serve the new code: kill $pid, then run scripts/agent.sh again"
    elif [[ $command == *"$VENV/bin/"* ]]; then
        echo "agent: already listening on $SOCKET (pid $pid)"
    else
        echo "agent: an agent started elsewhere listens on $SOCKET (${command:-pid unknown}); leaving it." \
             "To serve this checkout's code instead: kill ${pid:-PID}, then run scripts/agent.sh again"
    fi
else
    VTOPO_AGENT_SOCKET=$SOCKET "$VENV/bin/python" -m vtopo agent --daemon
    for _ in $(seq 100); do listening && break; sleep 0.1; done
    echo "agent: started, pid $(cat "$PID_FILE"), listening on $SOCKET (stop it: kill \$(cat $PID_FILE))"
fi
