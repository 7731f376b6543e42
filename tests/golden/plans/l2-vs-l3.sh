#!/bin/sh
# vtopo plan for lab 'l2-vs-l3': every object below is named v2grl-*
set -e
LAB_TAG=vtopo:v2grl  # the tag on every object the lab makes
#
# L2 against L3. On the left, h1 and h2 share one bridge: one broadcast domain, frames switched by MAC.
# Between the LANs, two OSPF routers (zebra + ospfd) route by IP: lan1 (10.1.0.0/24) and lan2 (10.2.0.0/24)
# are separate broadcast domains, and r1 and r2 learn each other's LAN over their point-to-point link.
# Hello 1 s and dead 4 s make OSPF converge in seconds instead of the default 40.
# Try: vtopo exec l2-vs-l3 r1 -- vtysh -c 'show ip ospf neighbor', then compare iperf h1->h2 (switched)
# with h1->h3 (routed twice).

# ---- lab
# [1] create directory /run/vtopo/v2grl
mkdir -p /run/vtopo/v2grl

# ---- node lan1
# [2] create Linux bridge v2grl-lan1
ip link add v2grl-lan1 type bridge stp_state 0 forward_delay 1500 ageing_time 30000
# [3] configure and bring up v2grl-lan1 (after 2)
ip link set dev v2grl-lan1 alias vtopo:v2grl up

# ---- node lan2
# [4] create Linux bridge v2grl-lan2
ip link add v2grl-lan2 type bridge stp_state 0 forward_delay 1500 ageing_time 30000
# [5] configure and bring up v2grl-lan2 (after 4)
ip link set dev v2grl-lan2 alias vtopo:v2grl up

# ---- node r1
# [6] create network namespace v2grl-r1
ip netns add v2grl-r1
ip -n v2grl-r1 link set lo up alias "$LAB_TAG"
# [7] sysctl net.ipv4.ip_forward=1 (after 6)
ip netns exec v2grl-r1 sysctl -qw net.ipv4.ip_forward=1
# [8] sysctl net.ipv6.conf.all.forwarding=1 (after 6)
ip netns exec v2grl-r1 sysctl -qw net.ipv6.conf.all.forwarding=1
# [9] create directory /run/vtopo/v2grl/r1 (after 1)
mkdir -p /run/vtopo/v2grl/r1
chown frr: /run/vtopo/v2grl/r1
# [10] write /run/vtopo/v2grl/r1/zebra.conf (after 9)
cat > /run/vtopo/v2grl/r1/zebra.conf <<'EOF'
hostname r1
log file /run/vtopo/v2grl/r1/zebra.log
EOF
# [11] write /run/vtopo/v2grl/r1/ospfd.conf (after 9)
cat > /run/vtopo/v2grl/r1/ospfd.conf <<'EOF'
hostname r1
log file /run/vtopo/v2grl/r1/ospfd.log
!
interface eth0
 ip ospf hello-interval 1
 ip ospf dead-interval 4
 ip ospf passive
!
interface eth1
 ip ospf hello-interval 1
 ip ospf dead-interval 4
 ip ospf network point-to-point
!
router ospf
 ospf router-id 10.1.0.1
 timers lsa min-arrival 0
 network 10.1.0.0/24 area 0.0.0.0
 network 10.0.12.0/30 area 0.0.0.0
!
EOF
# [12] write /run/vtopo/v2grl/r1/vtysh.conf (after 9)
cat > /run/vtopo/v2grl/r1/vtysh.conf <<'EOF'
! vtysh for this router only
EOF
# [13] create directory /run/vtopo/v2grl/r1.private (after 1)
mkdir -p /run/vtopo/v2grl/r1.private

# ---- node r2
# [14] create network namespace v2grl-r2
ip netns add v2grl-r2
ip -n v2grl-r2 link set lo up alias "$LAB_TAG"
# [15] sysctl net.ipv4.ip_forward=1 (after 14)
ip netns exec v2grl-r2 sysctl -qw net.ipv4.ip_forward=1
# [16] sysctl net.ipv6.conf.all.forwarding=1 (after 14)
ip netns exec v2grl-r2 sysctl -qw net.ipv6.conf.all.forwarding=1
# [17] create directory /run/vtopo/v2grl/r2 (after 1)
mkdir -p /run/vtopo/v2grl/r2
chown frr: /run/vtopo/v2grl/r2
# [18] write /run/vtopo/v2grl/r2/zebra.conf (after 17)
cat > /run/vtopo/v2grl/r2/zebra.conf <<'EOF'
hostname r2
log file /run/vtopo/v2grl/r2/zebra.log
EOF
# [19] write /run/vtopo/v2grl/r2/ospfd.conf (after 17)
cat > /run/vtopo/v2grl/r2/ospfd.conf <<'EOF'
hostname r2
log file /run/vtopo/v2grl/r2/ospfd.log
!
interface eth0
 ip ospf hello-interval 1
 ip ospf dead-interval 4
 ip ospf passive
