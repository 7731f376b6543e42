from __future__ import annotations

from collections.abc import Iterator

import pytest

from netns_pairs import NetnsPair, netns_pair


@pytest.fixture(scope="module")
def pair() -> Iterator[NetnsPair]:
    """Two namespaces joined by a veth (a: 10.251.0.1, b: 10.251.0.2); removed afterwards."""
    with netns_pair("m", "10.251") as made:
        yield made
    # Nothing may outlive the module: the namespaces are gone and so is everything in them.
