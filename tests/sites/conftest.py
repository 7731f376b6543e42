"""The real host and two simulated hosts (b and c) for one test module, with an agent of the tests' own on the real
host, and a check that each test leaves nothing on any of them."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from residue import snapshot
from sites.simulated import Sites, running_sites


@pytest.fixture(scope="module")
def sites() -> Iterator[Sites]:
    with running_sites() as running:
        yield running


@pytest.fixture
def spread(sites: Sites) -> Iterator[Sites]:
    """The sites for one test, which must leave nothing behind on any of them."""
    before = snapshot()
    yield sites
    assert sites.residue() == {}, "a simulated host keeps something of a lab"
    assert snapshot() - before == {}, "the real host keeps something of a lab"
