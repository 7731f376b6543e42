"""`vtopo status LAB --watch`: the lab's state, then each change as the agent hears of it, one line each; for a lab
spread over sites, as each site's agent hears of its part (vtopo.sites.spread_following)."""
from __future__ import annotations

import time

from vtopo import protocol as p
from vtopo.client.agent_client import AgentClient
from vtopo.reports import LabStatus, PartState

EXIT_OK = 0


def watch_status(agent: AgentClient, lab: str) -> int:
    """Print the lab's state and its changes until Ctrl-C (0) or the agent goes away (1)."""
    from vtopo.sites.spread_following import SpreadFollowing

    following = SpreadFollowing(agent, lab)
    shown: LabStatus | None = None
    try:
        for message in following:
            if isinstance(message, p.LabState):
                _whole(lab, message.status)
                shown = message.status
            elif isinstance(message, p.PartsChanged) and shown is not None:
                if message.state != shown.state:
                    _said(f"lab {lab}: {message.state}")
                for kind, parts in (("node", message.nodes), ("link", message.links)):
                    for part in parts:
                        _said(_line(kind, part))
                shown = shown.changed(message.state, message.nodes, message.links)
    except KeyboardInterrupt:
        following.close()
        return EXIT_OK
    print(f"vtopo status --watch: the agent closed the connection (it stopped?); lab {lab} is no longer followed")
    return 1


def _whole(lab: str, status: LabStatus | None) -> None:
    if status is None:
        _said(f"lab {lab}: not deployed")
        return
    _said(f"lab {status.lab}: {status.state}")
    for kind, parts in (("node", status.nodes), ("link", status.links)):
        for part in parts:
            print(f"  {_line(kind, part)}", flush=True)


def _line(kind: str, part: PartState) -> str:
    return f"{kind} {part.name:<24} {part.state}{part.detail}"


def _said(line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')}  {line}", flush=True)
