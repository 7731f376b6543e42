#!/bin/sh
# vtopo plan for lab 'macvlan-bridge': every object below is named vcidu-*
set -e
LAB_TAG=vtopo:vcidu  # the tag on every object the lab makes
#
# Containers on macvlan, bridge mode (seed 001, case b).
# In bridge mode the macvlan driver switches frames between siblings itself: no bridge, no veth.
# The host reaches the containers only through a macvlan of its own on the same lower device,
# which is what the host node's link to the segment gives it (seed 001).

# ---- node mv
# [1] create veth pair vcidu-mv <-> vcidu-mv-up
ip link add vcidu-mv type veth peer name vcidu-mv-up
# [2] configure and bring up vcidu-mv (after 1)
ip link set dev vcidu-mv alias vtopo:vcidu up
# [3] configure and bring up vcidu-mv-up (after 1)
ip link set dev vcidu-mv-up alias vtopo:vcidu up

# ---- node c1
# [4] create network namespace vcidu-c1
ip netns add vcidu-c1
ip -n vcidu-c1 link set lo up alias "$LAB_TAG"

# ---- node c2
# [5] create network namespace vcidu-c2
ip netns add vcidu-c2
ip -n vcidu-c2 link set lo up alias "$LAB_TAG"

# ---- link c1:eth0-mv:c1
# [6] create macvlan eth0 on vcidu-mv, mode bridge (after 1, 4)
ip link add link vcidu-mv name eth0 netns vcidu-c1 type macvlan mode bridge
# [7] configure and bring up eth0 (after 6)
ip -n vcidu-c1 link set dev eth0 up
# [8] address 10.0.1.1/24 on eth0 (after 6)
ip -n vcidu-c1 addr add 10.0.1.1/24 dev eth0

# ---- link c2:eth0-mv:c2
# [9] create macvlan eth0 on vcidu-mv, mode bridge (after 1, 5)
ip link add link vcidu-mv name eth0 netns vcidu-c2 type macvlan mode bridge
# [10] configure and bring up eth0 (after 9)
ip -n vcidu-c2 link set dev eth0 up
# [11] address 10.0.1.2/24 on eth0 (after 9)
ip -n vcidu-c2 addr add 10.0.1.2/24 dev eth0

# ---- link host:eth0-mv:c3
# [12] create macvlan vcidu-host-eth0 on vcidu-mv, mode bridge (after 1)
ip link add link vcidu-mv name vcidu-host-eth0 type macvlan mode bridge
# [13] configure and bring up vcidu-host-eth0 (after 12)
ip link set dev vcidu-host-eth0 alias vtopo:vcidu up
# [14] address 10.0.1.254/24 on vcidu-host-eth0 (after 12)
ip addr add 10.0.1.254/24 dev vcidu-host-eth0

# ---- to tear it all down again (vtopo destroy does this):
#   ip link del vcidu-host-eth0
#   ip netns del vcidu-c2
#   ip netns del vcidu-c1
#   ip link del vcidu-mv
