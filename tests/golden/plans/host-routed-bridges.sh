#!/bin/sh
# vtopo plan for lab 'host-routed-bridges': every object below is named vi9uz-*
set -e
LAB_TAG=vtopo:vi9uz  # the tag on every object the lab makes
#
# Host networking for VMs and containers, after the host-networking experiment (docs/reference-experiments.md). Two numbered bridges: the host has 172.16.1.1 on br1 and
# 172.16.2.1 on br2, so it is the router between them (L3), while the hosts on one bridge are switched (L2).
# Forward delay 0 makes new ports forward at once. c1 reaches c3 through the host's routing table; only the
# forwarding switch of these two bridges is turned on, never the host's global ip_forward.

# ---- node br1
# [1] create Linux bridge vi9uz-br1
ip link add vi9uz-br1 type bridge stp_state 0 forward_delay 0 ageing_time 30000
# [2] configure and bring up vi9uz-br1 (after 1)
ip link set dev vi9uz-br1 alias vtopo:vi9uz up
# [3] address 172.16.1.1/24 on vi9uz-br1 (after 1)
ip addr add 172.16.1.1/24 dev vi9uz-br1
# [4] sysctl net.ipv4.conf.vi9uz-br1.forwarding=1 (after 1)
sysctl -qw net.ipv4.conf.vi9uz-br1.forwarding=1

# ---- node br2
# [5] create Linux bridge vi9uz-br2
ip link add vi9uz-br2 type bridge stp_state 0 forward_delay 0 ageing_time 30000
# [6] configure and bring up vi9uz-br2 (after 5)
ip link set dev vi9uz-br2 alias vtopo:vi9uz up
# [7] address 172.16.2.1/24 on vi9uz-br2 (after 5)
ip addr add 172.16.2.1/24 dev vi9uz-br2
# [8] sysctl net.ipv4.conf.vi9uz-br2.forwarding=1 (after 5)
sysctl -qw net.ipv4.conf.vi9uz-br2.forwarding=1

# ---- node c1
# [9] create network namespace vi9uz-c1
ip netns add vi9uz-c1
ip -n vi9uz-c1 link set lo up alias "$LAB_TAG"

# ---- node c2
# [10] create network namespace vi9uz-c2
ip netns add vi9uz-c2
ip -n vi9uz-c2 link set lo up alias "$LAB_TAG"

# ---- node c3
# [11] create network namespace vi9uz-c3
ip netns add vi9uz-c3
ip -n vi9uz-c3 link set lo up alias "$LAB_TAG"

# ---- link c1:eth0-br1:p1
# [12] create veth pair vi9uz-br1-p1 <-> eth0 (after 9)
ip link add vi9uz-br1-p1 type veth peer name eth0 netns vi9uz-c1
# [13] configure and bring up eth0 (after 12)
ip -n vi9uz-c1 link set dev eth0 up
# [14] address 172.16.1.10/24 on eth0 (after 12)
ip -n vi9uz-c1 addr add 172.16.1.10/24 dev eth0

# ---- node c1
# [15] route default via 172.16.1.1 (after 14)
ip -n vi9uz-c1 route add default via 172.16.1.1

# ---- link c1:eth0-br1:p1
# [16] configure and bring up vi9uz-br1-p1 (after 12)
ip link set dev vi9uz-br1-p1 alias vtopo:vi9uz up

# ---- node br1
# [17] attach vi9uz-br1-p1 to bridge vi9uz-br1 (after 1, 12)
ip link set vi9uz-br1-p1 master vi9uz-br1

# ---- link c2:eth0-br1:p2
# [18] create veth pair vi9uz-br1-p2 <-> eth0 (after 10)
ip link add vi9uz-br1-p2 type veth peer name eth0 netns vi9uz-c2
# [19] configure and bring up eth0 (after 18)
ip -n vi9uz-c2 link set dev eth0 up
# [20] address 172.16.1.11/24 on eth0 (after 18)
ip -n vi9uz-c2 addr add 172.16.1.11/24 dev eth0

# ---- node c2
# [21] route default via 172.16.1.1 (after 20)
ip -n vi9uz-c2 route add default via 172.16.1.1

# ---- link c2:eth0-br1:p2
# [22] configure and bring up vi9uz-br1-p2 (after 18)
ip link set dev vi9uz-br1-p2 alias vtopo:vi9uz up

# ---- node br1
# [23] attach vi9uz-br1-p2 to bridge vi9uz-br1 (after 1, 18)
ip link set vi9uz-br1-p2 master vi9uz-br1

# ---- link c3:eth0-br2:p1
# [24] create veth pair vi9uz-br2-p1 <-> eth0 (after 11)
ip link add vi9uz-br2-p1 type veth peer name eth0 netns vi9uz-c3
# [25] configure and bring up eth0 (after 24)
ip -n vi9uz-c3 link set dev eth0 up
# [26] address 172.16.2.10/24 on eth0 (after 24)
ip -n vi9uz-c3 addr add 172.16.2.10/24 dev eth0

# ---- node c3
# [27] route default via 172.16.2.1 (after 26)
ip -n vi9uz-c3 route add default via 172.16.2.1

# ---- link c3:eth0-br2:p1
# [28] configure and bring up vi9uz-br2-p1 (after 24)
ip link set dev vi9uz-br2-p1 alias vtopo:vi9uz up

# ---- node br2
# [29] attach vi9uz-br2-p1 to bridge vi9uz-br2 (after 5, 24)
ip link set vi9uz-br2-p1 master vi9uz-br2

# ---- to tear it all down again (vtopo destroy does this):
#   ip netns del vi9uz-c3
#   ip netns del vi9uz-c2
#   ip netns del vi9uz-c1
#   ip link del vi9uz-br2
#   ip link del vi9uz-br1