!
interface eth1
 ip ospf hello-interval 1
 ip ospf dead-interval 4
 ip ospf network point-to-point
!
router ospf
 ospf router-id 10.2.0.1
 timers lsa min-arrival 0
 network 10.2.0.0/24 area 0.0.0.0
 network 10.0.12.0/30 area 0.0.0.0
!
EOF
# [20] write /run/vtopo/v2grl/r2/vtysh.conf (after 17)
cat > /run/vtopo/v2grl/r2/vtysh.conf <<'EOF'
! vtysh for this router only
EOF
# [21] create directory /run/vtopo/v2grl/r2.private (after 1)
mkdir -p /run/vtopo/v2grl/r2.private

# ---- node h1
# [22] create network namespace v2grl-h1
ip netns add v2grl-h1
ip -n v2grl-h1 link set lo up alias "$LAB_TAG"

# ---- node h2
# [23] create network namespace v2grl-h2
ip netns add v2grl-h2
ip -n v2grl-h2 link set lo up alias "$LAB_TAG"

# ---- node h3
# [24] create network namespace v2grl-h3
ip netns add v2grl-h3
ip -n v2grl-h3 link set lo up alias "$LAB_TAG"

# ---- link h1:eth0-lan1:p1
# [25] create veth pair v2grl-lan1-p1 <-> eth0 (after 22)
ip link add v2grl-lan1-p1 type veth peer name eth0 netns v2grl-h1
# [26] configure and bring up eth0 (after 25)
ip -n v2grl-h1 link set dev eth0 up
# [27] address 10.1.0.10/24 on eth0 (after 25)
ip -n v2grl-h1 addr add 10.1.0.10/24 dev eth0

# ---- node h1
# [28] route default via 10.1.0.1 (after 27)
ip -n v2grl-h1 route add default via 10.1.0.1

# ---- link h1:eth0-lan1:p1
# [29] configure and bring up v2grl-lan1-p1 (after 25)
ip link set dev v2grl-lan1-p1 alias vtopo:v2grl up

# ---- node lan1
# [30] attach v2grl-lan1-p1 to bridge v2grl-lan1 (after 2, 25)
ip link set v2grl-lan1-p1 master v2grl-lan1

# ---- link h2:eth0-lan1:p2
# [31] create veth pair v2grl-lan1-p2 <-> eth0 (after 23)
ip link add v2grl-lan1-p2 type veth peer name eth0 netns v2grl-h2
# [32] configure and bring up eth0 (after 31)
ip -n v2grl-h2 link set dev eth0 up
# [33] address 10.1.0.11/24 on eth0 (after 31)
ip -n v2grl-h2 addr add 10.1.0.11/24 dev eth0

# ---- node h2
# [34] route default via 10.1.0.1 (after 33)
ip -n v2grl-h2 route add default via 10.1.0.1

# ---- link h2:eth0-lan1:p2
# [35] configure and bring up v2grl-lan1-p2 (after 31)
ip link set dev v2grl-lan1-p2 alias vtopo:v2grl up

# ---- node lan1
# [36] attach v2grl-lan1-p2 to bridge v2grl-lan1 (after 2, 31)
ip link set v2grl-lan1-p2 master v2grl-lan1

# ---- link r1:eth0-lan1:p3
# [37] create veth pair v2grl-lan1-p3 <-> eth0 (after 6)
ip link add v2grl-lan1-p3 type veth peer name eth0 netns v2grl-r1
# [38] configure and bring up eth0 (after 37)
ip -n v2grl-r1 link set dev eth0 up
# [39] address 10.1.0.1/24 on eth0 (after 37)
ip -n v2grl-r1 addr add 10.1.0.1/24 dev eth0
# [40] configure and bring up v2grl-lan1-p3 (after 37)
ip link set dev v2grl-lan1-p3 alias vtopo:v2grl up

# ---- node lan1
# [41] attach v2grl-lan1-p3 to bridge v2grl-lan1 (after 2, 37)
ip link set v2grl-lan1-p3 master v2grl-lan1

# ---- link r1:eth1-r2:eth1
# [42] create veth pair eth1 <-> eth1 (after 6, 14)
ip -n v2grl-r1 link add eth1 type veth peer name eth1 netns v2grl-r2
# [43] configure and bring up eth1 (after 42)
ip -n v2grl-r1 link set dev eth1 up
# [44] address 10.0.12.1/30 on eth1 (after 42)
ip -n v2grl-r1 addr add 10.0.12.1/30 dev eth1
# [45] configure and bring up eth1 (after 42)
ip -n v2grl-r2 link set dev eth1 up

