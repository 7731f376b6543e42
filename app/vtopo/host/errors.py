"""The base of every error the host layer raises about the host itself, so a front end catches them in one place."""
from __future__ import annotations

import errno
import os


class HostError(Exception):
    """Something on the host failed: a tool, a daemon, a kernel call. The message names it."""


def os_error_line(error: OSError) -> str:
    """An OSError in one line: the call or the path it names, what the kernel said and its code ("mount A on B:
    Invalid argument (EINVAL)"), where Python says "[Errno 22] Invalid argument: 'mount A on B'"."""
    if error.errno is None:
        return str(error)
    return (f"{error.filename}: " if error.filename else "") + \
        f"{os.strerror(error.errno)} ({errno.errorcode.get(error.errno, error.errno)})"
