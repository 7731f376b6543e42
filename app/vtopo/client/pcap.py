"""`python -m vtopo.client.pcap LAB TARGET FILTER COUNT`: what vtopo.capture runs in tcpdump's place for a user who
is not root. The agent runs tcpdump on the target of the user's lab and writes its pcap stream to this process's
stdout and its messages to stderr, as tcpdump would; SIGUSR1 asks for its counters and SIGTERM ends it, as they
would tcpdump."""
from __future__ import annotations

import sys

from vtopo.client.agent_client import AgentClient, AgentError, AgentRefused, AgentUnavailable


def main(args: list[str]) -> int:
    if len(args) != 4 or not args[3].isdigit():
        print("usage: python -m vtopo.client.pcap LAB TARGET FILTER COUNT", file=sys.stderr)
        return 2
    lab, target, bpf, count = args
    try:
        return AgentClient().capture(lab, target, bpf, int(count))
    except (AgentError, AgentRefused, AgentUnavailable) as error:
        print(error, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
