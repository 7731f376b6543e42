#!/usr/bin/env bash
# Build the vtopo guest: Debian's kernels + one busybox initramfs with iperf3 and ping. See README.md here.
#
# Usage: build.sh [--force]   rebuild even if the stamp says the image is up to date
#        build.sh --check [KERNEL [NIC]]
#            boot the guest under TCG (KERNEL: vmlinuz or vmlinuz-generic; NIC: a QEMU NIC model,
#            virtio-net-pci by default) on a tap in a private network namespace, ping it,
#            run iperf3 both ways, and clean up
# Output: $VTOPO_GUEST_DIR (default /var/cache/vtopo/guest): vmlinuz (Debian's cloud kernel: small,
# boots fast, virtio only), vmlinuz-generic (Debian's generic kernel: slower to boot, also e1000 and
# e1000e), initrd.img (for either), guest.env (those paths and versions), stamp.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${VTOPO_GUEST_DIR:-/var/cache/vtopo/guest}
# Kernel modules the guest loads at boot, when its kernel has them as modules (with their
# dependencies, found by modinfo).
MODULES=(virtio_pci virtio_net virtio_blk virtio_console virtio-rng 8021q e1000 e1000e)
# output file: the Debian metapackage whose kernel it is
declare -A KERNELS=([vmlinuz]=linux-image-cloud-amd64 [vmlinuz-generic]=linux-image-amd64)

say() { printf 'guest: %s\n' "$*"; }
die() { printf 'guest: error: %s\n' "$*" >&2; exit 1; }

