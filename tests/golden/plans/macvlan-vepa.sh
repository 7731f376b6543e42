#!/bin/sh
# vtopo plan for lab 'macvlan-vepa': every object below is named v59c2-*
set -e
LAB_TAG=vtopo:v59c2  # the tag on every object the lab makes
#
# Containers on macvlan, vepa mode (seed 001, case b).
# In VEPA mode (the kernel's default) siblings cannot talk directly: every frame leaves through the
# lower device and the switch beyond must reflect it back (hairpin). vtopo's own lower device ends in a
# small bridge with hairpin on, so here the containers do reach each other, the long way round.

# ---- node mv
# [1] create veth pair v59c2-mv <-> v59c2-mv-up
ip link add v59c2-mv type veth peer name v59c2-mv-up
# [2] configure and bring up v59c2-mv (after 1)
ip link set dev v59c2-mv alias vtopo:v59c2 up
# [3] configure and bring up v59c2-mv-up (after 1)
ip link set dev v59c2-mv-up alias vtopo:v59c2 up
# [4] create Linux bridge v59c2-mv-sw
ip link add v59c2-mv-sw type bridge stp_state 0 forward_delay 0 ageing_time 30000
# [5] configure and bring up v59c2-mv-sw (after 4)
ip link set dev v59c2-mv-sw alias vtopo:v59c2 up
# [6] attach v59c2-mv-up to bridge v59c2-mv-sw (after 1, 4)
ip link set v59c2-mv-up master v59c2-mv-sw
bridge link set dev v59c2-mv-up hairpin on

# ---- node c1
# [7] create network namespace v59c2-c1
ip netns add v59c2-c1
ip -n v59c2-c1 link set lo up alias "$LAB_TAG"

# ---- node c2
# [8] create network namespace v59c2-c2
ip netns add v59c2-c2
ip -n v59c2-c2 link set lo up alias "$LAB_TAG"

# ---- link c1:eth0-mv:c1
# [9] create macvlan eth0 on v59c2-mv, mode vepa (after 1, 7)
ip link add link v59c2-mv name eth0 netns v59c2-c1 type macvlan mode vepa
# [10] configure and bring up eth0 (after 9)
ip -n v59c2-c1 link set dev eth0 up
# [11] address 10.0.1.1/24 on eth0 (after 9)
ip -n v59c2-c1 addr add 10.0.1.1/24 dev eth0

# ---- link c2:eth0-mv:c2
# [12] create macvlan eth0 on v59c2-mv, mode vepa (after 1, 8)
ip link add link v59c2-mv name eth0 netns v59c2-c2 type macvlan mode vepa
# [13] configure and bring up eth0 (after 12)
ip -n v59c2-c2 link set dev eth0 up
# [14] address 10.0.1.2/24 on eth0 (after 12)
ip -n v59c2-c2 addr add 10.0.1.2/24 dev eth0

# ---- to tear it all down again (vtopo destroy does this):
#   ip netns del v59c2-c2
#   ip netns del v59c2-c1
#   ip link del v59c2-mv-sw
#   ip link del v59c2-mv
