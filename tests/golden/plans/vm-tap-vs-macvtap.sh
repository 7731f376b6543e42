#!/bin/sh
# vtopo plan for lab 'vm-tap-vs-macvtap': every object below is named voss0-*
set -e
LAB_TAG=vtopo:voss0  # the tag on every object the lab makes
#
# Two ways to give a VM a NIC, as in the tap-vs-macvtap experiment (docs/reference-experiments.md). vm1's NIC is a tap device enslaved to a Linux bridge that the host
# is numbered on. vm2's NIC is a macvtap in bridge mode: no bridge at all. QEMU has no macvtap option, so vtopo
# opens /dev/tapN (N = the macvtap's ifindex) and passes it as -netdev tap,fd=3 3<>/dev/tapN, and gives the
# guest the macvtap's MAC; with any other MAC the frames never arrive. The host reaches vm2 through a macvlan
# of its own on the same lower device. Compare iperf host->vm1 with host->vm2: that experiment measured no difference.
# warning: node vm1: vhost-net is requested but this host's kernel has no vhost-net; the VM runs with vhost=off
# warning: node vm1: KVM is not usable here, so this VM runs under TCG emulation (slower)
# warning: node vm2: vhost-net is requested but this host's kernel has no vhost-net; the VM runs with vhost=off
# warning: node vm2: KVM is not usable here, so this VM runs under TCG emulation (slower)

# ---- lab
# [1] create directory /run/vtopo/voss0
mkdir -p /run/vtopo/voss0

# ---- node br0
# [2] create Linux bridge voss0-br0
ip link add voss0-br0 type bridge stp_state 0 forward_delay 0 ageing_time 30000
# [3] configure and bring up voss0-br0 (after 2)
ip link set dev voss0-br0 alias vtopo:voss0 up
# [4] address 10.0.10.1/24 on voss0-br0 (after 2)
ip addr add 10.0.10.1/24 dev voss0-br0

# ---- node vm1
# [5] create directory /run/vtopo/voss0/vm1 (after 1)
mkdir -p /run/vtopo/voss0/vm1
chmod 700 /run/vtopo/voss0/vm1
chown vtopo-qemu: /run/vtopo/voss0/vm1

# ---- node mvt
# [6] create veth pair voss0-mvt <-> voss0-mvt-up
ip link add voss0-mvt type veth peer name voss0-mvt-up
# [7] configure and bring up voss0-mvt (after 6)
ip link set dev voss0-mvt alias vtopo:voss0 up
# [8] configure and bring up voss0-mvt-up (after 6)
ip link set dev voss0-mvt-up alias vtopo:voss0 up

# ---- node vm2
# [9] create directory /run/vtopo/voss0/vm2 (after 1)
mkdir -p /run/vtopo/voss0/vm2
chmod 700 /run/vtopo/voss0/vm2
chown vtopo-qemu: /run/vtopo/voss0/vm2

# ---- link vm1:nic0-br0:p1
# [10] create tap device voss0-vm1-nic0
ip tuntap add dev voss0-vm1-nic0 mode tap

# ---- node vm1
# [11] start qemu@vm1 (after 5, 10)
# fd 3: /dev/net/tun attached to the tap voss0-vm1-nic0 by vtopo (ioctl TUNSETIFF, which no shell command makes)
( umask 077 && exec setpriv --reuid=vtopo-qemu --regid=vtopo-qemu --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- qemu-system-x86_64 -name vm1 -machine q35,accel=tcg -cpu max -smp 1 -m 256 -nodefaults -display none -chardev socket,id=console,path=/run/vtopo/voss0/vm1/console.sock,server=on,wait=off,logfile=/run/vtopo/voss0/vm1/console.log -serial chardev:console -qmp unix:/run/vtopo/voss0/vm1/qmp.sock,server=on,wait=off -pidfile /run/vtopo/voss0/vm1/qemu.pid -sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny -kernel /var/cache/vtopo/guest/vmlinuz -initrd /var/cache/vtopo/guest/initrd.img -append 'console=ttyS0 quiet panic=-1 vtopo.hostname=vm1 vtopo.ip=eth0:10.0.10.2/24' -no-reboot -netdev tap,id=net0,fd=3,vhost=off -device virtio-net-pci,netdev=net0,mac=52:54:00:a1:37:e5 3<>/dev/net/tun ) &

# ---- link vm1:nic0-br0:p1
# [12] configure and bring up voss0-vm1-nic0 (after 10)
ip link set dev voss0-vm1-nic0 alias vtopo:voss0 up

# ---- node br0
# [13] attach voss0-vm1-nic0 to bridge voss0-br0 (after 2, 10)
ip link set voss0-vm1-nic0 master voss0-br0

# ---- link vm2:nic0-mvt:c1
# [14] create macvtap voss0-vm2-nic0 on voss0-mvt, mode bridge (after 6)
ip link add link voss0-mvt name voss0-vm2-nic0 type macvtap mode bridge
# its character device: /dev/tap$(cat /sys/class/net/voss0-vm2-nic0/ifindex)

# ---- node vm2
# [15] start qemu@vm2 (after 9, 14)
( umask 077 && exec setpriv --reuid=vtopo-qemu --regid=vtopo-qemu --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- qemu-system-x86_64 -name vm2 -machine q35,accel=tcg -cpu max -smp 1 -m 256 -nodefaults -display none -chardev socket,id=console,path=/run/vtopo/voss0/vm2/console.sock,server=on,wait=off,logfile=/run/vtopo/voss0/vm2/console.log -serial chardev:console -qmp unix:/run/vtopo/voss0/vm2/qmp.sock,server=on,wait=off -pidfile /run/vtopo/voss0/vm2/qemu.pid -sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny -kernel /var/cache/vtopo/guest/vmlinuz -initrd /var/cache/vtopo/guest/initrd.img -append 'console=ttyS0 quiet panic=-1 vtopo.hostname=vm2 vtopo.ip=eth0:10.0.11.2/24' -no-reboot -netdev tap,id=net0,fd=3,vhost=off -device virtio-net-pci,netdev=net0,mac=52:54:00:5b:6b:22 3<>/dev/tap$(cat /sys/class/net/voss0-vm2-nic0/ifindex) ) &

# ---- link vm2:nic0-mvt:c1
# [16] configure and bring up voss0-vm2-nic0 (after 14)
ip link set dev voss0-vm2-nic0 address 52:54:00:5b:6b:22 alias vtopo:voss0 up

# ---- link host:eth0-mvt:c2
# [17] create macvlan voss0-host-eth0 on voss0-mvt, mode bridge (after 6)
ip link add link voss0-mvt name voss0-host-eth0 type macvlan mode bridge
# [18] configure and bring up voss0-host-eth0 (after 17)
ip link set dev voss0-host-eth0 alias vtopo:voss0 up
# [19] address 10.0.11.1/24 on voss0-host-eth0 (after 17)
ip addr add 10.0.11.1/24 dev voss0-host-eth0

# ---- to tear it all down again (vtopo destroy does this):
#   ip link del voss0-host-eth0
#   kill $(cat /run/vtopo/voss0/vm2/qemu.pid)
#   ip link del voss0-vm2-nic0
#   kill $(cat /run/vtopo/voss0/vm1/qemu.pid)
#   ip link del voss0-vm1-nic0
#   rm -rf /run/vtopo/voss0/vm2
#   ip link del voss0-mvt
#   rm -rf /run/vtopo/voss0/vm1
#   ip link del voss0-br0
#   rm -rf /run/vtopo/voss0
