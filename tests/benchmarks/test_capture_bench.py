"""Capture overhead: iperf3 TCP on a veth while a capture runs on it, against the same veth without one, in the
same run. Trials alternate so that drift hits both alike. Prints figures; asserts no times."""
from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator

import pytest

from vtopo.capture import Capture, CaptureTarget, summarize
from vtopo.measure import IperfOptions, IperfRun
from netns_pairs import NetnsPair, netns_pair

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

TRIALS = 3
SECONDS = 3
DECODE_PER_BATCH, BATCH_S = 100, 0.1  # as the Capture dock decodes for its list


@pytest.fixture(scope="module")
def pair() -> Iterator[NetnsPair]:
    with netns_pair("C", "10.252") as made:
        yield made


def iperf(pair: NetnsPair) -> float:
    run = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=SECONDS))
    run.run()
    assert run.result.status == "ok" and run.result.forward is not None
    return run.result.forward.received.bits_per_second


def captured_iperf(pair: NetnsPair) -> tuple[float, int, int]:
    """iperf3 while a capture runs on a's veth, its packets decoded for a list as the dock does."""
    capture = Capture(CaptureTarget("a", pair.netns_a[:15], pair.netns_a))
    capture.start()
    done = threading.Event()

    def drain() -> None:
        while not done.wait(BATCH_S):
            for packet in capture.take()[-DECODE_PER_BATCH:]:
                summarize(packet)

    drainer = threading.Thread(target=drain)
    drainer.start()
    try:
        bits = iperf(pair)
    finally:
        done.set()
        drainer.join()
        capture.ask_for_drops()
        time.sleep(0.2)
        capture.close()
    return bits, capture.captured, capture.kernel_drops


def test_capture_overhead_on_a_veth(pair: NetnsPair) -> None:
    plain, captured, counts = [], [], []
    for _ in range(TRIALS):
        plain.append(iperf(pair))
        bits, packets, drops = captured_iperf(pair)
        captured.append(bits)
        counts.append((packets, drops))
    base, with_capture = statistics.median(plain), statistics.median(captured)
    print(f"\niperf3 TCP on a veth, {TRIALS} trials of {SECONDS} s each, median receiver rate:")
    print(f"  without capture (baseline): {base / 1e9:.2f} Gb/s")
    print(f"  with a capture running:     {with_capture / 1e9:.2f} Gb/s   "
          f"(packets captured, dropped by the kernel per trial: {counts})")
    print(f"  ratio with/without: {with_capture / base:.2f}")
    assert with_capture > 0
