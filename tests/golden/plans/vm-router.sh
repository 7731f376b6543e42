#!/bin/sh
# vtopo plan for lab 'vm-router': every object below is named v36gk-*
set -e
LAB_TAG=vtopo:v36gk  # the tag on every object the lab makes
#
# A VM as the Linux router gateway between two segments, as in the host-networking experiment (docs/reference-experiments.md). vmr has a NIC on each bridge and IP
# forwarding on in its guest; c1 and c2 use it as their default gateway. Neither bridge gives the host an
# address, so the host takes no part: every routed packet crosses the VM's two taps, and QEMU copies it twice.
# Measure c1 -> c2 (routed through the VM) against c1 -> vmr (one hop) to see what the router VM costs.
# warning: node vmr: vhost-net is requested but this host's kernel has no vhost-net; the VM runs with vhost=off
# warning: node vmr: KVM is not usable here, so this VM runs under TCG emulation (slower)

# ---- lab
# [1] create directory /run/vtopo/v36gk
mkdir -p /run/vtopo/v36gk

# ---- node br1
# [2] create Linux bridge v36gk-br1
ip link add v36gk-br1 type bridge stp_state 0 forward_delay 0 ageing_time 30000
# [3] configure and bring up v36gk-br1 (after 2)
ip link set dev v36gk-br1 alias vtopo:v36gk up

# ---- node br2
# [4] create Linux bridge v36gk-br2
ip link add v36gk-br2 type bridge stp_state 0 forward_delay 0 ageing_time 30000
# [5] configure and bring up v36gk-br2 (after 4)
ip link set dev v36gk-br2 alias vtopo:v36gk up

# ---- node vmr
# [6] create directory /run/vtopo/v36gk/vmr (after 1)
mkdir -p /run/vtopo/v36gk/vmr
chmod 700 /run/vtopo/v36gk/vmr
chown vtopo-qemu: /run/vtopo/v36gk/vmr

# ---- node c1
# [7] create network namespace v36gk-c1
ip netns add v36gk-c1
ip -n v36gk-c1 link set lo up alias "$LAB_TAG"

# ---- node c2
# [8] create network namespace v36gk-c2
ip netns add v36gk-c2
ip -n v36gk-c2 link set lo up alias "$LAB_TAG"

# ---- link c1:eth0-br1:p1
# [9] create veth pair v36gk-br1-p1 <-> eth0 (after 7)
ip link add v36gk-br1-p1 type veth peer name eth0 netns v36gk-c1
# [10] configure and bring up eth0 (after 9)
ip -n v36gk-c1 link set dev eth0 up
# [11] address 10.1.1.10/24 on eth0 (after 9)
ip -n v36gk-c1 addr add 10.1.1.10/24 dev eth0

# ---- node c1
# [12] route default via 10.1.1.1 (after 11)
ip -n v36gk-c1 route add default via 10.1.1.1

# ---- link c1:eth0-br1:p1
# [13] configure and bring up v36gk-br1-p1 (after 9)
ip link set dev v36gk-br1-p1 alias vtopo:v36gk up

# ---- node br1
# [14] attach v36gk-br1-p1 to bridge v36gk-br1 (after 2, 9)
ip link set v36gk-br1-p1 master v36gk-br1

# ---- link vmr:nic0-br1:p2
# [15] create tap device v36gk-vmr-nic0
ip tuntap add dev v36gk-vmr-nic0 mode tap
# [16] configure and bring up v36gk-vmr-nic0 (after 15)
ip link set dev v36gk-vmr-nic0 alias vtopo:v36gk up

# ---- node br1
# [17] attach v36gk-vmr-nic0 to bridge v36gk-br1 (after 2, 15)
ip link set v36gk-vmr-nic0 master v36gk-br1

# ---- link vmr:nic1-br2:p1
# [18] create tap device v36gk-vmr-nic1
ip tuntap add dev v36gk-vmr-nic1 mode tap

# ---- node vmr
# [19] start qemu@vmr (after 6, 15, 18)
# fd 3: /dev/net/tun attached to the tap v36gk-vmr-nic0 by vtopo (ioctl TUNSETIFF, which no shell command makes)
# fd 4: /dev/net/tun attached to the tap v36gk-vmr-nic1 by vtopo (ioctl TUNSETIFF, which no shell command makes)
( umask 077 && exec setpriv --reuid=vtopo-qemu --regid=vtopo-qemu --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- qemu-system-x86_64 -name vmr -machine q35,accel=tcg -cpu max -smp 1 -m 256 -nodefaults -display none -chardev socket,id=console,path=/run/vtopo/v36gk/vmr/console.sock,server=on,wait=off,logfile=/run/vtopo/v36gk/vmr/console.log -serial chardev:console -qmp unix:/run/vtopo/v36gk/vmr/qmp.sock,server=on,wait=off -pidfile /run/vtopo/v36gk/vmr/qemu.pid -sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny -kernel /var/cache/vtopo/guest/vmlinuz -initrd /var/cache/vtopo/guest/initrd.img -append 'console=ttyS0 quiet panic=-1 vtopo.hostname=vmr vtopo.ip=eth0:10.1.1.1/24 vtopo.ip=eth1:10.1.2.1/24 vtopo.forward=1' -no-reboot -netdev tap,id=net0,fd=3,vhost=off -device virtio-net-pci,netdev=net0,mac=52:54:00:bf:d1:f2 -netdev tap,id=net1,fd=4,vhost=off -device virtio-net-pci,netdev=net1,mac=52:54:00:0d:96:54 3<>/dev/net/tun 4<>/dev/net/tun ) &

# ---- link vmr:nic1-br2:p1
# [20] configure and bring up v36gk-vmr-nic1 (after 18)
ip link set dev v36gk-vmr-nic1 alias vtopo:v36gk up

# ---- node br2
# [21] attach v36gk-vmr-nic1 to bridge v36gk-br2 (after 4, 18)
ip link set v36gk-vmr-nic1 master v36gk-br2

# ---- link c2:eth0-br2:p2
# [22] create veth pair v36gk-br2-p2 <-> eth0 (after 8)
ip link add v36gk-br2-p2 type veth peer name eth0 netns v36gk-c2
# [23] configure and bring up eth0 (after 22)
ip -n v36gk-c2 link set dev eth0 up
# [24] address 10.1.2.10/24 on eth0 (after 22)
ip -n v36gk-c2 addr add 10.1.2.10/24 dev eth0

# ---- node c2
# [25] route default via 10.1.2.1 (after 24)
ip -n v36gk-c2 route add default via 10.1.2.1

# ---- link c2:eth0-br2:p2
# [26] configure and bring up v36gk-br2-p2 (after 22)
ip link set dev v36gk-br2-p2 alias vtopo:v36gk up

# ---- node br2
# [27] attach v36gk-br2-p2 to bridge v36gk-br2 (after 4, 22)
ip link set v36gk-br2-p2 master v36gk-br2

# ---- to tear it all down again (vtopo destroy does this):
#   kill $(cat /run/vtopo/v36gk/vmr/qemu.pid)
#   ip link del v36gk-vmr-nic1
#   ip link del v36gk-vmr-nic0
#   ip netns del v36gk-c2
#   ip netns del v36gk-c1
#   rm -rf /run/vtopo/v36gk/vmr
#   ip link del v36gk-br2
#   ip link del v36gk-br1
#   rm -rf /run/vtopo/v36gk
