"""The iperf3 runner against plain iperf3 on the same veth path. Prints figures; asserts no times.

The runner adds a text-mode server parsed live, a JSON client and a preflight ping; none of that
should cost throughput. Trials alternate (plain, runner, plain, ...) so drift hits both alike.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import time
from collections.abc import Iterator

import pytest

from vtopo.measure import IperfOptions, IperfRun
from vtopo.measure.ports import release_port, reserve_port
from netns_pairs import NetnsPair, netns_pair

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

TRIALS = 4
SECONDS = 3


@pytest.fixture(scope="module")
def pair() -> Iterator[NetnsPair]:
    with netns_pair("B", "10.253") as made:
        yield made


def plain_iperf3(pair: NetnsPair) -> float:
    """`ip netns exec B iperf3 -s -1` and `ip netns exec A iperf3 -c`: the receiver's bits/s."""
    port = reserve_port()
    server = subprocess.Popen(["ip", "netns", "exec", pair.netns_b, "iperf3", "-s", "-1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            listening = subprocess.run(["ip", "netns", "exec", pair.netns_b, "ss", "-ltnH", f"sport = :{port}"],
                                       capture_output=True, text=True).stdout
            if listening.strip():
                break
            time.sleep(0.01)
        out = subprocess.run(["ip", "netns", "exec", pair.netns_a, "iperf3", "-c", pair.address_b, "-p", str(port),
                              "-t", str(SECONDS), "-J"], capture_output=True, text=True, check=True).stdout
        return float(json.loads(out)["end"]["sum_received"]["bits_per_second"])
    finally:
        server.wait(10)
        release_port(port)


def runner(pair: NetnsPair) -> float:
    run = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=SECONDS))
    run.run()
    assert run.result.status == "ok"
    assert run.result.forward is not None
    return run.result.forward.received.bits_per_second


def test_runner_against_plain_iperf3(pair: NetnsPair) -> None:
    plain: list[float] = []
    ours: list[float] = []
    for _ in range(TRIALS):
        plain.append(plain_iperf3(pair))
        ours.append(runner(pair))
    p, o = statistics.mean(plain), statistics.mean(ours)
    print(f"\nplain iperf3: mean {p / 1e9:.2f} Gb/s  (trials {', '.join(f'{x / 1e9:.2f}' for x in plain)}; "
          f"stdev {statistics.stdev(plain) / 1e9:.2f})")
    print(f"vtopo runner: mean {o / 1e9:.2f} Gb/s  (trials {', '.join(f'{x / 1e9:.2f}' for x in ours)}; "
          f"stdev {statistics.stdev(ours) / 1e9:.2f})")
    print(f"runner / plain = {o / p:.3f} on means, {statistics.median(ours) / statistics.median(plain):.3f} on "
          f"medians  (target within 3%; veth throughput on a shared machine varies more than that between trials)")
    assert pair.pids() == set()
