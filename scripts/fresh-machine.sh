#!/usr/bin/env bash
# The test suite on a brand-new Debian 12 machine, as root on a Debian host: a root filesystem fresh from debootstrap,
# where nothing else was ever installed or run, entered in namespaces of its own (network, mount, PID, UTS, IPC,
# cgroup) with its own /proc, /sys, /dev, /run and /tmp, holding a clone of this checkout's HEAD in /srv/vtopo (mode
# 755). There it runs what a CI runner and then a user would: `CI=true bash .ci/run`, `make run` (no display: it
# installs the rest and leaves the agent running), and `CI=true bash .ci/run` again. Each step's output is in
# ROOT/root/fresh-machine/.
#
# Its network is slirp4netns's user-mode NAT on an eth0 of its own (100.64.250.0/24): no route, address or firewall
# rule on the host. setup reaches Debian's mirror and PyPI through it; a table in the machine's nftables lets out only
# DNS to slirp4netns's resolver and HTTP(S), so what the tests send stays inside. The host's kernel is shared: its
# modules (or their absence) and its devices (/dev is the kernel's devtmpfs) are the machine's. No systemd runs there:
# setup takes its path for a system without it.
#
# Usage: scripts/fresh-machine.sh [run]          a new machine (ROOT removed, copied anew from BASE), then the steps
#        scripts/fresh-machine.sh shell [CMD...] CMD (default: bash) in fresh namespaces on the machine the last run
#                                                left (a new boot of it: its /run and /tmp empty)
# Environment: FRESH_ROOT (default /srv/fresh-root), FRESH_BASE (default /srv/fresh-base: debootstrap's bookworm,
# made once, and again when the arguments it needs change, then copied for each run; remove it for a newer Debian),
# FRESH_SOURCE (the repository whose HEAD is cloned, default this checkout). The host needs debootstrap, slirp4netns,
# git and nft (apt-get install debootstrap slirp4netns). A run takes 30 to 50 minutes on 2 cores. Exit status: 0 when
# all three steps passed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=${FRESH_ROOT:-/srv/fresh-root}
BASE=${FRESH_BASE:-/srv/fresh-base}
SOURCE=${FRESH_SOURCE:-$(cd "$HERE/.." && pwd)}
MIRROR=http://deb.debian.org/debian
DEBOOTSTRAP=(--include=make bookworm)  # Debian 12, with the make a CI runner has for .ci/run's make test
NETWORK=100.64.250  # slirp4netns's: the machine .100, its gateway .2, its resolver .3
CHECKOUT=/srv/vtopo
LOGS=/root/fresh-machine  # inside the machine
PATH_INSIDE=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
STEPS=("ci-run:CI=true bash .ci/run" "make-run:make run" "ci-run-again:CI=true bash .ci/run")

say() { printf 'fresh-machine: %s\n' "$*"; }
die() { printf 'fresh-machine: error: %s\n' "$*" >&2; exit 1; }

# Inside the new namespaces (PID 1 of its PID namespace): the machine's network, mounts and devices, then its root.
boot() {
    local root=$1
    shift
    for _ in $(seq 100); do ip -4 route show default | grep -q eth0 && break; sleep 0.1; done
    ip -4 route show default | grep -q eth0 || die "slirp4netns gave the machine no eth0 with a default route"
    ip link set lo up
    nft -f - <<EOF
table inet fresh_machine {
    chain leaving {
        type filter hook output priority 0; policy accept;
        oifname "eth0" ip daddr $NETWORK.3 meta l4proto { tcp, udp } th dport 53 accept
        oifname "eth0" tcp dport { 80, 443 } accept
        oifname "eth0" drop
    }
    chain passing {
        type filter hook forward priority 0; policy accept;
        oifname "eth0" drop
    }
}
EOF
    hostname fresh-machine
    mount --bind "$root" "$root"  # the machine's / is a mount point, as a real one's
    mount -t proc proc "$root/proc"
    mount -t sysfs sysfs "$root/sys"
    # the kernel's cgroups as the host has them: cgroup v2's unified tree, or (on a host that runs v1's hierarchies,
    # which hold the controllers then) each of those hierarchies, mounted anew in the machine's cgroup namespace so
    # that its root is the machine's own cgroup: what the machine makes, lists or removes there is its own
    if [[ -e /sys/fs/cgroup/cgroup.controllers ]]; then
        mount -t cgroup2 cgroup2 "$root/sys/fs/cgroup"
    else
        mount -t tmpfs -o mode=0755,nosuid,nodev,noexec tmpfs "$root/sys/fs/cgroup"
        local hierarchy
        for hierarchy in $(v1_hierarchies); do
            mkdir "$root/sys/fs/cgroup/${hierarchy#name=}"
            mount -t cgroup -o "$(v1_mount_options "$hierarchy")" cgroup "$root/sys/fs/cgroup/${hierarchy#name=}"
        done
    fi
    # the kernel's devtmpfs, as a real machine's /dev (the kernel adds a macvtap's /dev/tapN there), with a devpts
    # and a /dev/shm of the machine's own
    mount -t devtmpfs devtmpfs "$root/dev"
    mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts "$root/dev/pts"
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
    mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$root/run"
    mkdir -m 1777 "$root/run/lock"
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/tmp"
    cd "$root"
    pivot_root . .  # the host's filesystem goes, out of reach from inside
    umount -l .
    cd /
    exec /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TERM=dumb PATH="$PATH_INSIDE" "$@"
}

