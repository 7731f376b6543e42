"""The deployed lab the designer measures, checks and captures on, found the way its user may use it: through the
agent. The host layer is imported here, so that the designer runs without it."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtopo.deployed import DeployedLab


class LabUnavailable(Exception):
    """The lab cannot be used from the designer: it is not deployed, it is another user's, or the host layer is not
    installed."""


def deployed_lab(lab: str, action: str) -> DeployedLab:
    """The deployed lab named `lab`, to `action` it ("measure", "check"); LabUnavailable says why not."""
    try:
        from vtopo.client.agent_client import AgentRefused, AgentUnavailable, deployed_for
        from vtopo.deployed import NotDeployed
    except ImportError as error:
        raise LabUnavailable(f"this needs vtopo's host layer (vtopo.deployed): {error}") from error
    try:
        return deployed_for(lab, action)
    except (NotDeployed, AgentRefused, AgentUnavailable) as error:
        raise LabUnavailable(str(error)) from error
    except OSError as error:
        raise LabUnavailable(f"cannot read how lab {lab} is deployed: {error}") from error
