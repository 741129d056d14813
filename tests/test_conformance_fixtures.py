"""Every case of every JSON conformance vector under fixtures/ passes on CPython.

The same runner (agentskit_web.protocol.conformance) runs these files inside
Pyodide in the browser tests, so the two proofs cannot drift apart.
"""

import json

import pytest

from agentskit_web.build.pages import is_conformance_vector
from agentskit_web.protocol.conformance import SUBJECTS, case_input, outcome_matches
from conftest import FIXTURES, read_fixture_bytes

# The answers eval set (fixtures/answers_eval.json) is not a conformance vector.
FILES = sorted(p for p in FIXTURES.glob("*.json") if is_conformance_vector(p))
CASES = [
    pytest.param(path.name, case, id=f"{path.stem}::{case['name']}")
    for path in FILES
    for case in json.loads(path.read_text(encoding="utf-8"))["cases"]
]


# Pinned so that deleting a case (or a whole file) fails a test; adding one updates the pin.
CASE_COUNTS = {
    "answer_envelope.json": 41,
    "ask_events_buffer.json": 38,
    "ask_events_stream.json": 25,
    "ask_projection.json": 43,
    "ask_request.json": 32,
    "component_frame.json": 59,
    "component_resolve.json": 54,
    "content.json": 65,
    "content_encode.json": 34,
    "hostile_render.json": 64,
    "knowledge.json": 35,
    "knowledge_key.json": 23,
    "legacy_memory.json": 36,
    "memory_record.json": 55,
    "session.json": 53,
    "site_config.json": 58,
    "turn.json": 60,
    "turn_cursor.json": 14,
    "turn_encode.json": 20,
}


def test_every_fixture_file_holds_its_pinned_number_of_uniquely_named_cases() -> None:
    counts = {}
    for path in FILES:
        names = [case["name"] for case in json.loads(path.read_text(encoding="utf-8"))["cases"]]
        assert len(set(names)) == len(names), f"{path.name} repeats a case name"
        counts[path.name] = len(names)
    assert counts == CASE_COUNTS


def test_a_case_naming_only_some_keys_of_the_outcome_does_not_pass() -> None:
    outcome = {"ok": True, "value": {"a": 1}}
    assert outcome_matches({"ok": True, "value": {"a": 1}}, outcome)
    assert not outcome_matches({"ok": True}, outcome)
    assert not outcome_matches({"ok": True, "value": {"a": 1}, "extra": None}, outcome)


@pytest.mark.parametrize(("file_name", "case"), CASES)
def test_fixture_case(file_name: str, case: dict) -> None:
    document = json.loads((FIXTURES / file_name).read_text(encoding="utf-8"))
    subject = SUBJECTS[document["subject"]]
    outcome = subject(case_input(case, read_fixture_bytes))
    assert outcome_matches(case["expect"], outcome), outcome
