"""Commands run for a user who is not root: inside one node's network namespace, as that user, with the network
capabilities there and nothing else (a shell through the agent, a startup command of the user's own lab)."""
from __future__ import annotations

import pwd
from collections.abc import Sequence

from vtopo.host.netns import netns_path

NODE_CAPABILITIES = "net_admin,net_raw"  # what a user's command keeps, inside the node's namespace only


def in_namespace_as(uid: int, netns: str, argv: Sequence[str]) -> list[str]:
    """`argv` as `uid` inside network namespace `netns` (util-linux's nsenter enters it as root, setpriv drops to the
    user and keeps the two capabilities as ambient ones; no_new_privs stops a set-uid program from getting more)."""
    account = pwd.getpwuid(uid)
    capabilities = "-all," + ",".join(f"+{name}" for name in NODE_CAPABILITIES.split(","))
    return ["nsenter", f"--net={netns_path(netns)}", "--",
            "setpriv", f"--reuid={uid}", f"--regid={account.pw_gid}", "--init-groups", "--no-new-privs",
            f"--inh-caps={capabilities}", f"--ambient-caps={capabilities}", f"--bounding-set={capabilities}", "--",
            *argv]
