#!/usr/bin/env bash
# A simulated second host on this machine, for multi-site labs in tests and demos (docs/sites.md).
#
# Usage (as root):  scripts/sim-host.sh up NAME     start it; prints the site to put in a lab
#                   scripts/sim-host.sh down NAME   clean up its labs, stop it and remove all it made
#
# A simulated host is a network namespace (vtsim-NAME) and a mount namespace. It has:
#   - an underlay veth to the real host: all simulated hosts and the real host (198.18.0.1) share the bridge vtsim0
#     and the network 198.18.0.0/24, so that any two of them can tunnel to each other;
#   - its own /run/vtopo and /run/netns (bind mounts seen only inside it) and its own state directory instead of
#     /var/lib/vtopo (VTOPO_STATE_DIR, which /var/lib/vtopo coming and going on the real host cannot disturb);
#   - its own sshd on port 22 of its underlay address, for keys only: a key pair made for it, and each user's
#     ~/.ssh/authorized_keys (users and /home are the real host's);
#   - its own vtopo agent, with the configuration in its directory (agent.toml).
# Its state lives in /run/vtopo-sim/NAME. VTOPO_PYTHON and PYTHONPATH say which vtopo the host runs (default: python3
# and the PYTHONPATH of the caller).
set -euo pipefail

ROOT=/run/vtopo-sim
BRIDGE=vtsim0
UNDERLAY=198.18.0
PYTHON=${VTOPO_PYTHON:-$(command -v python3)}

usage() { echo "usage: $0 up|down NAME (NAME: 1 to 9 lowercase letters or digits)" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1 name=$2
[[ $name =~ ^[a-z0-9]{1,9}$ ]] || usage
[[ $(id -u) -eq 0 ]] || { echo "$0: run it as root" >&2; exit 1; }
state=$ROOT/$name netns=vtsim-$name

inside() { nsenter --target "$(cat "$state/holder.pid")" --net --mount -- "$@"; }

free_address() {
    local n used
    used=$(cat "$ROOT"/*/address 2>/dev/null || true)
    for n in $(seq 2 254); do
        grep -qx "$UNDERLAY.$n" <<<"$used" || { echo "$UNDERLAY.$n"; return; }
    done
    echo "$0: no free underlay address left in $UNDERLAY.0/24" >&2; exit 1
}

up() {
    [[ ! -e $state ]] || { echo "$0: $name is up already (scripts/sim-host.sh down $name first)" >&2; exit 1; }
    mkdir -p "$ROOT" && chmod 0755 "$ROOT"
    mkdir -m 0755 "$state" "$state/run" "$state/lib" "$state/netns" "$state/bin" "$state/ssh"
    address=$(free_address)
    echo "$address" >"$state/address"
    if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
        ip link add "$BRIDGE" type bridge
        ip addr add "$UNDERLAY.1/24" dev "$BRIDGE"
        ip link set "$BRIDGE" up
    fi
    ip netns add "$netns"
    ip link add "$netns" type veth peer name uplink netns "$netns"
    ip link set "$netns" master "$BRIDGE" up
    ip -n "$netns" addr add "$address/24" dev uplink
    ip -n "$netns" link set uplink up
    ip -n "$netns" link set lo up

    # the mount namespace: held by a sleeping process, entered by sshd and the agent
    ip netns exec "$netns" unshare --mount --propagation private sh -c '
        mount --bind "$1/run" /run/vtopo && mount --bind "$1/netns" /run/netns
        exec sleep infinity' sh "$state" >/dev/null 2>&1 &
    echo $! >"$state/holder.pid"
    for _ in $(seq 50); do inside mountpoint -q /run/vtopo 2>/dev/null && break; sleep 0.1; done
    chgrp vtopo "$state/lib" && chmod 0750 "$state/lib"

    cat >"$state/bin/vtopo" <<EOF
#!/bin/sh
export PYTHONPATH='${PYTHONPATH:-}' VTOPO_STATE_DIR='$state/lib' VTOPO_AGENT_SOCKET=/run/vtopo/agent.sock
exec '$PYTHON' -m vtopo "\$@"
EOF
    chmod 0755 "$state/bin/vtopo"
    ssh-keygen -q -t ed25519 -N '' -C "vtopo-sim-$name host" -f "$state/ssh/host_key"
    ssh-keygen -q -t ed25519 -N '' -C "vtopo-sim-$name client" -f "$state/ssh/id_ed25519"
    cp "$state/ssh/id_ed25519.pub" "$state/ssh/authorized_keys"
    echo "$address $(cut -d' ' -f1-2 "$state/ssh/host_key.pub")" >"$state/ssh/known_hosts"
    cat >"$state/ssh/sshd_config" <<EOF
ListenAddress $address
HostKey $state/ssh/host_key
AuthorizedKeysFile $state/ssh/authorized_keys .ssh/authorized_keys
PidFile $state/sshd.pid
AuthenticationMethods publickey
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
SetEnv PATH=$state/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EOF
    mkdir -p /run/sshd  # sshd's privilege separation directory, as the openssh-server package has it
    inside /usr/sbin/sshd -f "$state/ssh/sshd_config"
    inside "$state/bin/vtopo" agent --daemon --pid-file /run/vtopo/agent.pid --config "$state/agent.toml" \
        >/dev/null
    for _ in $(seq 100); do [[ -S $state/run/agent.sock ]] && break; sleep 0.1; done
    [[ -S $state/run/agent.sock ]] || { echo "$0: the agent of $name did not start" >&2; exit 1; }
    echo "site $name: destination root@$address, port 22, identity $state/ssh/id_ed25519," \
         "known_hosts $state/ssh/known_hosts, address $address"
}

stop_pid_file() {
    local pid
    pid=$(cat "$1" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
}

down() {
    [[ -d $state ]] || { echo "$0: $name is not up" >&2; exit 1; }
    if [[ -f $state/holder.pid ]] && kill -0 "$(cat "$state/holder.pid")" 2>/dev/null; then
        [[ -S $state/run/agent.sock ]] || inside "$state/bin/vtopo" agent --daemon --pid-file /run/vtopo/agent.pid \
            --config "$state/agent.toml" >/dev/null || true
        for _ in $(seq 50); do [[ -S $state/run/agent.sock ]] && break; sleep 0.1; done
        inside "$state/bin/vtopo" cleanup >/dev/null || true
        stop_pid_file "$state/run/agent.pid"
        stop_pid_file "$state/sshd.pid"
        stop_pid_file "$state/holder.pid"
    fi
    ip netns del "$netns" 2>/dev/null || true
    if ip link show "$BRIDGE" >/dev/null 2>&1 && [[ -z $(ls "$ROOT" | grep -vx "$name") ]]; then
        ip link del "$BRIDGE"
    fi
    rm -rf "$state"
    rmdir "$ROOT" 2>/dev/null || true
    echo "site $name: down"
}

case $action in
    up) up ;;
    down) down ;;
    *) usage ;;
esac
