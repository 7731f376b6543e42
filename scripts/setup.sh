#!/usr/bin/env bash
# Install everything vtopo needs on Debian 12, as root: Debian packages, the venv .venv (vtopo and its
# built-in kinds editable, with the extras gui, libvirt (libvirt-python, built against libvirt-dev) and
# test), and the guest image. Idempotent, and quick when nothing
# changed: apt runs only for missing packages, pip only when a setup.cfg or pyproject.toml changed,
# the guest build only when its recipe changed.
#
# Usage: scripts/setup.sh [--no-guest] [--bench] [--no-agent]   (--bench: also what `make bench` compares with;
#        --no-agent: install, but start no agent, as the test suite wants: it runs its own)
# Apt's and pip's output goes to $VTOPO_SETUP_LOG (default /tmp/vtopo-setup.log); its tail is
# shown when a step fails. Open vSwitch and FRR are installed but not started here: vtopo and
# the tests start Open vSwitch when they need it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=$ROOT/.venv
PYTHON=/usr/bin/python3
LOG=${VTOPO_SETUP_LOG:-/tmp/vtopo-setup.log}
POLICY=/usr/sbin/policy-rc.d
POLICY_MARK="written by vtopo's scripts/setup.sh"

APT_PACKAGES=(
    # the data path and the tools vtopo drives
    iproute2 ethtool iperf3 iputils-ping kmod procps openvswitch-switch frr tcpdump nftables
    # sites: ssh reaches another host's agent; a simulated host (scripts/sim-host.sh) runs its own sshd
    openssh-client openssh-server
    # "Open in Wireshark" in the Capture dock; tshark reads back in the tests what Wireshark was piped
    wireshark-qt tshark
    # the terminal dock's tests edit a file in vim, on the terminal's alternate screen
    vim
    # the tests draw a lab exported as a Graphviz graph (vtopo export --to dot) with Graphviz itself
    graphviz
    # virtual machines
    qemu-system-x86 qemu-utils libvirt-daemon-system
    # virt-xml-validate (in libvirt-clients) checks domain XML with xmllint
    libxml2-utils
    # the venv, and building libvirt-python from PyPI
    python3 python3-venv python3-dev libvirt-dev pkg-config gcc libc6-dev make
    # the guest image; busybox's udhcpc is also the DHCP client of a node's interface set to dhcp
    busybox-static gzip
    # a node's DHCP server and relay (dnsmasq-base: the program alone, no service of the host's)
    dnsmasq-base
    # nodes from OCI images: runc runs them, skopeo and umoci keep and unpack images, mmdebstrap builds vtopo's own;
    # cgexec puts what runs inside one (a shell, a measurement) in its cgroup, under the node's limits
    runc skopeo umoci mmdebstrap cgroup-tools
    # PySide6: what its Qt needs offscreen (tests) and on X11 or Xvfb (the designer)
    xvfb xauth fonts-dejavu-core libegl1 libgl1 libglib2.0-0 libdbus-1-3 libfontconfig1
    libfreetype6 libgssapi-krb5-2 libbrotli1 libx11-6 libx11-xcb1 libxcb1 libxcb-cursor0
    libxcb-glx0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render0
    libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1 libxcb-util1 libxcb-xfixes0
    libxcb-xkb1 libxkbcommon0 libxkbcommon-x11-0
)
# Only for `make bench`: Mininet, the peer the deploy benchmark runs beside vtopo (its Linux bridge needs brctl).
BENCH_APT_PACKAGES=(mininet bridge-utils)
# Installed into the venv, editable: vtopo (with its built-in kinds) and all its extras.
PIP_EDITABLE=("${ROOT}[gui,libvirt,test]")
missing_build_packages() {  # the Debian packages that building libvirt-python from PyPI needs and lacks
    command -v gcc >/dev/null || echo gcc
    command -v pkg-config >/dev/null || echo pkg-config
    pkg-config --exists libvirt 2>/dev/null || echo libvirt-dev
    [[ -e $("$PYTHON" -c 'import sysconfig; print(sysconfig.get_path("include"))')/Python.h ]] || echo python3-dev
}

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }
LOG_STARTED=0
logged() {  # run a command with its output in the log; on failure show the log's tail and stop
    if [[ $LOG_STARTED == 0 ]]; then : >"$LOG"; LOG_STARTED=1; fi
    echo "+ $*" >>"$LOG"
    "$@" >>"$LOG" 2>&1 || { tail -n 30 "$LOG" >&2; die "'$*' failed (whole log: $LOG)"; }
}

WITH_GUEST=1
WITH_AGENT=1
for arg in "$@"; do
    case "$arg" in
        --no-guest) WITH_GUEST=0 ;;
        --bench) APT_PACKAGES+=("${BENCH_APT_PACKAGES[@]}") ;;
        --no-agent) WITH_AGENT=0 ;;
        *) die "usage: $0 [--no-guest] [--bench] [--no-agent]" ;;
    esac
