"""The attacks a member makes from inside their own node, shared by the tests that make them on this host and on
another site: what the kernel must refuse, and how to tell whose a namespace is."""
from __future__ import annotations

import errno
import fcntl
import os

NS_GET_USERNS = 0xB701
REFUSED = (errno.EPERM, errno.EACCES)  # what the kernel answers a request on a namespace the caller has no power over
INIT_MODULE = ("import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
               "print(libc.syscall(175, None, 0, b''), ctypes.get_errno())")  # init_module: prints -1 and errno


def owning_userns(netns: str) -> tuple[int, int]:
    """The user namespace that owns the network namespace at `netns`, as (device, inode)."""
    with open(netns, "rb") as opened:
        userns = fcntl.ioctl(opened.fileno(), NS_GET_USERNS)
    try:
        owner = os.fstat(userns)
    finally:
        os.close(userns)
    return owner.st_dev, owner.st_ino


# Run in a node with the target namespace as stdin and the target's ifindex as argument: names that namespace
# (RTM_NEWNSID), then deletes the target through IFLA_TARGET_NETNSID and hangs a macvlan on it through
# IFLA_LINK_NETNSID. Prints each request's error number as JSON (0: done).
RAW_NETLINK = r"""
import json, socket, struct, sys

RTM_NEWLINK, RTM_DELLINK, RTM_NEWNSID, RTM_GETNSID = 16, 17, 88, 90
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 1, 4, 0x200, 0x400
IFLA_IFNAME, IFLA_LINK, IFLA_LINKINFO, IFLA_LINK_NETNSID, IFLA_TARGET_NETNSID, IFLA_INFO_KIND = 3, 5, 18, 37, 46, 1
NETNSA_NSID, NETNSA_FD = 1, 3

def attribute(number, payload):
    length = 4 + len(payload)
    return struct.pack("=HH", length, number) + payload + bytes(-length % 4)

def exchange(kind, flags, body):
    rtnl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    rtnl.send(struct.pack("=IHHII", 16 + len(body), kind, NLM_F_REQUEST | flags, 1, 0) + body)
    reply = rtnl.recv(65536)
    rtnl.close()
    return reply

def ask(kind, flags, body):
    return -struct.unpack_from("=i", exchange(kind, NLM_F_ACK | flags, body), 16)[0]  # the ack's error, or 0

def link(index, *attributes):
    return struct.pack("=BxHiII", socket.AF_UNSPEC, 0, index, 0, 0) + b"".join(attributes)

target_index = int(sys.argv[1])
target = struct.pack("=Bxxx", socket.AF_UNSPEC) + attribute(NETNSA_FD, struct.pack("=I", 0))
outcome = {"newnsid": ask(RTM_NEWNSID, NLM_F_CREATE, target + attribute(NETNSA_NSID, struct.pack("=I", 77)))}
nsid = exchange(RTM_GETNSID, 0, target)[16 + 4 + 4:16 + 4 + 8]  # after the header, rtgenmsg: NETNSA_NSID's value
outcome.update({
    "dellink": ask(RTM_DELLINK, 0, link(target_index, attribute(IFLA_TARGET_NETNSID, nsid))),
    "macvlan": ask(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, link(
        0, attribute(IFLA_IFNAME, b"vtsec-mv\0"), attribute(IFLA_LINK, struct.pack("=I", target_index)),
        attribute(IFLA_LINK_NETNSID, nsid), attribute(IFLA_LINKINFO, attribute(IFLA_INFO_KIND, b"macvlan\0")))),
})
print(json.dumps(outcome))
"""
