"""What a deployed lab's record says, read from its JSON: the lab as deployed, the host's facts it was compiled
against, and what its owner allowed. The agent keeps the record (vtopo.host.state) and hands it to the lab's owner
(`vtopo.protocol.RecordRequest`), so both sides read it here.
"""
from __future__ import annotations

from typing import Any

from vtopo.lab_terms import HostFacts, LabOwner, Trust
from vtopo.model import io
from vtopo.model.sites import DEFAULT_VNIS, LOCAL
from vtopo.model.topology import Topology


def topology_of(deployment: dict[str, Any]) -> Topology:
    """The lab as deployed, under the prefix vtopo chose for it (the file's own prefix was at most a hint)."""
    topology = io.from_document(deployment["topology"])
    topology.prefix = deployment.get("prefix", topology.prefix)
    return topology


def facts_of(deployment: dict[str, Any]) -> HostFacts:
    """The host's facts a lab was compiled against, from its record (or the deployment the agent sent)."""
    return HostFacts(**deployment["facts"])


def consent_of(deployment: dict[str, Any]) -> Trust:
    """What the user allowed when the lab was deployed, so the running lab can be analysed again."""
    data = deployment.get("consent", {})
    uid, gid = data.get("owner", (0, 0))
    ids = data.get("user_namespace", [uid, gid] if uid else None)  # a record from before root's labs had one
    return Trust(host_devices=frozenset(data.get("host_devices", ())), images=frozenset(data.get("images", ())),
                 startup_commands=frozenset(data.get("startup_commands", ())),
                 owner=LabOwner(int(uid), int(gid), None if ids is None else (int(ids[0]), int(ids[1]))),
                 site=data.get("site", LOCAL), tunnel_vnis=tuple(data.get("tunnel_vnis", DEFAULT_VNIS)),
                 tunnel_peers=None if data.get("tunnel_peers") is None else frozenset(data["tunnel_peers"]))


def consent_to_json(consent: Trust) -> dict[str, Any]:
    """What the user allowed, as the record keeps it (`consent_of` reads it back)."""
    return {"host_devices": sorted(consent.host_devices), "images": sorted(consent.images),
            "startup_commands": sorted(consent.startup_commands), "owner": [consent.owner.uid, consent.owner.gid],
            "user_namespace": None if consent.owner.ids is None else list(consent.owner.ids),
            "site": consent.site, "tunnel_vnis": list(consent.tunnel_vnis),
            "tunnel_peers": None if consent.tunnel_peers is None else sorted(consent.tunnel_peers)}
