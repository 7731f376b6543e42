"""The canvas shows the states `vtopo status` reports, each in its own colour."""
from __future__ import annotations

from vtopo.gui.canvas.states import NodeState


def test_status_words_map_to_their_own_states_and_colours():
    assert NodeState.parse("degraded") is NodeState.DEGRADED
    assert NodeState.parse("incomplete") is NodeState.INCOMPLETE
    assert NodeState.parse("running") is NodeState.RUNNING
    assert len({state.color.name() for state in NodeState}) == len(NodeState)
