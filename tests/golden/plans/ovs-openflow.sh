#!/bin/sh
# vtopo plan for lab 'ovs-openflow': every object below is named vp7j7-*
set -e
LAB_TAG=vtopo:vp7j7  # the tag on every object the lab makes
#
# An Open vSwitch bridge between three containers, driven by OpenFlow rules (seed 004's form).
# Fail mode is secure, so only the rules forward: port 1 and port 3 are wired together, port 2 is cut off.
# c1 and c3 ping each other and run iperf3; c2 reaches nobody. Delete the rules in the inspector and watch.
# Without the kernel module OVS runs its userspace (netdev) datapath; vtopo then turns TX checksum offload
# off on each container's veth, or TCP would not pass.

# ---- node sw
# [1] create Open vSwitch bridge vp7j7-sw (netdev datapath)
ovs-vsctl add-br vp7j7-sw -- set Bridge vp7j7-sw datapath_type=netdev fail_mode=secure 'external_ids:vtopo-lab="vp7j7"'

# ---- node c1
# [2] create network namespace vp7j7-c1
ip netns add vp7j7-c1
ip -n vp7j7-c1 link set lo up alias "$LAB_TAG"

# ---- node c2
# [3] create network namespace vp7j7-c2
ip netns add vp7j7-c2
ip -n vp7j7-c2 link set lo up alias "$LAB_TAG"

# ---- node c3
# [4] create network namespace vp7j7-c3
ip netns add vp7j7-c3
ip -n vp7j7-c3 link set lo up alias "$LAB_TAG"

# ---- link c1:eth0-sw:p1
# [5] create veth pair vp7j7-sw-p1 <-> eth0 (after 2)
ip link add vp7j7-sw-p1 type veth peer name eth0 netns vp7j7-c1
# [6] configure and bring up eth0 (after 5)
ip -n vp7j7-c1 link set dev eth0 up
# [7] address 10.0.2.1/24 on eth0 (after 5)
ip -n vp7j7-c1 addr add 10.0.2.1/24 dev eth0
# [8] configure and bring up vp7j7-sw-p1 (after 5)
ip link set dev vp7j7-sw-p1 alias vtopo:vp7j7 up

# ---- node sw
# [9] add port vp7j7-sw-p1 to vp7j7-sw as OpenFlow port 1 (after 1, 5)
ovs-vsctl add-port vp7j7-sw vp7j7-sw-p1 -- set Port vp7j7-sw-p1 'external_ids:vtopo-lab="vp7j7"' -- set Interface vp7j7-sw-p1 ofport_request=1 'external_ids:vtopo-lab="vp7j7"'
# [10] turn TX checksum offload off on eth0 (OVS userspace datapath) (after 5)
ip netns exec vp7j7-c1 ethtool -K eth0 tx off

# ---- link c2:eth0-sw:p2
# [11] create veth pair vp7j7-sw-p2 <-> eth0 (after 3)
ip link add vp7j7-sw-p2 type veth peer name eth0 netns vp7j7-c2
# [12] configure and bring up eth0 (after 11)
ip -n vp7j7-c2 link set dev eth0 up
# [13] address 10.0.2.2/24 on eth0 (after 11)
ip -n vp7j7-c2 addr add 10.0.2.2/24 dev eth0
# [14] configure and bring up vp7j7-sw-p2 (after 11)
ip link set dev vp7j7-sw-p2 alias vtopo:vp7j7 up

# ---- node sw
# [15] add port vp7j7-sw-p2 to vp7j7-sw as OpenFlow port 2 (after 1, 11)
ovs-vsctl add-port vp7j7-sw vp7j7-sw-p2 -- set Port vp7j7-sw-p2 'external_ids:vtopo-lab="vp7j7"' -- set Interface vp7j7-sw-p2 ofport_request=2 'external_ids:vtopo-lab="vp7j7"'
# [16] turn TX checksum offload off on eth0 (OVS userspace datapath) (after 11)
ip netns exec vp7j7-c2 ethtool -K eth0 tx off

# ---- link c3:eth0-sw:p3
# [17] create veth pair vp7j7-sw-p3 <-> eth0 (after 4)
ip link add vp7j7-sw-p3 type veth peer name eth0 netns vp7j7-c3
# [18] configure and bring up eth0 (after 17)
ip -n vp7j7-c3 link set dev eth0 up
# [19] address 10.0.2.3/24 on eth0 (after 17)
ip -n vp7j7-c3 addr add 10.0.2.3/24 dev eth0
# [20] configure and bring up vp7j7-sw-p3 (after 17)
ip link set dev vp7j7-sw-p3 alias vtopo:vp7j7 up

# ---- node sw
# [21] add port vp7j7-sw-p3 to vp7j7-sw as OpenFlow port 3 (after 1, 17)
ovs-vsctl add-port vp7j7-sw vp7j7-sw-p3 -- set Port vp7j7-sw-p3 'external_ids:vtopo-lab="vp7j7"' -- set Interface vp7j7-sw-p3 ofport_request=3 'external_ids:vtopo-lab="vp7j7"'
# [22] install OpenFlow rules on vp7j7-sw (after 1, 9, 21)
ovs-ofctl add-flows vp7j7-sw - <<'EOF'
priority=100,in_port=1,actions=output:3
priority=100,in_port=3,actions=output:1
priority=10,actions=drop
EOF
# [23] turn TX checksum offload off on eth0 (OVS userspace datapath) (after 17)
ip netns exec vp7j7-c3 ethtool -K eth0 tx off

# ---- to tear it all down again (vtopo destroy does this):
#   ip netns del vp7j7-c3
#   ip netns del vp7j7-c2
#   ip netns del vp7j7-c1
#   ovs-vsctl --if-exists del-br vp7j7-sw
