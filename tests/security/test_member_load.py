"""A member's load on what everyone shares: what one member asks of the agent about their own labs, however large and
however often, does not hold up another member's requests."""
from __future__ import annotations

import json
import statistics
import threading

import pytest

from security.members import deployed_by, raw, tiny_lab

pytestmark = pytest.mark.privileged

# As a member: `sys.argv[3]` requests (the JSON line sys.argv[2]) one after another, each on a connection of its own;
# prints the seconds each took to be answered (JSON).
TIMED_REQUESTS = """
connection.close()
took = []
for _ in range(int(sys.argv[3])):
    asking = socket.socket(socket.AF_UNIX)
    asking.connect(sys.argv[1])
    sent = time.monotonic()
    asking.sendall(sys.argv[2].encode() + b"\\n")
    answer = b""
    while not answer.endswith(b"\\n"):
        answer += asking.recv(1 << 20)
    took.append(time.monotonic() - sent)
    assert b'"code": 0' in answer, answer
    asking.close()
    time.sleep(0.05)
print(json.dumps(took))
"""

STATUS = '{"v": 2, "type": "status", "lab": ""}'


VERIFY = json.dumps({"v": 2, "type": "status", "lab": "large", "verify": True})


def test_a_members_verify_of_a_large_lab_does_not_hold_up_anothers_status(agent, users, readable_dir):
    """a asks the agent to probe their lab of 150 containers again and again, on three connections at once (`vtopo
    status --verify`), which the agent did holding the lock every read of its record takes: b's `vtopo status` waited
    for the probes queued before it."""
    a, b = users["a"].pw_name, users["b"].pw_name
    with deployed_by(agent, a, tiny_lab(readable_dir, "large", nodes=150)):
        alone = json.loads(raw(agent, b, "import json\n" + TIMED_REQUESTS, STATUS, "10").stdout)
        probes = json.loads(raw(agent, a, "import json\n" + TIMED_REQUESTS, VERIFY, "2").stdout)
        probing = [threading.Thread(target=raw, args=(agent, a, "import json\n" + TIMED_REQUESTS, VERIFY, "8"))
                   for _ in range(3)]
        for thread in probing:
            thread.start()
        beside = json.loads(raw(agent, b, "import json\n" + TIMED_REQUESTS, STATUS, "20").stdout)
        for thread in probing:
            thread.join()
        print(f"b's status alone {statistics.median(alone):.3f} s, beside a's verify (one takes "
              f"{statistics.median(probes):.3f} s) {statistics.median(beside):.3f} s, slowest {max(beside):.3f} s")
        assert statistics.median(beside) < max(0.1, 3 * statistics.median(alone)), (alone, beside, probes)
        assert statistics.median(beside) < statistics.median(probes) / 4, (alone, beside, probes)
        theirs, others = agent.vtopo(a, "status", "large", "--verify"), agent.vtopo(b, "status", "--verify")
        assert f"owner {a}: running\nthe agent's record is what the host has" in theirs.stdout, theirs.stdout
        assert others.stdout == "no lab is deployed\nthe agent's record is what the host has\n", "a's lab is a's"
