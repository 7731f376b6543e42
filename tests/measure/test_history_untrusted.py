"""A measurement history beside a lab travels with the lab: whatever it holds, loading it gives the runs or one
ValueError that names the file, never another exception."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vtopo.measure import history_csv, load_history, save_history
from vtopo.measure.history import dump_history, parse_history

from tests.fuzzing import EXAMPLES, mutated_text
from tests.measure.test_results import make_result

SAVED = json.loads(dump_history([make_result(), make_result(10, status="cancelled")]))


@pytest.mark.parametrize("version", ['"2"', '"x"', "[]", "{}", "1e300", "2.5", "true", "-1", "null"])
def test_a_version_that_is_not_a_whole_number_is_one_clear_message(version: str) -> None:
    text = json.dumps(SAVED).replace('"version": 1', f'"version": {version}')
    with pytest.raises(ValueError, match=r"^lab\.measure\.json: .*(version|number)"):
        parse_history(text, source="lab.measure.json")


@pytest.mark.parametrize("bad, says", [
    ('{"runs": "many"}', '"runs" must be a list'),
    ('{"runs": [5]}', "run 1 is malformed: a run is an object"),
    ('{"runs": [{"source": "h1"}]}', 'run 1 is malformed: missing value for field "destination"'),
    ('{"runs": [{"options": {"protocol": "sctp"}}]}', 'field "options.protocol"'),
    ('{"version": 99}', "version 99 is newer"),
])
def test_a_wrong_field_is_named(bad: str, says: str) -> None:
    document = {**SAVED, **json.loads(bad)}
    if bad.startswith('{"runs": [{"options'):
        document["runs"] = [{**SAVED["runs"][0], "options": {"protocol": "sctp"}}]
    with pytest.raises(ValueError) as raised:
        parse_history(json.dumps(document), source="h.json")
    assert says in str(raised.value) and str(raised.value).startswith("h.json: ")


def test_bytes_that_are_not_utf8_are_one_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "lab.measure.json"
    path.write_bytes(b'{"format": "vtopo-measure-history", "runs": ["\xff\xfe"]}')
    with pytest.raises(ValueError, match="not UTF-8"):
        load_history(path)


def test_a_saved_history_loads_back_unchanged(tmp_path: Path) -> None:
    runs = [make_result(), make_result(10, status="cancelled")]
    save_history(tmp_path / "h.json", runs)
    assert load_history(tmp_path / "h.json") == runs


def test_an_error_text_with_tabs_and_escapes_is_saved_so_that_it_loads_back(tmp_path: Path) -> None:
    run = make_result(status="failed", error="iperf3:\tconnect failed\r\n\x1b[1mrefused")
    save_history(tmp_path / "h.json", [run])
    assert load_history(tmp_path / "h.json")[0].error == "iperf3: connect failed \n [1mrefused"


@st.composite
def mutated_histories(draw: st.DrawFn) -> str:
    return mutated_text(draw, SAVED, twice="status")


@settings(max_examples=EXAMPLES // 2, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_histories())
def test_mutated_histories_never_crash(text: str) -> None:
    try:
        runs = parse_history(text, source="h.json")
    except ValueError as error:
        assert str(error).startswith("h.json: ")
        return
    history_csv(runs)  # what the history table and the CSV export read
    for run in runs:
        run.to_json()
