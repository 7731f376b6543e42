"""What the live probe reads from ping's output (iputils, as Debian 12 ships it) when it walks a path by TTL."""
from __future__ import annotations

from vtopo.checks.live import answer_at_ttl

EXCEEDED = """PING 10.2.0.10 (10.2.0.10) 56(84) bytes of data.
From 10.1.0.1 icmp_seq=1 Time to live exceeded

--- 10.2.0.10 ping statistics ---
1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms
"""
REPLY = """PING 10.2.0.10 (10.2.0.10) 56(84) bytes of data.
64 bytes from 10.2.0.10: icmp_seq=1 ttl=62 time=0.088 ms
"""
NET_UNREACHABLE = """PING 10.2.0.10 (10.2.0.10) 56(84) bytes of data.
From 10.1.0.1 icmp_seq=1 Destination Net Unreachable
"""


EXCEEDED6 = """PING 2001:db8:2::10(2001:db8:2::10) 56 data bytes
From 2001:db8:1::1 icmp_seq=1 Time exceeded: Hop limit
"""
REPLY6 = """PING 2001:db8:2::10(2001:db8:2::10) 56 data bytes
64 bytes from 2001:db8:2::10: icmp_seq=1 ttl=62 time=0.091 ms
"""


def test_over_ipv6_the_hop_limit_runs_out_and_the_destination_answers():
    assert answer_at_ttl(EXCEEDED6) == ("2001:db8:1::1", False)
    assert answer_at_ttl(REPLY6) == ("2001:db8:2::10", True)


def test_a_router_on_the_way_answers_time_exceeded():
    assert answer_at_ttl(EXCEEDED) == ("10.1.0.1", False)


def test_the_destination_answers_the_echo():
    assert answer_at_ttl(REPLY) == ("10.2.0.10", True)


def test_an_unreachable_network_ends_the_walk():
    assert answer_at_ttl(NET_UNREACHABLE) is None
    assert answer_at_ttl("") is None
