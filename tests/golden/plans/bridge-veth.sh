#!/bin/sh
# vtopo plan for lab 'bridge-veth': every object below is named vv7fc-*
set -e
LAB_TAG=vtopo:vv7fc  # the tag on every object the lab makes
#
# Containers on a Linux bridge, each joined by a veth pair (seed 001, case a).
# One end of each veth is eth0 inside the container's namespace; the other end stays in the host
# and is enslaved to the bridge. The bridge learns MAC addresses and switches frames between ports.
# Try: vtopo ping bridge-veth c1 c2, then vtopo iperf bridge-veth c1 c2.

# ---- node br0
# [1] create Linux bridge vv7fc-br0
ip link add vv7fc-br0 type bridge stp_state 0 forward_delay 1500 ageing_time 30000
# [2] configure and bring up vv7fc-br0 (after 1)
ip link set dev vv7fc-br0 alias vtopo:vv7fc up

# ---- node c1
# [3] create network namespace vv7fc-c1
ip netns add vv7fc-c1
ip -n vv7fc-c1 link set lo up alias "$LAB_TAG"

# ---- node c2
# [4] create network namespace vv7fc-c2
ip netns add vv7fc-c2
ip -n vv7fc-c2 link set lo up alias "$LAB_TAG"

# ---- node c3
# [5] create network namespace vv7fc-c3
ip netns add vv7fc-c3
ip -n vv7fc-c3 link set lo up alias "$LAB_TAG"

# ---- link c1:eth0-br0:p1
# [6] create veth pair vv7fc-br0-p1 <-> eth0 (after 3)
ip link add vv7fc-br0-p1 type veth peer name eth0 netns vv7fc-c1
# [7] configure and bring up eth0 (after 6)
ip -n vv7fc-c1 link set dev eth0 up
# [8] address 10.0.0.1/24 on eth0 (after 6)
ip -n vv7fc-c1 addr add 10.0.0.1/24 dev eth0
# [9] configure and bring up vv7fc-br0-p1 (after 6)
ip link set dev vv7fc-br0-p1 alias vtopo:vv7fc up

# ---- node br0
# [10] attach vv7fc-br0-p1 to bridge vv7fc-br0 (after 1, 6)
ip link set vv7fc-br0-p1 master vv7fc-br0

# ---- link c2:eth0-br0:p2
# [11] create veth pair vv7fc-br0-p2 <-> eth0 (after 4)
ip link add vv7fc-br0-p2 type veth peer name eth0 netns vv7fc-c2
# [12] configure and bring up eth0 (after 11)
ip -n vv7fc-c2 link set dev eth0 up
# [13] address 10.0.0.2/24 on eth0 (after 11)
ip -n vv7fc-c2 addr add 10.0.0.2/24 dev eth0
# [14] configure and bring up vv7fc-br0-p2 (after 11)
ip link set dev vv7fc-br0-p2 alias vtopo:vv7fc up

# ---- node br0
# [15] attach vv7fc-br0-p2 to bridge vv7fc-br0 (after 1, 11)
ip link set vv7fc-br0-p2 master vv7fc-br0

# ---- link c3:eth0-br0:p3
# [16] create veth pair vv7fc-br0-p3 <-> eth0 (after 5)
ip link add vv7fc-br0-p3 type veth peer name eth0 netns vv7fc-c3
# [17] configure and bring up eth0 (after 16)
ip -n vv7fc-c3 link set dev eth0 up
# [18] address 10.0.0.3/24 on eth0 (after 16)
ip -n vv7fc-c3 addr add 10.0.0.3/24 dev eth0
# [19] configure and bring up vv7fc-br0-p3 (after 16)
ip link set dev vv7fc-br0-p3 alias vtopo:vv7fc up

# ---- node br0
# [20] attach vv7fc-br0-p3 to bridge vv7fc-br0 (after 1, 16)
ip link set vv7fc-br0-p3 master vv7fc-br0

# ---- to tear it all down again (vtopo destroy does this):
#   ip netns del vv7fc-c3
#   ip netns del vv7fc-c2
#   ip netns del vv7fc-c1
#   ip link del vv7fc-br0
