#!/bin/sh
# vtopo plan for lab 'macvlan-private': every object below is named vt8de-*
set -e
LAB_TAG=vtopo:vt8de  # the tag on every object the lab makes
#
# Containers on macvlan, private mode (seed 001, case b).
# In private mode siblings never reach each other, even when the switch beyond reflects frames.
# c1 and c2 cannot ping each other; both can still be reached from outside the segment.

# ---- node mv
# [1] create veth pair vt8de-mv <-> vt8de-mv-up
ip link add vt8de-mv type veth peer name vt8de-mv-up
# [2] configure and bring up vt8de-mv (after 1)
ip link set dev vt8de-mv alias vtopo:vt8de up
# [3] configure and bring up vt8de-mv-up (after 1)
ip link set dev vt8de-mv-up alias vtopo:vt8de up

# ---- node c1
# [4] create network namespace vt8de-c1
ip netns add vt8de-c1
ip -n vt8de-c1 link set lo up alias "$LAB_TAG"

# ---- node c2
# [5] create network namespace vt8de-c2
ip netns add vt8de-c2
ip -n vt8de-c2 link set lo up alias "$LAB_TAG"

# ---- link c1:eth0-mv:c1
# [6] create macvlan eth0 on vt8de-mv, mode private (after 1, 4)
ip link add link vt8de-mv name eth0 netns vt8de-c1 type macvlan mode private
# [7] configure and bring up eth0 (after 6)
ip -n vt8de-c1 link set dev eth0 up
# [8] address 10.0.1.1/24 on eth0 (after 6)
ip -n vt8de-c1 addr add 10.0.1.1/24 dev eth0

# ---- link c2:eth0-mv:c2
# [9] create macvlan eth0 on vt8de-mv, mode private (after 1, 5)
ip link add link vt8de-mv name eth0 netns vt8de-c2 type macvlan mode private
# [10] configure and bring up eth0 (after 9)
ip -n vt8de-c2 link set dev eth0 up
# [11] address 10.0.1.2/24 on eth0 (after 9)
ip -n vt8de-c2 addr add 10.0.1.2/24 dev eth0

# ---- to tear it all down again (vtopo destroy does this):
#   ip netns del vt8de-c2
#   ip netns del vt8de-c1
#   ip link del vt8de-mv
