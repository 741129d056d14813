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


def test_fixture_files_exist() -> None:
    assert FILES, "no conformance fixtures found"


@pytest.mark.parametrize(("file_name", "case"), CASES)
def test_fixture_case(file_name: str, case: dict) -> None:
    document = json.loads((FIXTURES / file_name).read_text(encoding="utf-8"))
    subject = SUBJECTS[document["subject"]]
    outcome = subject(case_input(case, read_fixture_bytes))
    assert outcome_matches(case["expect"], outcome), outcome
