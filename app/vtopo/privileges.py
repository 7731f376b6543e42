"""The words that run a program with less than vtopo's own: fewer privileges (setpriv), as a node's daemons' user, as
a member, as nobody; and in an image node's container's cgroup, under the node's limits (cgexec). The ops, the kinds'
contract, the host layer and the command line share them."""
from __future__ import annotations

import os
import pwd

CONTAINER_PREFIX = "vtopo-"
CGROUP_PARENT = os.environ.get("VTOPO_CGROUP_PARENT", "vtopo")  # a simulated host's is its own (scripts/sim-host.sh)
LIMITED_CONTROLLERS = "memory,cpu,pids"  # those of the node's limits (RunImage's memory_mb and cpus, and its pids)


def drop_privileges(user: str, groups: tuple[str, ...], group: str = "") -> list[str]:
    """setpriv's words that run what follows as `user` (names or ids) and `group` (by default the group named like the
    user), in `groups` alone, with no capability left and none to gain."""
    return ["setpriv", f"--reuid={user}", f"--regid={group or user}",
            f"--groups={','.join(groups)}" if groups else "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def as_account(uid: int) -> list[str]:
    """The words that run what follows as the account `uid` with the groups it logs in with, and nothing more (see
    drop_privileges): a command that reads what that user gave with that user's rights alone."""
    account = pwd.getpwuid(uid)
    groups = tuple(str(gid) for gid in os.getgrouplist(account.pw_name, account.pw_gid))
    return drop_privileges(str(uid), groups, str(account.pw_gid))


def container_name(netns: str) -> str:
    """The image node's container in network namespace `netns`: its name to runc, and its cgroup's under
    CGROUP_PARENT."""
    return f"{CONTAINER_PREFIX}{netns}"


def in_containers_cgroup(netns: str) -> list[str]:
    """The words that run what follows in the cgroup of the image node in network namespace `netns`, under the
    node's limits like the image's own processes: a shell or a measurement started inside counts in its memory, CPU
    and number of processes."""
    return ["cgexec", "-g", f"{LIMITED_CONTROLLERS}:/{CGROUP_PARENT}/{container_name(netns)}"]
