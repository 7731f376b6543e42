#!/bin/sh
# vtopo plan for lab 'vhost-on-off': every object below is named vmt2w-*
set -e
LAB_TAG=vtopo:vmt2w  # the tag on every object the lab makes
#
# vhost-net on and off, as in the vhost-net experiment (docs/reference-experiments.md). Both VMs sit on a numbered bridge, so the host reaches them through its
# address on br0: measure host -> von and host -> voff, as that experiment did. With vhost on, the kernel's vhost-net
# thread moves packets between the tap and the guest; with vhost off (<driver name='qemu'/> in libvirt),
# QEMU does it in read, ioctl and writev calls. It measured host->guest iperf3 at 29.5 Gb/s with vhost
# and 16.4 Gb/s without. On a host whose kernel has no vhost-net, both run with vhost off and vtopo says so.
# warning: node von: vhost-net is requested but this host's kernel has no vhost-net; the VM runs with vhost=off
# warning: node von: KVM is not usable here, so this VM runs under TCG emulation (slower)
# warning: node voff: KVM is not usable here, so this VM runs under TCG emulation (slower)

# ---- lab
# [1] create directory /run/vtopo/vmt2w
mkdir -p /run/vtopo/vmt2w

# ---- node br0
# [2] create Linux bridge vmt2w-br0
ip link add vmt2w-br0 type bridge stp_state 0 forward_delay 0 ageing_time 30000
# [3] configure and bring up vmt2w-br0 (after 2)
ip link set dev vmt2w-br0 alias vtopo:vmt2w up
# [4] address 10.0.20.1/24 on vmt2w-br0 (after 2)
ip addr add 10.0.20.1/24 dev vmt2w-br0

# ---- node von
# [5] create directory /run/vtopo/vmt2w/von (after 1)
mkdir -p /run/vtopo/vmt2w/von
chmod 700 /run/vtopo/vmt2w/von
chown vtopo-qemu: /run/vtopo/vmt2w/von

# ---- node voff
# [6] create directory /run/vtopo/vmt2w/voff (after 1)
mkdir -p /run/vtopo/vmt2w/voff
chmod 700 /run/vtopo/vmt2w/voff
chown vtopo-qemu: /run/vtopo/vmt2w/voff

# ---- link von:nic0-br0:p1
# [7] create tap device vmt2w-von-nic0
ip tuntap add dev vmt2w-von-nic0 mode tap

# ---- node von
# [8] start qemu@von (after 5, 7)
# fd 3: /dev/net/tun attached to the tap vmt2w-von-nic0 by vtopo (ioctl TUNSETIFF, which no shell command makes)
( umask 077 && exec setpriv --reuid=vtopo-qemu --regid=vtopo-qemu --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- qemu-system-x86_64 -name von -machine q35,accel=tcg -cpu max -smp 1 -m 256 -nodefaults -display none -chardev socket,id=console,path=/run/vtopo/vmt2w/von/console.sock,server=on,wait=off,logfile=/run/vtopo/vmt2w/von/console.log -serial chardev:console -qmp unix:/run/vtopo/vmt2w/von/qmp.sock,server=on,wait=off -pidfile /run/vtopo/vmt2w/von/qemu.pid -sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny -kernel /var/cache/vtopo/guest/vmlinuz -initrd /var/cache/vtopo/guest/initrd.img -append 'console=ttyS0 quiet panic=-1 vtopo.hostname=von vtopo.ip=eth0:10.0.20.2/24' -no-reboot -netdev tap,id=net0,fd=3,vhost=off -device virtio-net-pci,netdev=net0,mac=52:54:00:80:0c:f5 3<>/dev/net/tun ) &

# ---- link von:nic0-br0:p1
# [9] configure and bring up vmt2w-von-nic0 (after 7)
ip link set dev vmt2w-von-nic0 alias vtopo:vmt2w up

# ---- node br0
# [10] attach vmt2w-von-nic0 to bridge vmt2w-br0 (after 2, 7)
ip link set vmt2w-von-nic0 master vmt2w-br0

# ---- link voff:nic0-br0:p2
# [11] create tap device vmt2w-voff-nic0
ip tuntap add dev vmt2w-voff-nic0 mode tap

# ---- node voff
# [12] start qemu@voff (after 6, 11)
# fd 3: /dev/net/tun attached to the tap vmt2w-voff-nic0 by vtopo (ioctl TUNSETIFF, which no shell command makes)
( umask 077 && exec setpriv --reuid=vtopo-qemu --regid=vtopo-qemu --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- qemu-system-x86_64 -name voff -machine q35,accel=tcg -cpu max -smp 1 -m 256 -nodefaults -display none -chardev socket,id=console,path=/run/vtopo/vmt2w/voff/console.sock,server=on,wait=off,logfile=/run/vtopo/vmt2w/voff/console.log -serial chardev:console -qmp unix:/run/vtopo/vmt2w/voff/qmp.sock,server=on,wait=off -pidfile /run/vtopo/vmt2w/voff/qemu.pid -sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny -kernel /var/cache/vtopo/guest/vmlinuz -initrd /var/cache/vtopo/guest/initrd.img -append 'console=ttyS0 quiet panic=-1 vtopo.hostname=voff vtopo.ip=eth0:10.0.20.3/24' -no-reboot -netdev tap,id=net0,fd=3,vhost=off -device virtio-net-pci,netdev=net0,mac=52:54:00:39:0a:ee 3<>/dev/net/tun ) &

# ---- link voff:nic0-br0:p2
# [13] configure and bring up vmt2w-voff-nic0 (after 11)
ip link set dev vmt2w-voff-nic0 alias vtopo:vmt2w up

# ---- node br0
# [14] attach vmt2w-voff-nic0 to bridge vmt2w-br0 (after 2, 11)
ip link set vmt2w-voff-nic0 master vmt2w-br0

# ---- to tear it all down again (vtopo destroy does this):
#   kill $(cat /run/vtopo/vmt2w/voff/qemu.pid)
#   ip link del vmt2w-voff-nic0
#   kill $(cat /run/vtopo/vmt2w/von/qemu.pid)
#   ip link del vmt2w-von-nic0
#   rm -rf /run/vtopo/vmt2w/voff
#   rm -rf /run/vtopo/vmt2w/von
#   ip link del vmt2w-br0
#   rm -rf /run/vtopo/vmt2w
