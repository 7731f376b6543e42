"""Before a measurement: can the source reach the destination address at all?"""
from __future__ import annotations

import signal

from vtopo.measure.nodes import MeasureEndpoint, UnreachableError, not_installed
from vtopo.measure.process import run_quick


def check_reachable(source: MeasureEndpoint, address: str, *, destination: str = "", timeout_s: float = 1.0) -> None:
    """One ping from `source` to `address`; raises `UnreachableError` with a message that says why.

    `destination` is the node that owns the address, named in the message when given.
    """
    wait = max(1, round(timeout_s))
    argv = source.argv(["ping", "-n", "-c", "1", "-W", str(wait), address])
    try:
        done = run_quick(argv)
    except OSError as e:
        raise UnreachableError(f"cannot run ping in {source.name}: {e.strerror}") from e
    if done.returncode == 0:
        return
    text = (done.stdout + done.stderr).strip()
    raise UnreachableError(describe_ping_failure(source.name, address, destination, text, done.returncode, wait))


def describe_ping_failure(source: str, address: str, destination: str, text: str, returncode: int, wait: float) -> str:
    """Why a ping from `source` got no reply, from its output, as one sentence for the user."""
    return _unusable(source, address, text) or \
        f"{ping_failure(source, address, destination, text, returncode, wait)}; check the link, addresses and routes " \
        "on the path"


def ping_failure(source: str, address: str, destination: str, text: str, returncode: int, wait: float) -> str:
    """What ping's output says of a ping that got no reply, without advice."""
    if unusable := _unusable(source, address, text):
        return unusable
    target = f"{address} ({destination})" if destination else address
    lowered = text.lower()
    if "network is unreachable" in lowered or "no route" in lowered:
        return f"{source} has no route to {target}"
    if "destination host unreachable" in lowered or "address unreachable" in lowered:
        return f"{source} cannot reach {target}: host unreachable (no answer to ARP/ND)"
    if returncode < 0:
        return f"ping in {source} was ended by {signal.Signals(-returncode).name} before it answered for {target}"
    if returncode == 1:
        return f"{source} gets no reply from {target} within {wait:g} s"
    last = text.splitlines()[-1] if text else f"exit status {returncode}"
    return f"{source} cannot ping {target}: {last}"


def _unusable(source: str, address: str, text: str) -> str:
    """Why ping could not even try, or "": no path to look along."""
    lowered = text.lower()
    if "name or service not known" in lowered or "bad address" in lowered:
        return f"{source}: {address!r} is not a usable address"
    return not_installed(source, "ping", text)
