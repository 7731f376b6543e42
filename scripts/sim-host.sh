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
#   - its own vtopo agent, with the configuration in its directory (agent.toml);
#   - its own image stores (VTOPO_OCI_DIR and VTOPO_OCI_MEMBERS_DIR in its directory, empty at first), so that a lab's
#     node there runs only what was loaded there, and its image nodes' cgroups under a parent of its own
#     (VTOPO_CGROUP_PARENT, vtopo-sim-NAME, in the real host's hierarchies, mounted again inside: `ip netns exec`
#     hides them under a sysfs of the namespace's own), which the real host's `vtopo cleanup` never sees as its own,
#     nor its cleanup the real host's;
#   - its own libvirtd and virtlogd when libvirt is installed, with their own /run/libvirt, /var/lib/libvirt,
#     /var/cache/libvirt and /var/log/libvirt (bind mounts seen only inside it), so that the agent there starts its
#     VMs as domains of that libvirtd, on taps in its network namespace, which the real host's libvirtd never sees.
#     VTOPO_SIM_LIBVIRTD=0 makes a host without libvirtd (an empty /run/libvirt): its agent runs VMs as QEMU processes.
#   - its own Open vSwitch directories (/run/openvswitch, /etc/openvswitch, /var/log/openvswitch and
#     /var/lib/openvswitch, bind mounts seen only inside it, empty at first): its agent starts an OVS of its own when
#     a lab puts a switch there, in its network namespace, and down stops it. The real host's OVS is never reached
#     from it.
# Its state lives in /run/vtopo-sim/NAME. VTOPO_PYTHON and PYTHONPATH say which vtopo the host runs (default: python3
# and the PYTHONPATH of the caller).
set -euo pipefail

ROOT=/run/vtopo-sim
KEEP=/run/vtopo/.simulated-hosts  # in the real host's /run/vtopo while a simulated host is up (see up)
BRIDGE=vtsim0
UNDERLAY=198.18.0
PYTHON=${VTOPO_PYTHON:-$(command -v python3)}
LIBVIRT_DIRS=(run:/run/libvirt lib:/var/lib/libvirt cache:/var/cache/libvirt log:/var/log/libvirt)
[[ -L /var/run ]] || LIBVIRT_DIRS+=(run:/var/run/libvirt)
LIBVIRT_ANSWER_SECONDS=60
OVS_DIRS=(run:/run/openvswitch etc:/etc/openvswitch log:/var/log/openvswitch lib:/var/lib/openvswitch)

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
    mkdir -m 0755 "$state"
    trap 'undo_up' EXIT  # a failed up removes what it made
    mkdir -m 0755 "$state/run" "$state/lib" "$state/netns" "$state/bin" "$state/ssh"
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

    # the mount namespace: held by a sleeping process, entered by sshd, the agent and libvirt's daemons. On a host
    # where no agent ever ran, its mount point /run/vtopo is made as the agent makes it (root's; others pass through);
    # ip netns add made /run/netns. The file KEEP keeps the real host's /run/vtopo from being empty (as an agent's
    # socket would): vtopo removes an empty /run/vtopo after its last lab, and removing a directory unmounts what other
    # mount namespaces mounted on it, which would leave the simulated host with the real host's /run/vtopo.
    [[ -d /run/vtopo ]] || mkdir -m 0711 /run/vtopo
    install -m 0600 /dev/null "$KEEP"
    local mounts=("$state/run:/run/vtopo" "$state/netns:/run/netns")
    if has_libvirt; then
        mounts+=($(libvirt_directories))
    else
        mounts+=($(no_libvirt_directories))
    fi
    mounts+=($(private_directories ovs "${OVS_DIRS[@]}"))  # the host's own Open vSwitch directories, empty
    CGROUPS=$(cgroup_mounts) ip netns exec "$netns" unshare --mount --propagation private sh -c '
        for mount in "$@"; do mount --bind "${mount%%:*}" "${mount#*:}" || exit 1; done
        for cgroup in $CGROUPS; do
            type=${cgroup%%:*} rest=${cgroup#*:}
            mkdir -p "${rest#*:}" && mount -t "$type" -o "${rest%%:*}" "$type" "${rest#*:}" || exit 1
        done
        exec sleep infinity' sh "${mounts[@]}" >/dev/null 2>&1 &
    echo $! >"$state/holder.pid"
    for _ in $(seq 50); do inside mountpoint -q /run/vtopo 2>/dev/null && break; sleep 0.1; done
    inside mountpoint -q /run/vtopo || { echo "$0: the mount namespace of $name did not come up" >&2; exit 1; }
    chgrp vtopo "$state/lib" && chmod 0750 "$state/lib"

    cat >"$state/bin/vtopo" <<EOF
#!/bin/sh
export PYTHONPATH='${PYTHONPATH:-}' VTOPO_STATE_DIR='$state/lib' VTOPO_AGENT_SOCKET=/run/vtopo/agent.sock
export VTOPO_OCI_DIR='$state/oci' VTOPO_OCI_MEMBERS_DIR='$state/member-images' VTOPO_CGROUP_PARENT='vtopo-sim-$name'
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
    has_libvirt && start_libvirt
    inside "$state/bin/vtopo" agent --daemon --pid-file /run/vtopo/agent.pid --config "$state/agent.toml" \
        >/dev/null
    for _ in $(seq 100); do [[ -S $state/run/agent.sock ]] && break; sleep 0.1; done
    [[ -S $state/run/agent.sock ]] || { echo "$0: the agent of $name did not start" >&2; exit 1; }
    trap - EXIT
    echo "site $name: destination root@$address, port 22, identity $state/ssh/id_ed25519," \
         "known_hosts $state/ssh/known_hosts, address $address"
}