# The machine's network: slirp4netns on the namespace of `pid` once it is no longer the host's.
connect() {
    local pid=$1 host_net
    host_net=$(readlink /proc/self/ns/net)
    for _ in $(seq 100); do
        [[ $(readlink "/proc/$pid/ns/net" 2>/dev/null || echo "$host_net") != "$host_net" ]] && break
        sleep 0.05
    done
    [[ $(readlink "/proc/$pid/ns/net" 2>/dev/null || echo "$host_net") != "$host_net" ]] ||
        die "the machine's network namespace did not come up"
    slirp4netns --configure --mtu=65520 --disable-host-loopback --cidr="$NETWORK.0/24" "$pid" eth0 \
        >/dev/null 2>&1 &
    SLIRP=$!
}

# Run "$@" inside the machine; it ends (and every process it left with it) when the command does.
enter() {
    local pid status=0
    (
        into_machines_cgroups
        exec unshare --net --mount --pid --fork --uts --ipc --cgroup --propagation private -- \
            bash "$HERE/fresh-machine.sh" --boot "$ROOT" "$@" 0<&0 9>&-  # its input stays ours (a shell's)
    ) &
    pid=$!
    connect "$pid"
    wait "$pid" || status=$?
    kill "$SLIRP" 2>/dev/null || true
    wait "$SLIRP" 2>/dev/null || true
    remove_machines_cgroups
    return "$status"
}

# The cgroup v1 hierarchies the host runs (none under cgroup v2), each by its mount's name for it: a controller's
# name, several joined by commas, or name=NAME for one with no controller.
v1_hierarchies() {
    [[ -e /sys/fs/cgroup/cgroup.controllers ]] || awk -F: '$2 != "" { print $2 }' /proc/self/cgroup
}

v1_mount_options() {
    [[ $1 == name=* ]] && echo "none,$1" || echo "$1"
}

# The machine's cgroup in a hierarchy: a child of this script's, named for the machine's root.
machines_cgroup() {
    local hierarchy=$1
    echo "/sys/fs/cgroup/${hierarchy#name=}$(awk -F: -v h="$hierarchy" '$2 == h { print $3 }' /proc/self/cgroup \
        | sed 's,/$,,')/fresh-machine-${ROOT##*/}"
}

# This process (and so the machine after it) in the machine's own cgroup in each v1 hierarchy, which its cgroup
# namespace then has for root.
into_machines_cgroups() {
    local hierarchy group
    for hierarchy in $(v1_hierarchies); do
        group=$(machines_cgroup "$hierarchy")
        mkdir -p "$group"
        if [[ -e $group/cpuset.cpus ]]; then  # a new cpuset has no CPU or memory node until it is given its parent's
            cat "$group/../cpuset.cpus" >"$group/cpuset.cpus"
            cat "$group/../cpuset.mems" >"$group/cpuset.mems"
        fi
        echo "$BASHPID" >"$group/cgroup.procs"
    done
}

# The machine's cgroups, deepest first, once every process in them has ended.
remove_machines_cgroups() {
    local hierarchy group
    for hierarchy in $(v1_hierarchies); do
        group=$(machines_cgroup "$hierarchy")
        [[ -d $group ]] && find "$group" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
}