# ---- node r1
# [46] start zebra@r1 (after 6, 9, 10, 13, 37, 38, 39, 40, 42, 43, 44, 45)
ip netns exec v2grl-r1 /usr/lib/frr/zebra -d -u frr -g frr -f /run/vtopo/v2grl/r1/zebra.conf -i /run/vtopo/v2grl/r1/zebra.pid -z /run/vtopo/v2grl/r1/zserv.api --vty_socket /run/vtopo/v2grl/r1 -P 0 --log file:/run/vtopo/v2grl/r1/zebra.log
# [47] start ospfd@r1 (after 6, 9, 11, 13, 46)
ip netns exec v2grl-r1 /usr/lib/frr/ospfd -d -u frr -g frr -f /run/vtopo/v2grl/r1/ospfd.conf -i /run/vtopo/v2grl/r1/ospfd.pid -z /run/vtopo/v2grl/r1/zserv.api --vty_socket /run/vtopo/v2grl/r1 -P 0 --log file:/run/vtopo/v2grl/r1/ospfd.log

# ---- link r1:eth1-r2:eth1
# [48] address 10.0.12.2/30 on eth1 (after 42)
ip -n v2grl-r2 addr add 10.0.12.2/30 dev eth1

# ---- link r2:eth0-lan2:p1
# [49] create veth pair v2grl-lan2-p1 <-> eth0 (after 14)
ip link add v2grl-lan2-p1 type veth peer name eth0 netns v2grl-r2
# [50] configure and bring up eth0 (after 49)
ip -n v2grl-r2 link set dev eth0 up
# [51] address 10.2.0.1/24 on eth0 (after 49)
ip -n v2grl-r2 addr add 10.2.0.1/24 dev eth0
# [52] configure and bring up v2grl-lan2-p1 (after 49)
ip link set dev v2grl-lan2-p1 alias vtopo:v2grl up

# ---- node r2
# [53] start zebra@r2 (after 14, 17, 18, 21, 42, 43, 45, 48, 49, 50, 51, 52)
ip netns exec v2grl-r2 /usr/lib/frr/zebra -d -u frr -g frr -f /run/vtopo/v2grl/r2/zebra.conf -i /run/vtopo/v2grl/r2/zebra.pid -z /run/vtopo/v2grl/r2/zserv.api --vty_socket /run/vtopo/v2grl/r2 -P 0 --log file:/run/vtopo/v2grl/r2/zebra.log
# [54] start ospfd@r2 (after 14, 17, 19, 21, 53)
ip netns exec v2grl-r2 /usr/lib/frr/ospfd -d -u frr -g frr -f /run/vtopo/v2grl/r2/ospfd.conf -i /run/vtopo/v2grl/r2/ospfd.pid -z /run/vtopo/v2grl/r2/zserv.api --vty_socket /run/vtopo/v2grl/r2 -P 0 --log file:/run/vtopo/v2grl/r2/ospfd.log

# ---- node lan2
# [55] attach v2grl-lan2-p1 to bridge v2grl-lan2 (after 4, 49)
ip link set v2grl-lan2-p1 master v2grl-lan2

# ---- link h3:eth0-lan2:p2
# [56] create veth pair v2grl-lan2-p2 <-> eth0 (after 24)
ip link add v2grl-lan2-p2 type veth peer name eth0 netns v2grl-h3
# [57] configure and bring up eth0 (after 56)
ip -n v2grl-h3 link set dev eth0 up
# [58] address 10.2.0.10/24 on eth0 (after 56)
ip -n v2grl-h3 addr add 10.2.0.10/24 dev eth0

# ---- node h3
# [59] route default via 10.2.0.1 (after 58)
ip -n v2grl-h3 route add default via 10.2.0.1

# ---- link h3:eth0-lan2:p2
# [60] configure and bring up v2grl-lan2-p2 (after 56)
ip link set dev v2grl-lan2-p2 alias vtopo:v2grl up

# ---- node lan2
# [61] attach v2grl-lan2-p2 to bridge v2grl-lan2 (after 4, 56)
ip link set v2grl-lan2-p2 master v2grl-lan2

# ---- to tear it all down again (vtopo destroy does this):
#   kill $(cat /run/vtopo/v2grl/r2/ospfd.pid)
#   kill $(cat /run/vtopo/v2grl/r2/zebra.pid)
#   kill $(cat /run/vtopo/v2grl/r1/ospfd.pid)
#   kill $(cat /run/vtopo/v2grl/r1/zebra.pid)
#   ip netns del v2grl-h3
#   ip netns del v2grl-h2
#   ip netns del v2grl-h1
#   rm -rf /run/vtopo/v2grl/r2.private
#   rm -f /run/vtopo/v2grl/r2/vtysh.conf
#   rm -f /run/vtopo/v2grl/r2/ospfd.conf
#   rm -f /run/vtopo/v2grl/r2/zebra.conf
#   rm -rf /run/vtopo/v2grl/r2
#   ip netns del v2grl-r2
#   rm -rf /run/vtopo/v2grl/r1.private
#   rm -f /run/vtopo/v2grl/r1/vtysh.conf
#   rm -f /run/vtopo/v2grl/r1/ospfd.conf
#   rm -f /run/vtopo/v2grl/r1/zebra.conf
#   rm -rf /run/vtopo/v2grl/r1
#   ip netns del v2grl-r1
#   ip link del v2grl-lan2
#   ip link del v2grl-lan1
#   rm -rf /run/vtopo/v2grl
