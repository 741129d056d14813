"""Run the JSON conformance vectors under `fixtures/` against this implementation.

One runner serves CPython's pytest and the in-page Pyodide check, so both
prove the same thing with the same data. A fixture file is:

    {"contract": "...", "subject": "<name in SUBJECTS>",
     "cases": [{"name": "...", <one input form>, "expect": {...}}]}

Input forms: `"input"` (any JSON value), `"inputText"` (a raw string handed
over as text), `"inputBytesHex"` (raw bytes), `"chunksHex"` (a list of byte
chunks) or `"stream"` (a path, relative to the fixtures folder, of a recorded
file whose bytes are the input). `expect` must equal the subject's whole
outcome dict: a case cannot pass by naming only the keys that happen to agree.
"""

import binascii
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Diagnostic, ProtocolError

Loader = Callable[[str], bytes]
Subject = Callable[[Any], dict[str, Any]]


def _failure(diagnostic: Diagnostic | None) -> dict[str, Any]:
    assert diagnostic is not None
    return {"ok": False, **diagnostic.to_wire()}


def _wire(value: Any) -> Any:
    return value.to_wire() if hasattr(value, "to_wire") else value


def _decoded(result: Any) -> dict[str, Any]:
    if result.ok:
        return {"ok": True, "value": _wire(result.value)}
    return _failure(result.diagnostic)


def _raising(call: Callable[[], Any]) -> dict[str, Any]:
    try:
        return {"ok": True, "value": _wire(call())}
    except ProtocolError as error:
        return {"ok": False, "code": error.code, "message": error.message}


def _turn_decode(data: Any) -> dict[str, Any]:
    from . import decode_turn_event

    return _decoded(decode_turn_event(data))


def _turn_encode(data: Any) -> dict[str, Any]:
    from . import encode_turn_event

    return _raising(lambda: encode_turn_event(data))


def _cursor(data: Any) -> dict[str, Any]:
    from . import TurnSnapshotCursor

    try:
        cursor = TurnSnapshotCursor(data["sessionId"])
    except (ProtocolError, ValueError, TypeError):
        return {"ok": False}
    applied = [cursor.apply(event) for event in data["events"]]
    last = cursor.snapshot
    return {
        "ok": True,
        "applied": applied,
        "sequence": None if last is None else _wire(last)["sequence"],
    }


def _content_decode(data: Any) -> dict[str, Any]:
    from . import decode_assistant_content

    result = decode_assistant_content(data)
    if result.ok:
        return {"ok": True, "parts": list(result.parts), "complete": result.complete}
    return _failure(result.diagnostic)


def _content_encode(parts: Any) -> dict[str, Any]:
    from . import AssistantContentEncoder

    encoder = AssistantContentEncoder()
    return _raising(lambda: "".join(encoder.encode(part) for part in parts))


def _frame_decode(data: Any) -> dict[str, Any]:
    from . import decode_component_frame

    return _decoded(decode_component_frame(data))


def _session_decode(data: Any) -> dict[str, Any]:
    from . import decode_session_snapshot

    return _decoded(decode_session_snapshot(data))


def _ask_buffer(data: Any) -> dict[str, Any]:
    from . import decode_ask_events

    result = decode_ask_events(data)
    return {
        "ok": True,
        "events": result.events,
        "rest": result.rest,
        "discardedPartial": result.discarded_partial,
    }


def _ask_stream(chunks: Any) -> dict[str, Any]:
    from . import AskEventDecoder

    decoder = AskEventDecoder()
    events: list[dict[str, Any]] = []
    for chunk in chunks if isinstance(chunks, list) else [chunks]:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.finish())
    return {"ok": True, "events": events}


def _ask_request(data: Any) -> dict[str, Any]:
    from . import parse_ask_request

    return _decoded(parse_ask_request(data))


def _site_config(data: Any) -> dict[str, Any]:
    from . import parse_site_config

    return _decoded(parse_site_config(data))


def _answer_envelope(data: Any) -> dict[str, Any]:
    from . import parse_answer_envelope

    return _decoded(parse_answer_envelope(data))


def _knowledge(data: Any) -> dict[str, Any]:
    from . import parse_knowledge_artifact

    return _decoded(parse_knowledge_artifact(data))


def _knowledge_key(data: Any) -> dict[str, Any]:
    from . import normalize_knowledge_key

    return {"ok": True, "value": normalize_knowledge_key(data)}


def _memory_record(data: Any) -> dict[str, Any]:
    from . import validate_memory_record

    return _raising(lambda: validate_memory_record(data))


SUBJECTS: dict[str, Subject] = {
    "decode_turn_event": _turn_decode,
    "encode_turn_event": _turn_encode,
    "turn_snapshot_cursor": _cursor,
    "decode_assistant_content": _content_decode,
    "encode_assistant_content": _content_encode,
    "decode_component_frame": _frame_decode,
    "decode_session_snapshot": _session_decode,
    "decode_ask_events": _ask_buffer,
    "ask_event_decoder": _ask_stream,
    "parse_ask_request": _ask_request,
    "parse_site_config": _site_config,
    "parse_answer_envelope": _answer_envelope,
    "parse_knowledge_artifact": _knowledge,
    "normalize_knowledge_key": _knowledge_key,
    "validate_memory_record": _memory_record,
}


def register_subject(name: str, subject: Subject) -> None:
    """Let higher layers (chat/) add subjects without protocol/ importing them."""
    SUBJECTS[name] = subject


def case_input(case: dict[str, Any], load: Loader | None) -> Any:
    """The value a case hands to its subject, decoded from its input form."""
    if "input" in case:
        return case["input"]
    if "inputText" in case:
        return case["inputText"]
    if "inputBytesHex" in case:
        return binascii.unhexlify(case["inputBytesHex"])
    if "chunksHex" in case:
        return [binascii.unhexlify(chunk) for chunk in case["chunksHex"]]
    if "stream" in case:
        if load is None:
            raise ValueError("a stream case needs a loader")
        data = load(case["stream"])
        size = case.get("chunkSize")
        if size:
            return [data[i : i + size] for i in range(0, len(data), size)]
        return data
    raise ValueError(f"case {case.get('name')!r} has no input")


def outcome_matches(expect: dict[str, Any], outcome: dict[str, Any]) -> bool:
    """The fixture's expectation is the subject's whole outcome: same keys, equal values."""
    return set(expect) == set(outcome) and all(outcome[key] == expect[key] for key in expect)


@dataclass
class FixtureReport:
    """Pass/fail counts for one fixture file, with the names of failing cases."""

    contract: str
    passed: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)


def run_case(subject: Subject, case: dict[str, Any], load: Loader | None) -> bool:
    """Run one case; an exception out of a decoder is itself a failure."""
    try:
        outcome = subject(case_input(case, load))
    except Exception:
        return False
    return outcome_matches(case["expect"], outcome)


def run_fixture(document: dict[str, Any], load: Loader | None = None) -> FixtureReport:
    """Run every case of one fixture document."""
    report = FixtureReport(contract=document["contract"])
    subject = SUBJECTS[document["subject"]]
    for case in document["cases"]:
        if run_case(subject, case, load):
            report.passed += 1
        else:
            report.failed += 1
            report.failures.append(case["name"])
    return report
