#!/bin/sh
# vtopo plan for lab 'macvlan-private': every object below is named v53yu-*
set -e
LAB_TAG=vtopo:v53yu  # the tag on every object the lab makes
#
# Containers on macvlan, private mode (seed 001, case b).
# In private mode siblings never reach each other, even when the switch beyond reflects frames.
# c1 and c2 cannot ping each other; both can still be reached from outside the segment.

# ---- node mv
# [1] create veth pair v53yu-mv <-> v53yu-mv-up
ip link add v53yu-mv type veth peer name v53yu-mv-up
# [2] configure and bring up v53yu-mv (after 1)
ip link set dev v53yu-mv alias vtopo:v53yu up
# [3] configure and bring up v53yu-mv-up (after 1)
ip link set dev v53yu-mv-up alias vtopo:v53yu up

# ---- node c1
# [4] create network namespace v53yu-c1
ip netns add v53yu-c1
ip -n v53yu-c1 link set lo up alias "$LAB_TAG"

# ---- node c2
# [5] create network namespace v53yu-c2
ip netns add v53yu-c2
ip -n v53yu-c2 link set lo up alias "$LAB_TAG"

# ---- link c1:eth0-mv:c1
# [6] create macvlan eth0 on v53yu-mv, mode private (after 1, 4)
ip link add link v53yu-mv name eth0 netns v53yu-c1 type macvlan mode private
# [7] configure and bring up eth0 (after 6)
ip -n v53yu-c1 link set dev eth0 up
# [8] address 10.0.1.1/24 on eth0 (after 6)
ip -n v53yu-c1 addr add 10.0.1.1/24 dev eth0

# ---- link c2:eth0-mv:c2
# [9] create macvlan eth0 on v53yu-mv, mode private (after 1, 5)
ip link add link v53yu-mv name eth0 netns v53yu-c2 type macvlan mode private
# [10] configure and bring up eth0 (after 9)
ip -n v53yu-c2 link set dev eth0 up
# [11] address 10.0.1.2/24 on eth0 (after 9)
ip -n v53yu-c2 addr add 10.0.1.2/24 dev eth0

# ---- to tear it all down again (vtopo destroy does this):
#   ip netns del v53yu-c2
#   ip netns del v53yu-c1
#   ip link del v53yu-mv