case "${1:-}" in
    "" | --force) [[ $# -le 1 ]] || die "usage: $0 [--force | --check [KERNEL [NIC]]]" ;;
    --check) [[ $# -le 3 ]] || die "usage: $0 --check [KERNEL [NIC]]" ;;
    *) die "usage: $0 [--force | --check [KERNEL [NIC]]]" ;;
esac

[[ $(id -u) -eq 0 ]] || die "must run as root (it makes device nodes and, for --check, a tap device)"
for tool in apt-get apt-cache dpkg-deb dpkg-query modinfo gzip; do
    command -v "$tool" >/dev/null || die "$tool is missing: run 'make setup' first"
done
if [[ ! -x /bin/busybox ]] || ldd /bin/busybox >/dev/null 2>&1; then
    die "a static /bin/busybox is needed (Debian package busybox-static): run 'make setup' first"
fi
command -v iperf3 >/dev/null || die "iperf3 is missing: run 'make setup' first"

check() {
    # Boot the guest on a tap in a private namespace, ping it and measure TCP with iperf3.
    local kernel=${1:-vmlinuz} nic=${2:-virtio-net-pci}
    local tool
    for tool in qemu-system-x86_64 ping ip; do
        command -v "$tool" >/dev/null || die "$tool is missing: run 'make setup' first"
    done
    [[ -f $OUT/stamp && -f $OUT/$kernel ]] || die "no guest $kernel in $OUT: run $0 first"
    local start ready_at
    ns=vtopo-guest-check-$$ tap=vtgchk0 qpid="" dir=$(mktemp -d)
    console=$dir/console.log
    cleanup_check() {
        if [[ -n $qpid ]]; then kill "$qpid" 2>/dev/null || true; wait "$qpid" 2>/dev/null || true; fi
        ip netns del "$ns" 2>/dev/null || true
        rm -rf "$dir"
    }
    trap cleanup_check EXIT
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip netns exec "$ns" ip tuntap add dev "$tap" mode tap
    ip -n "$ns" addr add 192.0.2.1/24 dev "$tap"
    ip -n "$ns" link set "$tap" up
    start=$(date +%s.%N)
    ip netns exec "$ns" qemu-system-x86_64 -M q35 -accel tcg -m 256 -nographic -no-reboot \
        -kernel "$OUT/$kernel" -initrd "$OUT/initrd.img" \
        -append "console=ttyS0 quiet panic=-1 vtopo.ip=eth0:192.0.2.2/24 vtopo.gw=192.0.2.1 vtopo.hostname=check" \
        -netdev tap,id=n0,ifname="$tap",script=no,downscript=no \
        -device "$nic",netdev=n0,mac=52:54:00:12:34:56 \
        </dev/null >"$console" 2>&1 &
    qpid=$!
    for _ in $(seq 600); do
        grep -q 'vtopo-guest ready' "$console" && break
        kill -0 "$qpid" 2>/dev/null || { cat "$console" >&2; die "qemu exited before the guest was ready"; }
        sleep 0.1
    done
    grep -q 'vtopo-guest ready' "$console" || { tail -n 20 "$console" >&2; die "no 'vtopo-guest ready' in 60 s"; }
    ready_at=$(date +%s.%N)
    say "booted in $(awk -v a="$start" -v b="$ready_at" 'BEGIN { printf "%.1f", b - a }') s (TCG, $kernel, $nic): $(grep -ao 'vtopo-guest ready.*' "$console" | tr -d '\r')"
    # the first packets wait for the guest's link (e1000 negotiates one)
    ip netns exec "$ns" ping -c 1 -w 10 192.0.2.2 >/dev/null || die "the guest does not answer ping"
    ip netns exec "$ns" ping -c 3 -i 0.2 -W 2 192.0.2.2 | tail -n 2 | sed 's/^/guest: ping: /'
    ip netns exec "$ns" iperf3 -c 192.0.2.2 -t 3 -f g | awk '/receiver/ { print "guest: iperf3 host->guest:", $7, $8 }'
    sleep 1   # the guest's iperf3 server takes a moment to be ready for the next test
    ip netns exec "$ns" iperf3 -c 192.0.2.2 -t 3 -f g -R | awk '/receiver/ { print "guest: iperf3 guest->host:", $7, $8 }'
    cleanup_check
    trap - EXIT
    say "check passed"
}

if [[ ${1:-} == --check ]]; then
    check "${@:2}"
    exit 0
fi

# The recipe's identity: this script, the init, and the host packages copied into the image.
recipe_hash() {
    {
        cat "$HERE/build.sh" "$HERE/init"
        dpkg-query -W -f='${Package} ${Version}\n' busybox-static iperf3 libiperf0 libc6 libssl3 libsctp1 \
            iputils-ping libcap2 libidn2-0 libunistring2 2>/dev/null
    } | sha256sum | cut -d' ' -f1
}
HASH=$(recipe_hash)
if [[ ${1:-} != --force && -f $OUT/stamp && $(cat "$OUT/stamp") == "$HASH" && -f $OUT/vmlinuz
      && -f $OUT/vmlinuz-generic && -f $OUT/initrd.img ]]; then
    say "image up to date in $OUT"
    exit 0
fi

mkdir -p "$OUT"
WORK=$(mktemp -d "$OUT/.build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
LOG=$WORK/log

# 1. The root file system: busybox, iperf3 and ping with their libraries, /init.
R=$WORK/root
mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,etc/vtopo,proc,sys,dev,tmp,run,root,lib/modules}
cp /bin/busybox "$R/bin/busybox"
for applet in $(/bin/busybox --list-full); do
    [[ -e $R/$applet ]] || ln -s /bin/busybox "$R/$applet"
done
# iperf3, and iputils' ping in place of busybox's (vtopo's ping runner reads its -O output and options)
rm -f "$R/bin/ping"
for binary in /usr/bin/iperf3:/usr/bin/iperf3 /usr/bin/ping:/bin/ping; do
    cp "${binary%%:*}" "$R${binary#*:}"
    for lib in $(ldd "${binary%%:*}" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
        mkdir -p "$R$(dirname "$lib")"
        cp -L "$lib" "$R$lib"
    done
done
mknod -m 600 "$R/dev/console" c 5 1
mknod -m 666 "$R/dev/null" c 1 3
install -m 755 "$HERE/init" "$R/init"
echo 'root:x:0:0:root:/root:/bin/sh' > "$R/etc/passwd"
echo 'root:x:0:' > "$R/etc/group"
# shellcheck disable=SC2016  # expanded by the guest's shell
echo 'PS1="$(hostname):\w# "' > "$R/etc/profile"
echo "recipe=$HASH" > "$R/etc/vtopo/release"

# 2. The kernels: the package each metapackage depends on, downloaded (not installed) and unpacked.
#    Their modules go to /lib/modules/VERSION/, listed dependencies first in .../load for /init.
kernel_package() {
    { apt-cache depends "$1" 2>/dev/null || true; } \
        | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}
if [[ -z $(kernel_package linux-image-cloud-amd64) ]]; then
    say "apt-get update (no package lists)"
    apt-get update -qq >"$LOG" 2>&1 || { cat "$LOG" >&2; die "apt-get update failed"; }
fi
add_module() {  # name: copy it and, before it, what it depends on
    local name=${1//-/_} dep
    [[ -n ${loaded[$name]:-} ]] && return 0
    loaded[$name]=1
    for dep in $(modinfo -F depends "${module_file[$name]}" | tr , ' '); do
        add_module "$dep"
    done
    cp "${module_file[$name]}" "$MODDIR/"
    basename "${module_file[$name]}" >> "$MODDIR/load"
}
ENV_LINES=()
for out in vmlinuz vmlinuz-generic; do
    meta=${KERNELS[$out]}
    pkg=$(kernel_package "$meta")
    [[ -n $pkg ]] || die "cannot find the kernel package behind $meta"
    say "downloading $pkg"
    (cd "$WORK" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >"$LOG" 2>&1) \
        || { cat "$LOG" >&2; die "apt-get download $pkg failed"; }
    rm -rf "$WORK/kernel"
    dpkg-deb -x "$WORK/$pkg"_*.deb "$WORK/kernel"
    rm -f "$WORK/$pkg"_*.deb
    kver=$(basename "$(ls -d "$WORK"/kernel/lib/modules/*)")
    [[ -f $WORK/kernel/boot/vmlinuz-$kver ]] || die "no vmlinuz in $pkg"
    kmods=$WORK/kernel/lib/modules/$kver
    MODDIR=$R/lib/modules/$kver
    mkdir -p "$MODDIR"
    : > "$MODDIR/load"
    declare -A module_file=() loaded=()
    while IFS= read -r path; do
        name=$(basename "$path" .ko)
        module_file[${name//-/_}]=$path
    done < <(find "$kmods" -name '*.ko')
    missing=()
    for m in "${MODULES[@]}"; do
        if [[ -n ${module_file[${m//-/_}]:-} ]]; then
            add_module "$m"
        elif ! grep -q "/${m//_/[-_]}.ko\$" "$kmods/modules.builtin" 2>/dev/null; then
            missing+=("$m")
        fi
    done
    unset module_file loaded
    mv "$WORK/kernel/boot/vmlinuz-$kver" "$WORK/$out"
    say "$out: $kver${missing[0]:+, without ${missing[*]}}"
    var=VTOPO_GUEST_KERNEL${out#vmlinuz}
    var=${var//-/_}
    var=${var^^}
    ENV_LINES+=("$var=$OUT/$out" "${var}_VERSION=$kver" "${var}_PACKAGE=$pkg"
                "${var}_NO_MODULES=\"${missing[*]}\"")
    echo "$out=$kver $pkg" >> "$R/etc/vtopo/release"
done

# 3. The initramfs, and the outputs moved into place.
(cd "$R" && find . | LC_ALL=C sort | /bin/busybox cpio -o -H newc 2>/dev/null) | gzip -9 -n > "$WORK/initrd.img"
rm -f "$OUT/stamp"
mv "$WORK/vmlinuz" "$WORK/vmlinuz-generic" "$WORK/initrd.img" "$OUT/"
{
    echo "# Written by resources/guest/build.sh; boot with: -kernel KERNEL -initrd INITRD -append APPEND"
    printf '%s\n' "${ENV_LINES[@]}"
    echo "VTOPO_GUEST_INITRD=$OUT/initrd.img"
    echo "VTOPO_GUEST_APPEND=\"console=ttyS0 quiet panic=-1\""
} > "$OUT/guest.env"
echo "$HASH" > "$OUT/stamp"
say "built in $OUT: vmlinuz ($(du -h "$OUT/vmlinuz" | cut -f1)), vmlinuz-generic ($(du -h "$OUT/vmlinuz-generic" | cut -f1)), initrd.img ($(du -h "$OUT/initrd.img" | cut -f1))"
