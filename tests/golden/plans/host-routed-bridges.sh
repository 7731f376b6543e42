#!/bin/sh
# vtopo plan for lab 'host-routed-bridges': every object below is named vi9uz-*
set -e
LAB_TAG=vtopo:vi9uz  # the tag on every object the lab makes
#
# Host networking for VMs and containers, after the host-networking experiment (docs/reference-experiments.md). Two numbered bridges: the host has 172.16.1.1 on br1 and
# 172.16.2.1 on br2, so it is the router between them (L3), while the hosts on one bridge are switched (L2).
# Forward delay 0 makes new ports forward at once. c1 reaches c3 through the host's routing table; only the
# forwarding switch of these two bridges is turned on, never the host's global ip_forward.

# ---- lab
# [1] contain forwarding to the lab's own devices (nftables table vtopo-vi9uz)
nft add table inet vtopo-vi9uz
nft add chain inet vtopo-vi9uz forward '{ type filter hook forward priority 0; policy accept; }'
nft add rule inet vtopo-vi9uz forward iifname 'vi9uz-*' oifname '!=' 'vi9uz-*' counter drop
nft add rule inet vtopo-vi9uz forward oifname 'vi9uz-*' iifname '!=' 'vi9uz-*' counter drop

# ---- node br1
# [2] create Linux bridge vi9uz-br1
ip link add vi9uz-br1 type bridge stp_state 0 forward_delay 0 ageing_time 30000
# [3] configure and bring up vi9uz-br1 (after 2)
ip link set dev vi9uz-br1 alias vtopo:vi9uz up
# [4] address 172.16.1.1/24 on vi9uz-br1 (after 2)
ip addr add 172.16.1.1/24 dev vi9uz-br1
# [5] sysctl net.ipv4.conf.vi9uz-br1.forwarding=1 (after 2)
sysctl -qw net.ipv4.conf.vi9uz-br1.forwarding=1

# ---- node br2
# [6] create Linux bridge vi9uz-br2
ip link add vi9uz-br2 type bridge stp_state 0 forward_delay 0 ageing_time 30000
# [7] configure and bring up vi9uz-br2 (after 6)
ip link set dev vi9uz-br2 alias vtopo:vi9uz up
# [8] address 172.16.2.1/24 on vi9uz-br2 (after 6)
ip addr add 172.16.2.1/24 dev vi9uz-br2
# [9] sysctl net.ipv4.conf.vi9uz-br2.forwarding=1 (after 6)
sysctl -qw net.ipv4.conf.vi9uz-br2.forwarding=1

# ---- node c1
# [10] create network namespace vi9uz-c1
ip netns add vi9uz-c1
ip -n vi9uz-c1 link set lo up alias "$LAB_TAG"

# ---- node c2
# [11] create network namespace vi9uz-c2
ip netns add vi9uz-c2
ip -n vi9uz-c2 link set lo up alias "$LAB_TAG"

# ---- node c3
# [12] create network namespace vi9uz-c3
ip netns add vi9uz-c3
ip -n vi9uz-c3 link set lo up alias "$LAB_TAG"

# ---- link c1:eth0-br1:p1
# [13] create veth pair vi9uz-br1-p1 <-> eth0 (after 10)
ip link add vi9uz-br1-p1 type veth peer name eth0 netns vi9uz-c1
# [14] configure and bring up eth0 (after 13)
ip -n vi9uz-c1 link set dev eth0 up
# [15] address 172.16.1.10/24 on eth0 (after 13)
ip -n vi9uz-c1 addr add 172.16.1.10/24 dev eth0

# ---- node c1
# [16] route default via 172.16.1.1 (after 15)
ip -n vi9uz-c1 route add default via 172.16.1.1

# ---- link c1:eth0-br1:p1
# [17] configure and bring up vi9uz-br1-p1 (after 13)
ip link set dev vi9uz-br1-p1 alias vtopo:vi9uz up

# ---- node br1
# [18] attach vi9uz-br1-p1 to bridge vi9uz-br1 (after 2, 13)
ip link set vi9uz-br1-p1 master vi9uz-br1

# ---- link c2:eth0-br1:p2
# [19] create veth pair vi9uz-br1-p2 <-> eth0 (after 11)
ip link add vi9uz-br1-p2 type veth peer name eth0 netns vi9uz-c2
# [20] configure and bring up eth0 (after 19)
ip -n vi9uz-c2 link set dev eth0 up
# [21] address 172.16.1.11/24 on eth0 (after 19)
ip -n vi9uz-c2 addr add 172.16.1.11/24 dev eth0

# ---- node c2
# [22] route default via 172.16.1.1 (after 21)
ip -n vi9uz-c2 route add default via 172.16.1.1

# ---- link c2:eth0-br1:p2
# [23] configure and bring up vi9uz-br1-p2 (after 19)
ip link set dev vi9uz-br1-p2 alias vtopo:vi9uz up

# ---- node br1
# [24] attach vi9uz-br1-p2 to bridge vi9uz-br1 (after 2, 19)
ip link set vi9uz-br1-p2 master vi9uz-br1

# ---- link c3:eth0-br2:p1
# [25] create veth pair vi9uz-br2-p1 <-> eth0 (after 12)
ip link add vi9uz-br2-p1 type veth peer name eth0 netns vi9uz-c3
# [26] configure and bring up eth0 (after 25)
ip -n vi9uz-c3 link set dev eth0 up
# [27] address 172.16.2.10/24 on eth0 (after 25)
ip -n vi9uz-c3 addr add 172.16.2.10/24 dev eth0

# ---- node c3
# [28] route default via 172.16.2.1 (after 27)
ip -n vi9uz-c3 route add default via 172.16.2.1

# ---- link c3:eth0-br2:p1
# [29] configure and bring up vi9uz-br2-p1 (after 25)
ip link set dev vi9uz-br2-p1 alias vtopo:vi9uz up

# ---- node br2
# [30] attach vi9uz-br2-p1 to bridge vi9uz-br2 (after 6, 25)
ip link set vi9uz-br2-p1 master vi9uz-br2

# ---- to tear it all down again (vtopo destroy does this):
#   ip netns del vi9uz-c3
#   ip netns del vi9uz-c2
#   ip netns del vi9uz-c1
#   ip link del vi9uz-br2
#   ip link del vi9uz-br1
#   nft delete table inet vtopo-vi9uz
