"""The terms a lab is compiled and deployed on, which every layer reads: the host's facts (HostFacts), what its
owner allowed (Trust, LabOwner) and the names its objects get on the host (LabNames)."""
from __future__ import annotations

import grp
import os
import pwd
from dataclasses import dataclass

from vtopo.model.rules import lab_tag, stable_digest
from vtopo.model.sites import DEFAULT_VNIS, LOCAL

MAX_INTERFACE_NAME = 15  # IFNAMSIZ - 1
VM_BACKENDS = ("", "auto", "libvirt", "qemu")  # a lab's vm_backend; "" is auto
KVM_GROUP = "kvm"  # /dev/kvm's group where udev made it; libvirt's QEMU user and vtopo's QEMU run in it
NFT_TABLE_PREFIX = "vtopo-"  # the nftables tables of labs are named vtopo-<prefix>: cleanup finds them by it
CONTAINER_PREFIX = "vtopo-"  # a node from an image: its container and cgroup
CGROUP_PARENT = os.environ.get("VTOPO_CGROUP_PARENT", "vtopo")  # a simulated host's is its own (scripts/sim-host.sh)
LIMITED_CONTROLLERS = "memory,cpu,pids"  # those of the node's limits (its memory_mb and cpus, and its pids)


def container_name(netns: str) -> str:
    """The image node's container in network namespace `netns`: its name to runc, and its cgroup's under
    CGROUP_PARENT."""
    return f"{CONTAINER_PREFIX}{netns}"


def in_containers_cgroup(netns: str) -> list[str]:
    """The words that run what follows in the cgroup of the image node in network namespace `netns`, under the
    node's limits like the image's own processes: a shell or a measurement started inside counts in its memory, CPU
    and number of processes."""
    return ["cgexec", "-g", f"{LIMITED_CONTROLLERS}:/{CGROUP_PARENT}/{container_name(netns)}"]


def in_group(uid: int, group: str) -> bool:
    """Whether the account `uid` is in `group` (as its own group or another): false where either does not exist."""
    try:
        account, gid = pwd.getpwuid(uid), grp.getgrnam(group).gr_gid
    except KeyError:
        return False
    return gid in os.getgrouplist(account.pw_name, account.pw_gid)


