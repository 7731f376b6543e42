"""The base of every error the host layer raises about the host itself, so a front end catches them in one place."""
from __future__ import annotations


class HostError(Exception):
    """Something on the host failed: a tool, a daemon, a kernel call. The message names it."""
