#!/bin/sh
# vtopo plan for lab 'macvlan-vs-veth': every object below is named vtc13-*
set -e
LAB_TAG=vtopo:vtc13  # the tag on every object the lab makes
#
# Containers joined two ways on one canvas. On the left, v1 and v2 hang off a Linux bridge by veth pairs; on the
# right, m1 and m2 are macvlan children of one lower device in bridge mode, with no bridge and no veth.
# The experiment compares TCP throughput and request/response rate of the two, and takes the loopback of v1's
# own namespace as the baseline with no virtual link at all. Run: vtopo experiment topologies/macvlan-vs-veth.vtopo

# ---- node br0
# [1] create Linux bridge vtc13-br0
ip link add vtc13-br0 type bridge stp_state 0 forward_delay 1500 ageing_time 30000
# [2] configure and bring up vtc13-br0 (after 1)
ip link set dev vtc13-br0 alias vtopo:vtc13 up

# ---- node v1
# [3] create network namespace vtc13-v1
ip netns add vtc13-v1
ip -n vtc13-v1 link set lo up alias "$LAB_TAG"

# ---- node v2
# [4] create network namespace vtc13-v2
ip netns add vtc13-v2
ip -n vtc13-v2 link set lo up alias "$LAB_TAG"

# ---- node mv
# [5] create veth pair vtc13-mv <-> vtc13-mv-up
ip link add vtc13-mv type veth peer name vtc13-mv-up
# [6] configure and bring up vtc13-mv (after 5)
ip link set dev vtc13-mv alias vtopo:vtc13 up
# [7] configure and bring up vtc13-mv-up (after 5)
ip link set dev vtc13-mv-up alias vtopo:vtc13 up

# ---- node m1
# [8] create network namespace vtc13-m1
ip netns add vtc13-m1
ip -n vtc13-m1 link set lo up alias "$LAB_TAG"

# ---- node m2
# [9] create network namespace vtc13-m2
ip netns add vtc13-m2
ip -n vtc13-m2 link set lo up alias "$LAB_TAG"

# ---- link v1:eth0-br0:p1
# [10] create veth pair vtc13-br0-p1 <-> eth0 (after 3)
ip link add vtc13-br0-p1 type veth peer name eth0 netns vtc13-v1
# [11] configure and bring up eth0 (after 10)
ip -n vtc13-v1 link set dev eth0 up
# [12] address 10.0.30.1/24 on eth0 (after 10)
ip -n vtc13-v1 addr add 10.0.30.1/24 dev eth0
# [13] configure and bring up vtc13-br0-p1 (after 10)
ip link set dev vtc13-br0-p1 alias vtopo:vtc13 up

# ---- node br0
# [14] attach vtc13-br0-p1 to bridge vtc13-br0 (after 1, 10)
ip link set vtc13-br0-p1 master vtc13-br0

# ---- link v2:eth0-br0:p2
# [15] create veth pair vtc13-br0-p2 <-> eth0 (after 4)
ip link add vtc13-br0-p2 type veth peer name eth0 netns vtc13-v2
# [16] configure and bring up eth0 (after 15)
ip -n vtc13-v2 link set dev eth0 up
# [17] address 10.0.30.2/24 on eth0 (after 15)
ip -n vtc13-v2 addr add 10.0.30.2/24 dev eth0
# [18] configure and bring up vtc13-br0-p2 (after 15)
ip link set dev vtc13-br0-p2 alias vtopo:vtc13 up

# ---- node br0
# [19] attach vtc13-br0-p2 to bridge vtc13-br0 (after 1, 15)
ip link set vtc13-br0-p2 master vtc13-br0

# ---- link m1:eth0-mv:c1
# [20] create macvlan eth0 on vtc13-mv, mode bridge (after 5, 8)
ip link add link vtc13-mv name eth0 netns vtc13-m1 type macvlan mode bridge
# [21] configure and bring up eth0 (after 20)
ip -n vtc13-m1 link set dev eth0 up
# [22] address 10.0.31.1/24 on eth0 (after 20)
ip -n vtc13-m1 addr add 10.0.31.1/24 dev eth0

# ---- link m2:eth0-mv:c2
# [23] create macvlan eth0 on vtc13-mv, mode bridge (after 5, 9)
ip link add link vtc13-mv name eth0 netns vtc13-m2 type macvlan mode bridge
# [24] configure and bring up eth0 (after 23)
ip -n vtc13-m2 link set dev eth0 up
# [25] address 10.0.31.2/24 on eth0 (after 23)
ip -n vtc13-m2 addr add 10.0.31.2/24 dev eth0

# ---- to tear it all down again (vtopo destroy does this):
#   ip netns del vtc13-m2
#   ip netns del vtc13-m1
#   ip link del vtc13-mv
#   ip netns del vtc13-v2
#   ip netns del vtc13-v1
#   ip link del vtc13-br0
