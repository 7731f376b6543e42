"""Where a node's mount namespace is kept: the maker binds its file in the lab's namespaces directory, from the mount
namespace the maker runs in, which may be one of its own (a simulated host's agent); the nodes made as their
operations come and those made ahead of them alike, and the nodes from images, whose mount namespace runc makes."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from image_labs import TOOLBOX, own_images
from vtopo.model import io
from vtopo.model.topology import Node, Topology
from wiring import wire

pytestmark = pytest.mark.privileged

# The kernel hands out namespace ids in per-CPU batches. The keeper's mount namespace is made on the CPU whose batch
# is highest, the nodes' on the lowest: without care, each node's id is below the keeper's, and the kernel refuses to
# bind its file there (EINVAL).
ID_ON_THIS_CPU = "from vtopo.host import syscalls; print(syscalls.mount_namespace_id('/proc/self/ns/mnt'))"
KEEPER_OF_ITS_OWN = textwrap.dedent("""
    import os, subprocess, sys
    os.sched_setaffinity(0, {int(sys.argv[2])})
    from vtopo.host import syscalls
    from vtopo.host.namespace_maker import NamespaceMaker, Node, release_directory, remove, remove_lab_directory
    from vtopo.host.netns import delete_netns
    from vtopo.ops import NETNS_DIR
    syscalls.mount("tmpfs", NETNS_DIR, "tmpfs", 0)
    directory, hosts = sys.argv[1] + "/ns/vtkeep", sys.argv[1] + "/hosts"
    open(hosts, "w").write("127.0.0.1 localhost\\n")
    maker = NamespaceMaker.in_initial(directory, "vtopo:vtkeep")
    nodes = {f"vtkeep-n{index}": Node(f"n{index}", hosts) for index in range(12)}
    maker.expect(list(nodes.items()))  # the first nodes made as their operations come, the others ahead of them
    kept = []
    try:
        for name, node in nodes.items():
            os.close(maker.network_namespace(name))
            files = [f"{directory}/{name}.mnt", f"{directory}/{name}.uts"]
            maker.isolate(name, node, *files)
            kept.append((name, files))
        print("kept", len(kept))
        print(subprocess.run(["ip", "-n", kept[-1][0], "-o", "link", "show", "lo"], capture_output=True, text=True,
                             check=True).stdout)
    finally:
        maker.close()
        for _, files in kept[:6]:  # one by one, as a node taken away from a running lab goes
            remove(files)
        remove_lab_directory(directory)  # the others with their directory, as a whole lab goes
        for name, _ in kept:
            delete_netns(name)
        release_directory(sys.argv[1] + "/ns")
""")


# root's own vtopo deploying a lab of image nodes from there: runc, which the keeper starts, makes each one's mount
# namespace on the CPU the keeper runs on unless told otherwise
DEPLOYER_OF_ITS_OWN = textwrap.dedent("""
    import os, subprocess, sys
    os.sched_setaffinity(0, {int(sys.argv[2])})
    def vtopo(*args):
        done = subprocess.run([sys.executable, "-m", "vtopo", *args], capture_output=True, text=True)
        print(args[0], done.returncode, " ".join((done.stdout + done.stderr).split()))
    vtopo("deploy", sys.argv[1])
    vtopo("exec", "vtkeep", "t0", "--", "ping", "-c1", "-W2", "10.0.0.2")
    vtopo("destroy", "vtkeep")
""")


def keeper_and_nodes_cpus() -> tuple[int, int]:
    """The CPU whose batch of namespace ids is highest, where the keeper's mount namespace is made, and the lowest,
    where it runs."""
    ids = {cpu: int(subprocess.run(["taskset", "-c", str(cpu), "unshare", "--mount", sys.executable, "-c",
                                    ID_ON_THIS_CPU], capture_output=True, text=True, check=True).stdout)
           for cpu in sorted(os.sched_getaffinity(0))}
    if len(ids) < 2:
        pytest.skip("one CPU: every namespace's id comes from the same batch")
    return max(ids, key=ids.__getitem__), min(ids, key=ids.__getitem__)


def test_a_maker_in_a_mount_namespace_of_its_own_keeps_every_node(tmp_path) -> None:
    highest, lowest = keeper_and_nodes_cpus()
    done = subprocess.run(["taskset", "-c", str(highest), "unshare", "--mount", "--propagation", "private",
                           sys.executable, "-c", KEEPER_OF_ITS_OWN, str(tmp_path), str(lowest)],
                          capture_output=True, text=True, timeout=60)
    kept, lo = done.stdout.split("\n", 1)
    assert kept == "kept 12", done.stderr
    assert "<LOOPBACK,UP," in lo and "alias vtopo:vtkeep" in lo  # the lab's tag, by which cleanup finds it


def test_image_nodes_deployed_from_a_mount_namespace_of_its_own_are_kept(tmp_path) -> None:
    own_images()
    topology = Topology(name="vtkeep")
    for name in ("t0", "t1"):
        topology.add_node(Node(id=name, name=name, kind="container", settings={"image": TOOLBOX}))
    io.save(wire(topology, ("t0:eth0", "t1:eth0", "10.0.0.1/24", "10.0.0.2/24")), tmp_path / "vtkeep.vtopo")
    highest, lowest = keeper_and_nodes_cpus()
    done = subprocess.run(["taskset", "-c", str(highest), "unshare", "--mount", "--propagation", "private",
                           sys.executable, "-c", DEPLOYER_OF_ITS_OWN, str(tmp_path / "vtkeep.vtopo"), str(lowest)],
                          capture_output=True, text=True, timeout=180)
    said = done.stdout.splitlines()
    assert [line.split()[:2] for line in said] == [["deploy", "0"], ["exec", "0"], ["destroy", "0"]], done.stdout


NODE_THAT_CANNOT_BE_MADE = textwrap.dedent("""
    import os, sys
    from vtopo.host import syscalls
    from vtopo.host.namespace_maker import NamespaceError, NamespaceMaker, Node
    from vtopo.ops import NETNS_DIR
    syscalls.mount("tmpfs", NETNS_DIR, "tmpfs", 0)
    directory, hosts, missing = sys.argv[1] + "/ns/vtfail", sys.argv[1] + "/hosts", sys.argv[1] + "/missing"
    open(hosts, "w").write("127.0.0.1 localhost\\n")
    maker = NamespaceMaker.in_initial(directory, "vtopo:vtfail")
    try:
        os.close(maker.network_namespace("vtfail-n1"))
        maker.isolate("vtfail-n1", Node("n1", hosts, binds=((missing, "/etc/frr"),)), f"{directory}/n1.mnt",
                      f"{directory}/n1.uts")
    except NamespaceError as error:
        print(error)
    finally:
        maker.close()
