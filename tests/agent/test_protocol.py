"""The agent's wire format: the host layer's own reports go over the socket and come back as what they were, and a
line that is not a valid message is refused with the field it names."""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict, fields

import pytest

from vtopo import protocol as p
from vtopo.model.impairment_change import ImpairmentChange
from vtopo.model.topology import Impairment
from vtopo.reports import STILL, DeployReport, LabStatus, LinkRate, PartState, Progress


def test_a_progress_goes_over_the_socket_as_itself() -> None:
    progress = Progress("apply", 3, 7, "create veth", "node c1")
    message = p.decode(p.encode(p.ProgressEvent(**asdict(progress))), p.ANSWERS)
    assert isinstance(message, p.ProgressEvent) and isinstance(message, Progress)
    assert asdict(message) == asdict(progress)


def test_a_deploys_report_and_a_labs_parts_come_back_typed() -> None:
    report = DeployReport("l2-vs-l3", "vtab", 5, 4, 61, 1.25, ["a notice"])
    answer = p.decode(p.encode(p.Result(0, data=asdict(report))), p.ANSWERS)
    assert isinstance(answer, p.Result) and p.read_as(DeployReport, answer.data) == report
    status = LabStatus("l2-vs-l3", "vtab", "", 1000, "degraded", [PartState("h1", "running")],
                       [PartState("h1-br0", "degraded", "; missing: veth")], {})
    assert p.read_as(LabStatus, asdict(status)) == status


def test_link_rates_go_over_the_socket_once_per_rate_and_come_back_per_link() -> None:
    """A packet flooded through a switch moves its ports' counters alike: the rate goes once, with their ids."""
    flooded, pinged = LinkRate(560, 1.0), LinkRate(1_234_567, 99.5)
    changes = {f"p{port}": flooded for port in range(1000)} | {"c1-c2": pinged, "c3-c4": STILL}
    line = p.encode(p.LinkRatesChanged.of(changes))
    assert line.count(b"[560, 1.0]") == 1 and line.count(b'"p999"') == 1
    decoded = p.decode(line, p.ANSWERS)
    assert isinstance(decoded, p.LinkRatesChanged) and decoded.changes() == changes
    one_bad = p.decode(line.replace(b"[1234567, 99.5]", b"[1234567]"), p.ANSWERS)
    assert isinstance(one_bad, p.LinkRatesChanged)
    assert one_bad.changes() == {link: rate for link, rate in changes.items() if link != "c1-c2"}
    with pytest.raises(p.ProtocolError, match="link-rates-changed.links"):
        p.decode(line.replace(b'"p999"', b"999"), p.ANSWERS)


@pytest.mark.parametrize(("line", "says"), [
    (b'{"v": 2, "type": "progress", "stage": "apply", "done": "3", "total": 7, "message": ""}', "progress.done"),
    (b'{"v": 2, "type": "progress", "stage": "apply", "done": 3, "total": 7, "message": "", "x": 1}', r"unknown field\(s\) x"),
    (b'{"v": 1, "type": "progress"}', "protocol version"),
    (b'{"v": 2, "type": "deploy"}', "unknown message type"),
    (b"[1]", "JSON object"),
    (b"[" * 200_000, "not a JSON line: it is nested too deeply"),
    (b'{"v": 2, "type": "progress", "done": ' + b"9" * 5000 + b"}", "a number has more than 20 digits"),
])
def test_a_bad_line_is_refused_naming_what_is_wrong(line: bytes, says: str) -> None:
    with pytest.raises(p.ProtocolError, match=says):
        p.decode(line, p.ANSWERS)


@pytest.mark.parametrize(("line", "says"), [
    (b'{"v": 2, "type": "link-rates", "lab": "x", "every_s": NaN}',
     "link-rates.every_s must be a finite number, not nan"),
    (b'{"v": 2, "type": "link-rates", "lab": "x", "every_s": 1e999}',
     "link-rates.every_s must be a finite number, not inf"),
    (b'{"v": 2, "type": "link", "lab": "x", "a": "c1", "b": "c2", "action": "set", "loss_pct": -Infinity}',
     "link.loss_pct must be a finite number, not -inf"),
])
def test_a_number_that_is_not_finite_is_refused_naming_its_field(line: bytes, says: str) -> None:
    """Each float field of each request, once, where lines are decoded (an optional one too)."""
    with pytest.raises(p.ProtocolError, match=says):
        p.decode(line, p.REQUESTS)


@pytest.mark.parametrize(("line", "says"), [
    (b'{"v": 2, "type": "node", "lab": "x", "node": "c1", "action": "halt"}',
     "node.action is one of start, stop, restart"),
    (b'{"v": 2, "type": "link", "lab": "x", "a": "c1", "b": "c2", "action": "cut"}',
     "link.action is one of up, down, set"),
    (b'{"v": 2, "type": "link", "lab": "x", "a": "c1", "b": "c2", "action": ["up"]}', "link.action is one of up, down"),
])
def test_an_action_outside_its_verbs_words_is_refused_naming_its_field(line: bytes, says: str) -> None:
    with pytest.raises(p.ProtocolError, match=says):
        p.decode(line, p.REQUESTS)


def test_an_action_goes_over_the_socket_as_its_word_and_comes_back_as_itself() -> None:
    line = p.encode(p.LinkRequest("x", "c1", "c2", p.LinkAction.DOWN))
    assert b'"action": "down"' in line
    request = p.decode(line.rstrip(b"\n"), p.REQUESTS)
    assert isinstance(request, p.LinkRequest) and request.action is p.LinkAction.DOWN


