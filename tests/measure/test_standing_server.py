"""A node vtopo cannot run commands in (a VM) is measured through the iperf3 server that always runs
there. Here b plays the VM: its `iperf3 -s` is started by the test, and b's endpoint has no `in_node`."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from vtopo.measure import MeasureEndpoint, IperfOptions, IperfRun, MeasureError
from netns_pairs import NetnsPair, samples_with_arrivals, standing_iperf3_server

pytestmark = pytest.mark.privileged

PORT = 5299


@pytest.fixture(scope="module")
def vm_like(pair: NetnsPair) -> Iterator[MeasureEndpoint]:
    with standing_iperf3_server(pair, PORT) as endpoint:
        yield endpoint


def test_tcp_to_a_standing_server_is_live_and_summed(pair: NetnsPair, vm_like: MeasureEndpoint) -> None:
    run = IperfRun(pair.a, vm_like, pair.address_b, IperfOptions(duration_s=3))
    samples, arrivals = samples_with_arrivals(run)
    result = run.result
    assert result.status == "ok", result.error
    assert len(samples) == 3 and arrivals[0] < arrivals[-1] - 1.0
    assert {s.direction for s in samples} == {"forward"}
    assert all(s.retransmits is not None and s.cwnd_bytes for s in samples), "the client is the sender"
    assert result.forward is not None and result.reverse is None
    mean = result.mean_bits_per_second
    assert mean is not None and 1e6 < mean < 1e12
    assert abs(sum(s.bits_per_second for s in samples) / 3 - mean) / mean < 0.25
    assert result.forward.sent.retransmits is not None
    assert result.cpu_host is not None and result.cpu_remote is not None
    assert result.iperf_version.startswith("iperf 3")
    assert result.port == PORT


def test_udp_to_a_standing_server_reports_loss(pair: NetnsPair, vm_like: MeasureEndpoint) -> None:
    run = IperfRun(pair.a, vm_like, pair.address_b, IperfOptions(protocol="udp", duration_s=2, bitrate="50M"))
    list(run)
    result = run.result
    assert result.status == "ok", result.error
    assert result.forward is not None
    received = result.forward.received
    assert received.lost_percent is not None and received.packets and received.jitter_ms is not None
    assert 30e6 < received.bits_per_second < 70e6


def test_bidirectional_to_a_standing_server(pair: NetnsPair, vm_like: MeasureEndpoint) -> None:
    run = IperfRun(pair.a, vm_like, pair.address_b, IperfOptions(duration_s=2, bidir=True))
    samples = list(run)
    result = run.result
    assert result.status == "ok", result.error
    assert {s.direction for s in samples} == {"forward", "reverse"}
    assert result.forward is not None and result.reverse is not None


def test_a_node_that_cannot_run_commands_cannot_be_the_client(pair: NetnsPair, vm_like: MeasureEndpoint) -> None:
    run = IperfRun(vm_like, pair.a, pair.address_a, IperfOptions(duration_s=1))
    with pytest.raises(MeasureError, match="b is a VM.*cannot run the iperf3 client"):
        list(run)
    assert run.result.status == "failed"


def test_a_vm_without_a_server_gets_a_clear_message(pair: NetnsPair) -> None:
    mute = MeasureEndpoint("b", None, {}, "b is a VM: vtopo has no shell inside it")
    with pytest.raises(MeasureError, match="b is a VM.*no iperf3 server"):
        list(IperfRun(pair.a, mute, pair.address_b, IperfOptions(duration_s=1)))
