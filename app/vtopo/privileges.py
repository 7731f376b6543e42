"""The words that run a program with fewer privileges than vtopo's own (setpriv): as a node's daemons' user, as a
member, as nobody. The ops, the host layer and the command line share them."""
from __future__ import annotations

import os
import pwd


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