def test_each_request_the_agent_reads_has_one_handler_in_its_table_of_verbs() -> None:
    from vtopo.server.agent_server import VERBS

    assert set(VERBS) == set(p.REQUESTS.values())


def test_a_change_to_parts_of_a_lab_names_them_and_is_answered_with_what_each_site_did() -> None:
    """What lets a lab spread over sites route a request by its parts (vtopo.sites.spread_operations) without a
    method of its own for the verb: the fields that name the parts, and an answer that two sites' can be joined in."""
    on_parts = {cls for cls in p.REQUESTS.values() if issubclass(cls, p.PartRequest)}
    assert on_parts == {p.NodeRequest, p.LinkRequest}
    for cls in on_parts:
        assert cls.answer is p.Said and set(cls.naming_parts) <= {field.name for field in fields(cls)}
    assert p.NodeRequest("x", "c1", p.NodeAction.STOP).parts == ["c1"]
    assert p.LinkRequest("x", "c1:eth0", "sw", p.LinkAction.DOWN).parts == ["c1:eth0", "sw"]


def test_the_clients_of_a_lab_over_sites_write_no_verb_of_the_client_again() -> None:
    """Each verb is the AgentClient's line over its request; the clients over sites add only what merges sites."""
    from vtopo.client.agent_client import AgentClient
    from vtopo.gui.sites_deployer import SitesDeployer
    from vtopo.sites.spread_operations import SitesOperator

    assert issubclass(SitesDeployer, SitesOperator) and issubclass(SitesOperator, AgentClient)
    merged = {"__init__", "ask", "read_running", "explain_save", "link_rates", "destroy", "status", "follow"}
    for client in (SitesOperator, SitesDeployer):
        written_again = {name for name in vars(client) if callable(getattr(AgentClient, name, None))}
        assert written_again <= merged, written_again - merged


@pytest.mark.parametrize(("request_", "answer", "data"), [
    (p.NodeRequest("x", "c1", p.NodeAction.STOP), p.Said("c1 in lab x is stopped"), {"said": "c1 in lab x is stopped"}),
    (p.DestroyRequest("x"), p.Destroyed("x", 12, 0.5), {"lab": "x", "ops": 12, "seconds": 0.5}),
    (p.CancelRequest("x"), p.Cancelled(True), {"cancelled": True}),
    (p.StatusRequest("x", verify=True),
     p.Statuses([LabStatus("x", "vtab", "", 1000, "running", [PartState("c1", "running")], [], {})], ["c1: gone"]),
     {"labs": [asdict(LabStatus("x", "vtab", "", 1000, "running", [PartState("c1", "running")], [], {}))],
      "differences": ["c1: gone"]}),
    (p.RecordRequest("x"), {"topology": {"name": "x"}}, {"topology": {"name": "x"}}),
    (p.CaptureRequest("x", "c1:eth0"), None, {}),
], ids=lambda value: value.type if isinstance(value, p.Message) else "")
def test_a_verbs_answer_goes_over_the_socket_as_it_did_and_comes_back_as_its_request_declares(
        request_: p.Request[object], answer: object, data: dict[str, object]) -> None:
    """The data of each verb's Result is the object it always was (a client of another version reads it), and the
    client gets back the type the request names."""
    result = p.decode(p.encode(p.result_of(request_, answer)).rstrip(b"\n"), p.ANSWERS)
    assert isinstance(result, p.Result) and result.data == data
    assert p.answer_of(request_, result.data) == answer


def test_a_change_to_a_links_impairment_goes_as_its_four_values_and_comes_back_whole() -> None:
    change = ImpairmentChange(delay_ms=20, rate_mbit=0)  # 0 removes the rate; None keeps jitter and loss
    line = p.encode(p.LinkRequest.setting("x", "c1", "c2", change))
    assert json.loads(line) == {"v": 2, "type": "link", "lab": "x", "a": "c1", "b": "c2", "action": "set",
                                "rate_mbit": 0, "delay_ms": 20, "jitter_ms": None, "loss_pct": None, "explain": False}
    request = p.decode(line.rstrip(b"\n"), p.REQUESTS)
    assert isinstance(request, p.LinkRequest) and request.change == change
    assert change.applied_to(Impairment(delay_ms=5, jitter_ms=1, loss_pct=2, rate_mbit=100)) == \
        Impairment(delay_ms=20, jitter_ms=1, loss_pct=2, rate_mbit=0)


def test_the_command_line_and_the_live_operations_know_the_same_actions_as_the_protocol() -> None:
    """Each word stands in three places: what `vtopo node`/`vtopo link` accept, the protocol's enums, and what
    vtopo.lab_operations does; a word added to one alone would be refused by another."""
    from vtopo.cli.main import build_parser
    from vtopo.lab_operations import NODE_ACTIONS

    commands = next(action for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction))

    def accepted(command: str) -> set[str]:
        return set(next(action for action in commands.choices[command]._actions if action.dest == "action").choices)

    assert accepted("node") == set(p.NodeAction) == set(NODE_ACTIONS)
    assert accepted("link") == set(p.LinkAction)


def test_a_nul_is_refused_in_a_request_and_goes_in_an_answer() -> None:
    """A request's text reaches programs and paths, none of which takes a NUL; an answer carries what a node printed."""
    with pytest.raises(p.ProtocolError, match=r"^capture.filter may not hold a NUL character$"):
        p.decode(p.encode(p.CaptureRequest("lab", "c1:eth0", "icmp\0")), p.REQUESTS)
    printed = p.ProgressEvent("output", 0, 0, "$ printf 'a\\0b'\na\0b")
    assert p.decode(p.encode(printed), p.ANSWERS) == printed
