"""Checks made before anything is applied: privileges, binaries, and names that already exist on the host."""
from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from vtopo import ops as o
from vtopo.compile.plan import Plan
from vtopo.kinds.contract import LabContext
from vtopo.host import libvirtd, ovs
from vtopo.host import netns as namespaces
from vtopo.host.lab_needs import missing_on_host
from vtopo.model.problems import Problem, errors_in

if TYPE_CHECKING:
    from vtopo.host.netlink import Netlink

CAP_NET_ADMIN = 12
PACKAGE_OF = {"ovs-vsctl": "openvswitch-switch", "ovs-ofctl": "openvswitch-switch", "zebra": "frr", "ospfd": "frr",
              "qemu-system-x86_64": "qemu-system-x86", "ip": "iproute2", "nft": "nftables"}


class PreflightFailed(Exception):
    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def has_net_admin() -> bool:
    if os.geteuid() == 0:
        return True
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) & (1 << CAP_NET_ADMIN))
    return False


def required_binaries(plan: Plan) -> set[str]:
    needed = set()
    for op in plan.ops:
        if isinstance(op, (o.OvsAddBridge, o.OvsAddPort)):
            needed.add("ovs-vsctl")
        elif isinstance(op, o.OvsAddFlows):
            needed.add("ovs-ofctl")
        elif isinstance(op, o.ContainForwarding):
            needed.add("nft")
        elif isinstance(op, o.StartProcess):
            needed.add(op.argv[0])
            if op.netns:
                needed.add("ip")
    return needed


def _missing_binary(binary: str) -> Problem:
    name = Path(binary).name
    package = PACKAGE_OF.get(name, name)
    return Problem(f"{binary} is not installed; install it with `apt-get install {package}` (or run `make setup`)",
                   "this host")


def require_privileges() -> None:
    """PreflightFailed unless this process may deploy: checked before a lab is even recorded."""
    if not has_net_admin():
        raise PreflightFailed([Problem("deploying needs root (CAP_NET_ADMIN); run it with sudo", "this host")])


def check(plan: Plan, context: LabContext, netlink: Netlink) -> None:
    """Raise PreflightFailed listing every reason the plan cannot be applied here, before touching anything. Warnings
    (a line FRR skips) do not stop it: validation has said them, and the load says what FRR skipped."""
    require_privileges()
    problems = [_missing_binary(b) for b in sorted(required_binaries(plan))
                if (shutil.which(b) if "/" not in b else (b if os.access(b, os.X_OK) else None)) is None]
    if any(isinstance(op, o.StartDomain) for op in plan.ops) and not libvirtd.module_installed():
        problems.append(Problem(f"{libvirtd.MISSING_MODULE}; or set the lab's vm_backend to qemu", "lab",
                                "$.lab.vm_backend"))
    host_links = {link.name for link in netlink.links(None)}  # one dump: a host with other labs has thousands
    problems += _collisions(plan, host_links) + missing_on_host(plan, context, host_links) + _missing_users(plan)
    if errors_in(problems):
        raise PreflightFailed(errors_in(problems))


def _missing_users(plan: Plan) -> list[Problem]:
    """The users processes run as (QEMU's) must exist, or they could not start."""
    users = {op.user: op.owner for op in plan.ops if isinstance(op, o.StartProcess) and op.user}
    problems = []
    for user, owner in sorted(users.items()):
        try:
            pwd.getpwnam(user)
        except KeyError:
            problems.append(Problem(f"its process runs as the unprivileged user {user}, which does not exist; create it "
                                    f"with `useradd --system --no-create-home --shell /usr/sbin/nologin {user}` (or run "
                                    "`make setup`)", owner))
    return problems


def _collisions(plan: Plan, host_links: set[str]) -> list[Problem]:
    existing_netns = set(namespaces.list_netns())
    bridges = set(ovs.vsctl([["list-br"]]).split()) if any(isinstance(op, o.OvsAddBridge) for op in plan.ops) and \
        ovs.OvsService().running() else set()
    problems = []
    for op in plan.ops:
        clash = None
        if isinstance(op, o.CreateNamespace) and op.name in existing_netns:
            clash = f"a network namespace named {op.name} already exists"
        elif isinstance(op, (o.CreateBridge, o.CreateMacvtap, o.CreateTap)) and op.name in host_links:
            clash = f"an interface named {op.name} already exists on the host"
        elif isinstance(op, o.CreateVeth):
            for name, netns in ((op.name, op.netns), (op.peer, op.peer_netns)):
                if netns is None and name in host_links:
                    clash = f"an interface named {name} already exists on the host"
        elif isinstance(op, o.CreateMacvlan) and op.netns is None and op.name in host_links:
            clash = f"an interface named {op.name} already exists on the host"
        elif isinstance(op, o.OvsAddBridge) and op.name in bridges:
            clash = f"an Open vSwitch bridge named {op.name} already exists"
        elif isinstance(op, o.MakeDirectory) and Path(op.path).exists():
            clash = f"{op.path} already exists (a lab that was not cleaned up? try vtopo cleanup)"
        if clash:
            problems.append(Problem(f"{clash}; vtopo never takes over objects it did not create. Rename the node, set "
                                    "another lab prefix, or remove the object.", op.owner))
    return problems