done

[[ $(id -u) -eq 0 ]] || die "must run as root: it installs Debian packages, and vtopo needs root for network namespaces, Open vSwitch and QEMU (try: sudo make setup)"
os_field() {  # a field of /etc/os-release, or empty
    # shellcheck disable=SC1091  # the running system's file
    if [[ -r /etc/os-release ]]; then (. /etc/os-release && eval "echo \"\${$1:-}\"") || true; fi
}
OS_ID=$(os_field ID) OS_LIKE=$(os_field ID_LIKE) OS_CODENAME=$(os_field VERSION_CODENAME)
OS_NAME=$(os_field PRETTY_NAME)
OS_NAME=${OS_NAME:-an unknown system}
if [[ $OS_ID != debian && " $OS_LIKE " != *" debian "* ]] || ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
    die "needs Debian 12 (bookworm) or a Debian-like system with apt and dpkg; this is $OS_NAME"
fi
[[ $OS_ID == debian && $OS_CODENAME == bookworm ]] || say "warning: made for Debian 12 (bookworm); this is $OS_NAME, going on"

# 1. Debian packages: only the missing ones, without recommends, with no service started.
declare -A installed=()
while read -r pkg status; do
    [[ $status == ii ]] && installed[$pkg]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${APT_PACKAGES[@]}" 2>/dev/null || true)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    [[ -n ${installed[$pkg]:-} ]] || missing+=("$pkg")
done