# One machine at a time on ROOT (a run and a shell would share its /etc and /var/lib): held until this script ends.
lock_machine() {
    exec 9>"$ROOT.lock"
    flock -n 9 || die "$ROOT is in use by another run or shell of scripts/fresh-machine.sh: wait for it to end"
}

# The steps, run inside the machine from its checkout: each one's output in LOGS/N-NAME.log, its exit status in
# LOGS/N-NAME.status.
steps_script() {
    local number=0 step
    echo "cd $CHECKOUT && mkdir -p $LOGS"
    for step in "${STEPS[@]}"; do
        number=$((number + 1))
        cat <<EOF
echo "fresh-machine: step $number: ${step#*:}"
( ${step#*:} ) 2>&1 | tee $LOGS/$number-${step%%:*}.log
echo "\${PIPESTATUS[0]}" >$LOGS/$number-${step%%:*}.status
echo "fresh-machine: step $number: ${step#*:}: exit \$(cat $LOGS/$number-${step%%:*}.status)"
EOF
    done
}

# A host that reaches PyPI through a TLS-intercepting proxy names in its /etc/pip.conf the CA bundle that trusts the
# proxy: the machine's pip gets that bundle (public certificates), the one thing of the host's it is given.
trust_hosts_pip_certificates() {
    local bundle
    bundle=$(sed -n 's/^cert *= *//p' /etc/pip.conf 2>/dev/null | tail -n 1)
    [[ -n $bundle && -f $bundle ]] || return 0
    install -m 0644 "$bundle" "$ROOT/etc/host-ca-certificates.crt"
    printf '[global]\ncert = /etc/host-ca-certificates.crt\n' >"$ROOT/etc/pip.conf"
    say "the machine's pip trusts the host's CA bundle $bundle (the host's /etc/pip.conf names it)"
}

run() {
    # BASE is made again when it was made with other arguments (BASE.made says which)
    if [[ ! -d $BASE || $(cat "$BASE.made" 2>/dev/null) != "${DEBOOTSTRAP[*]} $MIRROR" ]]; then
        say "debootstrap ${DEBOOTSTRAP[*]} into $BASE"
        rm -rf --one-file-system "$BASE" "$BASE.partial"
        debootstrap "${DEBOOTSTRAP[@]}" "$BASE.partial" "$MIRROR" >/dev/null
        mv "$BASE.partial" "$BASE"
        echo "${DEBOOTSTRAP[*]} $MIRROR" >"$BASE.made"
    fi
    lock_machine
    rm -rf --one-file-system "$ROOT"
    cp -a "$BASE" "$ROOT"
    echo "nameserver $NETWORK.3" >"$ROOT/etc/resolv.conf"
    trust_hosts_pip_certificates
    git clone --quiet "$SOURCE" "$ROOT$CHECKOUT"
    chmod 0755 "$ROOT$CHECKOUT"
    say "a new machine in $ROOT, with $(git -C "$ROOT$CHECKOUT" log -1 --format='%h (%s)' | cut -c1-100) in $CHECKOUT"
    enter bash -c "$(steps_script)" || true
    local status=0 log
    [[ -n $(compgen -G "$ROOT$LOGS/*.status") ]] || die "the machine ended before its first step ended"
    for log in "$ROOT$LOGS"/*.status; do
        say "$(basename "$log" .status): exit $(cat "$log") (output: ${log%.status}.log)"
        [[ $(cat "$log") == 0 ]] || status=1
    done
    return "$status"
}

[[ $(id -u) -eq 0 ]] || die "run it as root (debootstrap, namespaces, mounts)"
[[ $ROOT == /?*/?* && $BASE == /?*/?* ]] || die "FRESH_ROOT and FRESH_BASE must be directories two levels down or more"
case ${1:-run} in
    --boot) shift; boot "$@" ;;
    run) [[ $# -le 1 ]] || die "usage: $0 [run] | shell [CMD...]"; run ;;
    shell)
        shift
        [[ -d $ROOT ]] || die "no machine in $ROOT: run $0 first"
        [[ $# -gt 0 ]] || set -- bash
        lock_machine
        enter "$@"
        ;;
    *) die "usage: $0 [run] | shell [CMD...]" ;;
esac