# After a failed up: what it made goes as at down (its namespace, daemons, bridge and state directory).
undo_up() {
    local status=$?
    trap - EXIT
    down >/dev/null 2>&1 || true
    exit "$status"
}

# The real host's cgroup file systems, "TYPE:OPTIONS:MOUNT POINT" each, in the order they were mounted (a v1 host's
# tmpfs at /sys/fs/cgroup first, then a hierarchy in each directory of it; a v2 host's one cgroup2).
cgroup_mounts() {
    awk '$5 ~ "^/sys/fs/cgroup(/|$)" { split($0, after, " - "); split(after[2], f, " "); print f[1] ":" f[3] ":" $5 }' \
        /proc/self/mountinfo
}

has_libvirt() {
    [[ ${VTOPO_SIM_LIBVIRTD:-1} != 0 ]] && command -v libvirtd >/dev/null && command -v virtlogd >/dev/null
}

# The host's own libvirt directories: "SOURCE:TARGET" for each bind mount (a mount point the real host lacks, such as
# /run/libvirt before its libvirtd first ran, is made there, empty, as that libvirtd would make it). Its capabilities
# cache starts as a copy of the real host's, as valid here as there (same QEMU, same libvirtd, same kernel): without
# one, libvirtd probes each QEMU binary before its first domain starts (7.8 s on the test machine). Its /dev/kvm is a
# node of its own with the group and mode udev gives it on a Debian host (group kvm, read-write): libvirt finds the
# cache stale while its QEMU user cannot open /dev/kvm, and probes again at every domain start (36 s a start instead
# of 0.3 s on the test machine). The real host's /dev/kvm stays as it is.
libvirt_directories() {
    private_directories libvirt "${LIBVIRT_DIRS[@]}"
    if [[ -d /var/cache/libvirt/qemu/capabilities ]]; then
        mkdir -p -m 0711 "$state/libvirt/cache/qemu"
        cp -a /var/cache/libvirt/qemu/capabilities "$state/libvirt/cache/qemu/"
    fi
    if [[ -c /dev/kvm ]]; then
        mknod -m 0660 "$state/libvirt/kvm" c "$(stat -c '%Hr' /dev/kvm)" "$(stat -c '%Lr' /dev/kvm)"
        chgrp kvm "$state/libvirt/kvm" 2>/dev/null || true
        echo "$state/libvirt/kvm:/dev/kvm"
    fi
}

