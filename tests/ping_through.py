"""A ping that runs through a change to a running lab, to show what the change did to traffic it should not touch."""
from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

AROUND = 5  # the replies seen before the block, and the lines after it, so that the ping spans the whole change


@contextmanager
def pinging(in_node: list[str], address: str) -> Iterator[list[int]]:
    """`address` pinged every 50 ms from a node (`in_node`: the command line prefix that runs in it) through the
    block; after it, the list holds how many pings were sent and how many got no answer in time for the next one
    (-O reports each as it sends the next: the last one, under way when the ping stops, is not counted). The block
    starts once AROUND replies came, and the ping stops AROUND pings after it."""
    ping = subprocess.Popen([*in_node, "ping", "-O", "-i", "0.05", "-W", "1", address], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert ping.stdout is not None
    counted: list[int] = []
    lines: list[str] = []
    try:
        while sum("bytes from" in line for line in lines) < AROUND:
            lines.append(ping.stdout.readline())
            assert lines[-1], f"the ping ended before it had answers: {lines}"
        yield counted
        lines += [ping.stdout.readline() for _ in range(AROUND)]
    finally:
        ping.send_signal(signal.SIGINT)
        said = "".join(lines) + ping.communicate(timeout=10)[0]
    sent = re.search(r"(\d+) packets transmitted", said)
    assert sent, said
    counted += [int(sent.group(1)), said.count("no answer yet")]
