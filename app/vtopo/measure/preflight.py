"""Before a measurement: can the source reach the destination address at all?"""
from __future__ import annotations

import signal

from vtopo.measure.nodes import MeasureEndpoint, UnreachableError
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
    target = f"{address} ({destination})" if destination else address
    lowered = text.lower()
    if "network is unreachable" in lowered or "no route" in lowered:
        reason = f"{source} has no route to {target}"
    elif "destination host unreachable" in lowered:
        reason = f"{source} cannot reach {target}: host unreachable (no answer to ARP/ND)"
    elif "name or service not known" in lowered or "bad address" in lowered:
        return f"{source}: {address!r} is not a usable address"
    elif "not found" in lowered and returncode == 127:
        return f"ping is not installed in {source}"
    elif returncode < 0:
        reason = f"ping in {source} was ended by {signal.Signals(-returncode).name} before it answered for {target}"
    elif returncode == 1:
        reason = f"{source} gets no reply from {target} within {wait:g} s"
    else:
        last = text.splitlines()[-1] if text else f"exit status {returncode}"
        reason = f"{source} cannot ping {target}: {last}"
    return reason + "; check the link, addresses and routes on the path"
