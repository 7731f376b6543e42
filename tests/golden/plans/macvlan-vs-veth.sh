#!/bin/sh
# vtopo plan for lab 'macvlan-vs-veth': every object below is named viuje-*
set -e
LAB_TAG=vtopo:viuje  # the tag on every object the lab makes
#
# Containers joined two ways on one canvas. On the left, v1 and v2 hang off a Linux bridge by veth pairs; on the
# right, m1 and m2 are macvlan children of one lower device in bridge mode, with no bridge and no veth.
# The experiment compares TCP throughput and request/response rate of the two, and takes the loopback of v1's
# own namespace as the baseline with no virtual link at all. Run: vtopo experiment topologies/macvlan-vs-veth.vtopo

# ---- node br0
# [1] create Linux bridge viuje-br0
ip link add viuje-br0 type bridge stp_state 0 forward_delay 1500 ageing_time 30000
# [2] configure and bring up viuje-br0 (after 1)
ip link set dev viuje-br0 alias vtopo:viuje up

# ---- node v1
# [3] create network namespace viuje-v1
ip netns add viuje-v1
ip -n viuje-v1 link set lo up alias "$LAB_TAG"

# ---- node v2
# [4] create network namespace viuje-v2
ip netns add viuje-v2
ip -n viuje-v2 link set lo up alias "$LAB_TAG"

# ---- node mv
# [5] create veth pair viuje-mv <-> viuje-mv-up
ip link add viuje-mv type veth peer name viuje-mv-up
# [6] configure and bring up viuje-mv (after 5)
ip link set dev viuje-mv alias vtopo:viuje up
# [7] configure and bring up viuje-mv-up (after 5)
ip link set dev viuje-mv-up alias vtopo:viuje up

# ---- node m1
# [8] create network namespace viuje-m1
ip netns add viuje-m1
ip -n viuje-m1 link set lo up alias "$LAB_TAG"

# ---- node m2
# [9] create network namespace viuje-m2
ip netns add viuje-m2
ip -n viuje-m2 link set lo up alias "$LAB_TAG"

# ---- link v1:eth0-br0:p1
# [10] create veth pair viuje-br0-p1 <-> eth0 (after 3)
ip link add viuje-br0-p1 type veth peer name eth0 netns viuje-v1
# [11] configure and bring up eth0 (after 10)
ip -n viuje-v1 link set dev eth0 up
# [12] address 10.0.30.1/24 on eth0 (after 10)
ip -n viuje-v1 addr add 10.0.30.1/24 dev eth0
# [13] configure and bring up viuje-br0-p1 (after 10)
ip link set dev viuje-br0-p1 alias vtopo:viuje up

# ---- node br0
# [14] attach viuje-br0-p1 to bridge viuje-br0 (after 1, 10)
ip link set viuje-br0-p1 master viuje-br0

# ---- link v2:eth0-br0:p2
# [15] create veth pair viuje-br0-p2 <-> eth0 (after 4)
ip link add viuje-br0-p2 type veth peer name eth0 netns viuje-v2
# [16] configure and bring up eth0 (after 15)
ip -n viuje-v2 link set dev eth0 up
# [17] address 10.0.30.2/24 on eth0 (after 15)
ip -n viuje-v2 addr add 10.0.30.2/24 dev eth0
# [18] configure and bring up viuje-br0-p2 (after 15)
ip link set dev viuje-br0-p2 alias vtopo:viuje up

# ---- node br0
# [19] attach viuje-br0-p2 to bridge viuje-br0 (after 1, 15)
ip link set viuje-br0-p2 master viuje-br0

# ---- link m1:eth0-mv:c1
# [20] create macvlan eth0 on viuje-mv, mode bridge (after 5, 8)
ip link add link viuje-mv name eth0 netns viuje-m1 type macvlan mode bridge
# [21] configure and bring up eth0 (after 20)
ip -n viuje-m1 link set dev eth0 up
# [22] address 10.0.31.1/24 on eth0 (after 20)
ip -n viuje-m1 addr add 10.0.31.1/24 dev eth0

# ---- link m2:eth0-mv:c2
# [23] create macvlan eth0 on viuje-mv, mode bridge (after 5, 9)
ip link add link viuje-mv name eth0 netns viuje-m2 type macvlan mode bridge
# [24] configure and bring up eth0 (after 23)
ip -n viuje-m2 link set dev eth0 up
# [25] address 10.0.31.2/24 on eth0 (after 23)
ip -n viuje-m2 addr add 10.0.31.2/24 dev eth0

# ---- to tear it all down again (vtopo destroy does this):
#   ip netns del viuje-m2
#   ip netns del viuje-m1
#   ip link del viuje-mv
#   ip netns del viuje-v2
#   ip netns del viuje-v1
#   ip link del viuje-br0