""")


def test_what_the_helper_could_not_do_is_said_in_one_line_naming_the_path(tmp_path) -> None:
    """A node whose bound directory is missing: the error names the node's work, the path and what the kernel said,
    as the applier says an OSError (not Python's "[Errno 2] ...: 'PATH'"). In namespaces of the test's own."""
    done = subprocess.run(["unshare", "--mount", "--net", "--pid", "--fork", "--mount-proc", "--propagation", "private",
                           sys.executable, "-c", NODE_THAT_CANNOT_BE_MADE, str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout == f"could not make n1 a container: {tmp_path}/missing: No such file or directory (ENOENT)\n", \
        done.stdout + done.stderr


# A member's lab (uid 65534) made in namespaces of the test's own: through the socket its namespace helper hands over,
# a veth whose peer would land in the namespace this process is in (the host's, owned by the initial user namespace)
# and one within the lab's namespace; prints the errno of each.
SOCKET_OF_A_MEMBERS_LAB = textwrap.dedent("""
    import os, socket, sys
    from vtopo.host import rtnl_wire as wire, syscalls
    from vtopo.host.namespace_maker import NamespaceMaker, release_directory, remove_lab_directory
    from vtopo.host.netns import delete_netns
    from vtopo.ops import NETNS_DIR
    syscalls.mount("tmpfs", NETNS_DIR, "tmpfs", 0)
    directory = sys.argv[1] + "/ns/vtsock"
    maker = NamespaceMaker.new_user_namespace(directory + "/user", 65534, 65534, "vtopo:vtsock")

    def errno_of(rtnl, peer_placed):
        peer = wire.attribute(wire.VETH_INFO_PEER, wire.link(wire.text(wire.IFLA_IFNAME, "peer0"), *peer_placed))
        request = wire.link(wire.text(wire.IFLA_IFNAME, "eth0"), wire.link_kind("veth", peer))
        rtnl.send(wire.HEADER.pack(wire.HEADER.size + len(request), wire.RTM_NEWLINK,
                                   wire.NLM_F_REQUEST | wire.NLM_F_ACK | 0x400 | 0x200, 7, 0) + request)
        return -wire.ERRNO.unpack_from(rtnl.recv(1 << 16), wire.HEADER.size)[0]

    try:
        with socket.socket(fileno=maker.network_namespace("vtsock-n1")) as rtnl:
            here = os.open("/proc/self/ns/net", os.O_RDONLY)
            print("into this namespace", errno_of(rtnl, [wire.u32(wire.IFLA_NET_NS_FD, here)]))
            print("within the lab", errno_of(rtnl, []))
    finally:
        maker.close()
        delete_netns("vtsock-n1")
        remove_lab_directory(directory)
        release_directory(sys.argv[1] + "/ns")
""")


def test_the_socket_a_members_helper_hands_over_reaches_only_the_members_lab(tmp_path) -> None:
    """The agent asks the kernel for what it changes inside a member's lab through the socket the lab's namespace
    helper opened there: the kernel judges each request by that opener, root of the lab's user namespace, whose powers
    stop at the lab. A veth whose end would be placed in a namespace of the initial user namespace is refused (EPERM,
    as root's own socket would not be), one within the lab is made."""
    done = subprocess.run(["unshare", "--mount", "--net", "--pid", "--fork", "--mount-proc", "--propagation", "private",
                           sys.executable, "-c", SOCKET_OF_A_MEMBERS_LAB, str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == ["into this namespace 1", "within the lab 0"], done.stdout + done.stderr
