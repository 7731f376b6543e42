#!/bin/sh
# vtopo plan for lab 'macvlan-bridge': every object below is named vtac1-*
set -e
LAB_TAG=vtopo:vtac1  # the tag on every object the lab makes
#
# Containers on macvlan, bridge mode (seed 001, case b).
# In bridge mode the macvlan driver switches frames between siblings itself: no bridge, no veth.
# The host reaches the containers only through a macvlan of its own on the same lower device,
# which is what the host node's link to the segment gives it (seed 001).

# ---- node mv
# [1] create veth pair vtac1-mv <-> vtac1-mv-up
ip link add vtac1-mv type veth peer name vtac1-mv-up
# [2] configure and bring up vtac1-mv (after 1)
ip link set dev vtac1-mv alias vtopo:vtac1 up
# [3] configure and bring up vtac1-mv-up (after 1)
ip link set dev vtac1-mv-up alias vtopo:vtac1 up

# ---- node c1
# [4] create network namespace vtac1-c1
ip netns add vtac1-c1
ip -n vtac1-c1 link set lo up alias "$LAB_TAG"

# ---- node c2
# [5] create network namespace vtac1-c2
ip netns add vtac1-c2
ip -n vtac1-c2 link set lo up alias "$LAB_TAG"

# ---- link c1:eth0-mv:c1
# [6] create macvlan eth0 on vtac1-mv, mode bridge (after 1, 4)
ip link add link vtac1-mv name eth0 netns vtac1-c1 type macvlan mode bridge
# [7] configure and bring up eth0 (after 6)
ip -n vtac1-c1 link set dev eth0 up
# [8] address 10.0.1.1/24 on eth0 (after 6)
ip -n vtac1-c1 addr add 10.0.1.1/24 dev eth0

# ---- link c2:eth0-mv:c2
# [9] create macvlan eth0 on vtac1-mv, mode bridge (after 1, 5)
ip link add link vtac1-mv name eth0 netns vtac1-c2 type macvlan mode bridge
# [10] configure and bring up eth0 (after 9)
ip -n vtac1-c2 link set dev eth0 up
# [11] address 10.0.1.2/24 on eth0 (after 9)
ip -n vtac1-c2 addr add 10.0.1.2/24 dev eth0

# ---- link host:eth0-mv:c3
# [12] create macvlan vtac1-host-eth0 on vtac1-mv, mode bridge (after 1)
ip link add link vtac1-mv name vtac1-host-eth0 type macvlan mode bridge
# [13] configure and bring up vtac1-host-eth0 (after 12)
ip link set dev vtac1-host-eth0 alias vtopo:vtac1 up
# [14] address 10.0.1.254/24 on vtac1-host-eth0 (after 12)
ip addr add 10.0.1.254/24 dev vtac1-host-eth0

# ---- to tear it all down again (vtopo destroy does this):
#   ip link del vtac1-host-eth0
#   ip netns del vtac1-c2
#   ip netns del vtac1-c1
#   ip link del vtac1-mv