policy_cleanup() {
    if [[ -f $POLICY ]] && grep -q "$POLICY_MARK" "$POLICY"; then rm -f "$POLICY"; fi
}
if [[ ${#missing[@]} -eq 0 ]]; then
    say "Debian packages: all ${#APT_PACKAGES[@]} installed"
else
    say "Debian packages: installing ${#missing[@]} (${missing[*]:0:6}${missing[6]:+ ...}); log: $LOG"
    # A package's own policy-rc.d (a container's "exit 101", say) stays in charge; without one,
    # a temporary one keeps apt from starting Open vSwitch and FRR on this host.
    if [[ ! -e $POLICY ]] || grep -q "$POLICY_MARK" "$POLICY"; then
        trap policy_cleanup EXIT
        cat >"$POLICY" <<EOF
#!/bin/sh
# $POLICY_MARK: temporary, removed when it ends.
# Installing Open vSwitch and FRR does not start them: vtopo starts what it needs. Other services
# start as usual under systemd; with no init system, nothing starts (invoke-rc.d's own default).
case "\$1" in
    frr|frr.service|openvswitch-switch|openvswitch-switch.service|ovsdb-server*|ovs-vswitchd*|ovs-*) exit 101 ;;
esac
[ -d /run/systemd/system ] && exit 0
exit 101
EOF
        chmod 755 "$POLICY"
    fi
    export DEBIAN_FRONTEND=noninteractive
    # wireshark-common asks whether non-root users may capture: no (vtopo runs tcpdump itself, as root)
    echo "wireshark-common wireshark-common/install-setuid boolean false" | logged debconf-set-selections
    logged apt-get update -q
    logged apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
    policy_cleanup
    trap - EXIT
    say "Debian packages: installed"
fi

# The unprivileged user vtopo starts QEMU as, handing it the devices it opened.
if ! getent passwd vtopo-qemu >/dev/null; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin vtopo-qemu
    say "system user vtopo-qemu: created (QEMU runs as it)"
fi
# Who root's labs are on the host: root of each lab's user namespace, as a member is of theirs (docs/security.md).
if ! getent passwd vtopo-lab >/dev/null; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin vtopo-lab
    say "system user vtopo-lab: created (root's labs run as it, in user namespaces of their own)"
fi

# libvirtd for the VMs' libvirt backend: systemd keeps it running; without systemd, vtopo starts `libvirtd -d`
# (and virtlogd) when a lab needs it, and stops it with its last lab, as it does Open vSwitch.
if [[ -d /run/systemd/system ]]; then
    logged systemctl enable --now libvirtd.service
    say "libvirtd: enabled and running (systemd)"
fi

# The group whose members may deploy labs through the agent (root always may).
if ! getent group vtopo >/dev/null; then
    groupadd --system vtopo
    say "group vtopo: created (its members deploy labs through the agent: usermod -aG vtopo USER)"
fi

# 2. The venv, from Debian's Python, keyed on what decides its contents.
[[ -x $PYTHON ]] || die "$PYTHON is missing although python3 is installed"
stamp_now() {
    {
        readlink -f "$PYTHON"
        cat "$ROOT/setup.cfg" "$ROOT/setup.py" "$ROOT/pyproject.toml" 2>/dev/null || true
        echo "${PIP_EDITABLE[*]}"
    } | sha256sum | cut -d' ' -f1
}
STAMP_FILE=$VENV/.vtopo-setup-stamp
STAMP=$(stamp_now)
if [[ -x $VENV/bin/python && -f $STAMP_FILE && $(cat "$STAMP_FILE") == "$STAMP" ]]; then
    say "venv: $VENV up to date"
else
    home=$(sed -n 's/^home *= *//p' "$VENV/pyvenv.cfg" 2>/dev/null || true)
    if [[ -x $VENV/bin/python && $home == "$(dirname "$PYTHON")" ]] && "$VENV/bin/python" -c '' 2>/dev/null; then
        say "venv: updating $VENV (pip install); log: $LOG"
    else
        [[ -e $VENV ]] && say "venv: $VENV is broken or not from $PYTHON: making it anew"
        say "venv: creating $VENV from $PYTHON and installing vtopo (a few minutes); log: $LOG"
        rm -rf "$VENV"
        logged "$PYTHON" -m venv "$VENV"
        logged "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
    fi
    missing_build=$(missing_build_packages | xargs)
    [[ -z $missing_build ]] || die "building libvirt-python needs the Debian packages $missing_build: apt-get install $missing_build"
    # The built-in kinds were a distribution of their own before they joined vtopo's: their entry points would
    # stand twice.
    if "$VENV/bin/python" -m pip show -q vtopo-builtin-kinds >/dev/null 2>&1; then
        logged "$VENV/bin/python" -m pip uninstall -y -q vtopo-builtin-kinds
    fi
    editable=()
    for path in "${PIP_EDITABLE[@]}"; do editable+=(-e "$path"); done
    logged "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${editable[@]}"
    # PySide6 finds every library it needs, libvirt-python and the Unicode scripts' data load, and the built-in kinds
    # are registered.
    logged env QT_QPA_PLATFORM=offscreen "$VENV/bin/python" -c '
from PySide6.QtWidgets import QApplication
from PySide6 import QtCharts
import libvirt, vtopo, confusable_homoglyphs
from vtopo.kinds.registry import load_registry
assert len(load_registry().kinds) == 8, "the built-in kinds are not all registered"
QApplication([])'
    echo "$STAMP" >"$STAMP_FILE"
    say "venv: ready"
fi
# setuptools makes the editable install of packages from two folders (app/vtopo, plugins/vtopo_kinds) an import hook,
# which every start of the venv's Python loads, with pathlib and importlib.util: 9 ms before any program runs, `python
# -c pass` included. A plain .pth naming the two folders finds the same packages (nothing else in them imports).
for pth in "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"/__editable__.vtopo-*.pth; do
    printf '%s\n' "$ROOT/app" "$ROOT/plugins" >"$pth"
done
# The checkout's bytecode, which an editable install leaves to the first run: with PYTHONDONTWRITEBYTECODE set, every
# run would compile vtopo's modules again (~50 ms of `vtopo kinds`). Python reads it all the same, and passes over a
# file edited since; a file that does not compile is for the run that imports it to report.
"$VENV/bin/python" -m compileall -q "$ROOT/app" "$ROOT/plugins" >/dev/null || true

# 3. The guest image for VM labs.
if [[ $WITH_GUEST == 1 ]]; then
    bash "$ROOT/resources/guest/build.sh"
fi
# vtopo's own OCI images (toolbox, frr), from Debian's packages: built once, kept in /var/lib/vtopo/oci.
logged "$VENV/bin/vtopo" image build

# 4. The agent: under systemd its socket and service units (systemd starts it on the first connection); without
# systemd, `vtopo agent --daemon` with a pid file. scripts/agent.sh leaves an agent that already listens alone.
# The test suite neither starts nor uses it (scripts/test.sh passes --no-agent, and tests/conftest.py points vtopo at
# a socket of the test session), so a throwaway clone leaves no agent running its code behind.
if [[ $WITH_AGENT == 0 ]]; then
    exit 0
fi
if [[ -d /run/systemd/system ]]; then
    install -m 0644 "$ROOT/resources/systemd/vtopo-agent.socket" /etc/systemd/system/vtopo-agent.socket
    sed "s|@VTOPO@|$VENV/bin/vtopo|" "$ROOT/resources/systemd/vtopo-agent.service" >/etc/systemd/system/vtopo-agent.service
    chmod 0644 /etc/systemd/system/vtopo-agent.service
    systemctl daemon-reload
    systemctl enable vtopo-agent.socket >/dev/null 2>&1
fi
bash "$ROOT/scripts/agent.sh" | sed 's/^/setup: /'