@dataclass(frozen=True)
class HostFacts:
    """What the host offers. Gathered by the host layer before compiling, so the compiler stays pure."""

    ovs_datapath: str = "netdev"  # what an OVS datapath of "auto" becomes
    vhost_net: bool = False
    ovs_dpdk: bool = False
    ovs_tso_off: bool = False  # a running Open vSwitch (not vtopo's: it turns it on) has userspace TSO off
    netem: bool = False  # the kernel has sch_netem (delay, jitter, loss); tbf (rate) is always assumed
    bridge_vlans: bool = False  # the kernel's bridges filter VLANs (CONFIG_BRIDGE_VLAN_FILTERING, which needs 802.1Q)
    vlan_devices: bool = False  # the kernel makes 802.1Q VLAN devices (8021q: CONFIG_VLAN_8021Q)
    accel: str = "tcg"
    guest_dir: str = "/var/cache/vtopo/guest"
    frr_dir: str = "/usr/lib/frr"
    routing_suite: str = "frr"  # "frr", or "quagga" where only Quagga is installed (older configuration syntax)
    frr_user: str = "frr"  # the user the routing daemons drop to
    run_root: str = "/run/vtopo"
    libvirt: bool = False  # libvirtd answers at libvirt_uri
    libvirt_uri: str = "qemu:///system"  # the user's choice (VTOPO_LIBVIRT_URI), never the lab file's
    images_dir: str = "/var/lib/vtopo/images"  # disk images any lab may boot, named without a path
    qemu_user: str = "vtopo-qemu"  # the unprivileged user vtopo starts QEMU as, with its devices already open
    memory_mb: int = 0  # the host's memory, 0 when unknown
    cpus: int = 0
    probed: bool = False
    """The facts come from probing this host (validate, deploy), not defaults (--offline, the designer's checks):
    only then may a check say what the host lacks."""
    oci_images: tuple[tuple[str, str, int], ...] = ()
    """The OCI images the lab names that its owner may run here, each (reference, manifest digest, the uid whose
    store holds it, 0 for the shared store): what the deploy resolved, kept in the lab's record."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "oci_images", tuple(tuple(image) for image in self.oci_images))  # from JSON lists

    def oci_image(self, reference: str) -> tuple[str, int] | None:
        """(digest, store's uid) of the image `reference` names, where the deploy found it."""
        wanted = image_reference(reference)
        return next(((digest, owner) for name, digest, owner in self.oci_images if name == wanted), None)


OWN_IMAGES = ("vtopo/toolbox", "vtopo/frr")  # the images `vtopo image build NAME` makes (vtopo.host.image_build)


def image_reference(reference: str) -> str:
    """An OCI image reference in its familiar form, with its tag: `toolbox` is `toolbox:latest`, as a registry would
    read it, and `docker.io/library/alpine` (as skopeo writes a docker archive's) is `alpine:latest`."""
    for registry in ("docker.io/library/", "docker.io/"):
        reference = reference.removeprefix(registry)
    last = reference.rsplit("/", 1)[-1]
    return reference if ":" in last or "@" in last else f"{reference}:latest"


LAB_USER = "vtopo-lab"  # who root's labs are on the host: root of their user namespaces, the way a member is of theirs


@dataclass(frozen=True)
class LabOwner:
    """Who deployed the lab (`uid`, `gid`), and who its nodes are on the host. A lab lives in a user namespace of its
    own, which maps `ids` to root inside: a member's own ids, so they are root of their nodes and of nothing else; for
    root's labs, those of LAB_USER. `ids` is None for a lab in the host's own identities (root's, where the agent's
    policy says so, or compiled with no host)."""

    uid: int = 0
    gid: int = 0
    ids: tuple[int, int] | None = None

    @classmethod
    def member(cls, uid: int, gid: int) -> LabOwner:
        return cls(uid, gid, (uid, gid))

    @property
    def confined(self) -> bool:
        """A member's lab: nothing of it may run on the host itself."""
        return self.uid != 0


@dataclass(frozen=True)
class Trust:
    """What a lab may reach outside its own objects, as inputs to the compiler (a lab file can never give them).

    The consent comes from the user at deploy time, on the command line or in a designer dialog. The host's own
    interfaces and networks are probed by the host layer when it deploys; None when planning without a host.
    """

    host_devices: frozenset[str] = frozenset()  # host interfaces the user lets the lab hang devices on
    images: frozenset[str] = frozenset()  # absolute paths of disk images the user named or picked
    startup_commands: frozenset[str] = frozenset()  # nodes whose startup commands the user lets run
    host_interfaces: frozenset[str] | None = None
    host_networks: tuple[str, ...] = ()  # the host's own addresses and routes (CIDR), none of them a lab's
    host_addresses: frozenset[str] = frozenset()  # every address the host's namespace has, labs' included
    owner: LabOwner = LabOwner()
    site: str = LOCAL  # of a lab spread over sites, the site whose part this host deploys
    tunnel_vnis: tuple[int, int] = DEFAULT_VNIS  # the VNIs its tunnels take (the agent's configuration allows them)
    tunnel_peers: frozenset[str] | None = None  # the underlay addresses it may tunnel to; None: any (root's labs)


PREFIX_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
DEFAULT_PREFIX_LENGTH = 5
"""The longest device vtopo names is a host end, ``<prefix>-<node>-<port>`` (``v2k9q-host-eth0``): five characters
of prefix leave ten to the node and its port, as the shipped labs need. Within that, the prefix holds as much of the
lab name's hash as it can: "v" and four base-36 digits, 1,679,616 values (three hex digits had 4,096)."""


def default_prefix(lab_name: str, attempt: int = 0) -> str:
    """The prefix of a lab named `lab_name`; the next `attempt` when a deployed lab holds the one before."""
    value = int(stable_digest(lab_name if not attempt else f"{lab_name}\n{attempt}"), 16)
    digits = ""
    for _ in range(DEFAULT_PREFIX_LENGTH - 1):
        value, digit = divmod(value, len(PREFIX_ALPHABET))
        digits += PREFIX_ALPHABET[digit]
    return "v" + digits


def namespaces_root(run_root: str) -> str:
    """Where each lab's namespaces directory lies (LabNames.namespaces_dir); a private tmpfs, so none of them
    propagates into a node."""
    return f"{run_root}/ns"


@dataclass(frozen=True)
class LabNames:
    """Every name a lab puts on the host starts with its prefix, so destroy and cleanup find only its own."""

    prefix: str
    run_root: str = "/run/vtopo"

    @property
    def tag(self) -> str:
        return lab_tag(self.prefix)

    @property
    def nft_table(self) -> str:
        return f"{NFT_TABLE_PREFIX}{self.prefix}"

    @property
    def device_prefix(self) -> str:
        """What the name of every interface the lab makes in the host's namespace starts with."""
        return f"{self.prefix}-"

    @property
    def run_dir(self) -> str:
        return f"{self.run_root}/{self.prefix}"

    def node_dir(self, node_name: str) -> str:
        return f"{self.run_dir}/{node_name}"

    @property
    def hosts_file(self) -> str:
        """The lab's /etc/hosts: every node's name with its addresses, copied into each node."""
        return f"{self.run_dir}/hosts"

    @property
    def namespaces_dir(self) -> str:
        """Where the lab's user namespace and its nodes' mount and UTS namespaces are kept, as bind mounts of their
        files (as /run/netns keeps network namespaces): a private tmpfs of the lab's own, root's alone, which a
        teardown detaches with every file in it in one unmount."""
        return f"{namespaces_root(self.run_root)}/{self.prefix}"

    @property
    def user_namespace(self) -> str:
        return f"{self.namespaces_dir}/user"

    def node_namespace(self, node_name: str, kind: str) -> str:
        """The file of a node's `kind` namespace ("mnt" or "uts"; "pid" for a node from an image)."""
        return f"{self.namespaces_dir}/{node_name}.{kind}"

    def netns(self, node_name: str) -> str:
        return f"{self.prefix}-{node_name}"

    def node_device(self, node_name: str) -> str:
        return f"{self.device_prefix}{node_name}"

    def host_device(self, node_name: str, suffix: str) -> str:
        return f"{self.device_prefix}{node_name}-{suffix}"

    def link_bridge(self, link_id: str) -> str:
        """The bridge of a link from a VM to another VM, a container or a router: `<prefix>--` and six hex digits of
        the link's id (no node's device has a '-' after the prefix's, since a node name starts with a letter or
        digit)."""
        return f"{self.device_prefix}-{_link_hash(link_id)}"

    def link_port(self, link_id: str) -> str:
        """The port on that bridge of the veth to the container or router: `<prefix>-_` and the same six digits."""
        return f"{self.device_prefix}_{_link_hash(link_id)}"


def _link_hash(link_id: str) -> str:
    return stable_digest(link_id)[:6]