# For a host without libvirtd: an empty /run/libvirt, so that no libvirtd answers there (not the real host's).
no_libvirt_directories() {
    local directory
    for directory in "${LIBVIRT_DIRS[@]}"; do
        [[ ${directory%%:*} == run && -d ${directory#*:} ]] || continue
        mkdir -p -m 0755 "$state/libvirt/run"
        echo "$state/libvirt/run:${directory#*:}"
    done
}

# private_directories SUBDIRECTORY NAME:TARGET...: "SOURCE:TARGET" for each bind mount of a directory of the host's
# own, SOURCE being $state/SUBDIRECTORY/NAME (both made when missing).
private_directories() {
    local subdirectory=$1 directory source target
    shift
    for directory in "$@"; do
        source=$state/$subdirectory/${directory%%:*} target=${directory#*:}
        mkdir -p -m 0755 "$source" "$target"
        echo "$source:$target"
    done
}

# The OVS daemons the host's agent started for its labs, if any (their pid files are in its own /run/openvswitch).
stop_ovs() {
    stop_pid_file "$state/ovs/run/ovs-vswitchd.pid"
    stop_pid_file "$state/ovs/run/ovsdb-server.pid"
}

start_libvirt() {
    local started=$EPOCHREALTIME
    inside virtlogd -d -p "$state/libvirt/virtlogd.pid"
    inside libvirtd -d -p "$state/libvirt/libvirtd.pid"
    until inside virsh -q -c qemu:///system list >/dev/null 2>&1; do
        (( ${EPOCHREALTIME%.*} - ${started%.*} < LIBVIRT_ANSWER_SECONDS )) || {
            echo "$0: the libvirtd of $name did not answer within $LIBVIRT_ANSWER_SECONDS s" >&2; exit 1; }
        sleep 0.1
    done
    awk -v name="$name" -v seconds="$(( ${EPOCHREALTIME/./} - ${started/./} ))" \
        'BEGIN { printf "site %s: its libvirtd answers at qemu:///system after %.2f s\n", name, seconds / 1e6 }'
}

# Every domain of the host's libvirtd is the host's own: the ones its labs left are destroyed before it stops.
stop_libvirt() {
    local domain
    if [[ -f $state/libvirt/libvirtd.pid ]]; then
        for domain in $(inside virsh -q -c qemu:///system list --name 2>/dev/null); do
            inside virsh -q -c qemu:///system destroy "$domain" >/dev/null || true
        done
    fi
    stop_pid_file "$state/libvirt/libvirtd.pid"
    stop_pid_file "$state/libvirt/virtlogd.pid"
}

# Whether a process runs: an ended daemon stays a zombie until init reaps it, which can take seconds.
running() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat%% *} != Z ]]
}

stop_pid_file() {
    local pid
    pid=$(cat "$1" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do running "$pid" || return 0; sleep 0.1; done
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
        stop_libvirt
        stop_ovs
        stop_pid_file "$state/sshd.pid"
        stop_pid_file "$state/holder.pid"
    fi
    ip netns del "$netns" 2>/dev/null || true
    if ip link show "$BRIDGE" >/dev/null 2>&1 && [[ -z $(ls "$ROOT" | grep -vx "$name") ]]; then
        ip link del "$BRIDGE"
    fi
    rm -rf "$state"
    if rmdir "$ROOT" 2>/dev/null; then  # the last simulated host: the real host's /run/vtopo as vtopo leaves it
        rm -f "$KEEP"
        rmdir /run/vtopo 2>/dev/null || true
    fi
    echo "site $name: down"
}

case $action in
    up) up ;;
    down) down ;;
    *) usage ;;
esac
