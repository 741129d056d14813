"""Turn protocol v1 (PROTOCOL.md section 1): decoder order, limits, hostile input, properties.

fixtures/turn*.json hold the conformance vectors; this file adds what a JSON
vector cannot express (absent keys, host objects, cycles, huge inputs,
immutability) plus Hypothesis properties for "never raises", "never leaks"
and encode/decode round-trips of hostile text.
"""

import copy
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentskit_web.protocol import (
    ProtocolError,
    TurnSnapshotCursor,
    create_snapshot_event,
    decode_turn_event,
    encode_turn_event,
)
from agentskit_web.protocol.limits import (
    JS_MAX_SAFE_INTEGER,
    JSON_MAX_NESTING,
    MEMORY_RECORD_MAX_NODES,
    TURN_EVENT_MAX_NODES,
)
from agentskit_web.protocol.memory_record import MemoryMessage, new_message
from agentskit_web.protocol.text_metrics import js_is_blank
from agentskit_web.protocol.turn import (
    PROTOCOL_INVALID_PAYLOAD,
    PROTOCOL_UNKNOWN_EVENT,
    PROTOCOL_UNSUPPORTED_VERSION,
    DerivedLineage,
    DiagnosticTurnEvent,
    SnapshotTurnEvent,
    SubmitLineage,
    SubmitTurnEvent,
    TokenUsage,
    TurnDiagnostic,
)
from agentskit_web.server.turn_errors import (
    CHAT_TURN_FAILED,
    REQUEST_INVALID_EVENT,
    SESSION_BUSY,
    SESSION_CONFLICT,
    TURN_ERROR_HEADERS,
    TURN_SERVER_ERRORS,
    TURN_STREAM_HEADERS,
    snapshot_status,
)
from conftest import load_fixture

INVALID = "Turn event payload is invalid."
NOT_JSON = "Turn event is not valid JSON."
FIXED_MESSAGES = {
    INVALID,
    NOT_JSON,
    "Turn event uses an unsupported protocol version.",
    "Turn event kind is unknown.",
}
CODES = {PROTOCOL_INVALID_PAYLOAD, PROTOCOL_UNSUPPORTED_VERSION, PROTOCOL_UNKNOWN_EVENT}
USAGE = {"promptTokens": 1, "completionTokens": 2, "totalTokens": 3}
MESSAGE = {
    "id": "m1",
    "role": "assistant",
    "content": "Hi",
    "status": "complete",
    "createdAt": "2026-07-11T03:00:01.000Z",
}


def envelope(kind: str, payload: Any, /, **changes: Any) -> dict[str, Any]:
    wire = {
        "protocol": "agentskit.chat.turn",
        "version": 1,
        "eventId": "event-1",
        "sessionId": "session-1",
        "turnId": "turn-1",
        "sequence": 1,
        "emittedAt": "2026-07-11T03:00:00.000Z",
        "event": kind,
        "payload": payload,
    }
    wire.update(changes)
    return wire


def submit(text: str = "hello", /, **changes: Any) -> dict[str, Any]:
    return envelope("client.turn.submit", {"input": text}, **changes)


def snapshot(messages: Any = (), /, **changes: Any) -> dict[str, Any]:
    payload = {"messages": list(messages), "status": "complete", "usage": USAGE}
    return envelope("server.turn.snapshot", payload, **changes)


def diagnostic_event(**changes: Any) -> dict[str, Any]:
    payload = {"version": 1, "code": "X", "message": "m", "retryable": False}
    return envelope("server.turn.diagnostic", payload, **changes)


def failure(data: Any) -> dict[str, Any]:
    result = decode_turn_event(data)
    assert not result.ok
    assert result.diagnostic is not None
    return result.diagnostic.to_wire()


def invalid(event_id: str | None = None, message: str = INVALID) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "code": PROTOCOL_INVALID_PAYLOAD,
        "message": message,
        "retryable": False,
    }
    if event_id is not None:
        wire["eventId"] = event_id
    return wire


# --- decoder order and echo rules -----------------------------------------------------


def test_valid_submit_decodes_to_a_model() -> None:
    result = decode_turn_event(submit())
    assert result.ok and result.diagnostic is None
    assert isinstance(result.event, SubmitTurnEvent)
    assert result.event.to_wire() == submit()
    assert result.event.payload.input == "hello"


def test_diagnostic_payload_and_snapshot_models() -> None:
    assert isinstance(decode_turn_event(diagnostic_event()).event, DiagnosticTurnEvent)
    event = decode_turn_event(snapshot([MESSAGE])).event
    assert isinstance(event, SnapshotTurnEvent)
    assert isinstance(event.payload.messages[0], MemoryMessage)
    assert "error" not in event.to_wire()["payload"]
    assert "lineage" not in event.to_wire()["payload"]


def unsupported(event_id: str) -> dict[str, Any]:
    return invalid(event_id) | {
        "code": PROTOCOL_UNSUPPORTED_VERSION,
        "message": "Turn event uses an unsupported protocol version.",
    }


def unknown(event_id: str) -> dict[str, Any]:
    return invalid(event_id) | {
        "code": PROTOCOL_UNKNOWN_EVENT,
        "message": "Turn event kind is unknown.",
    }


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # Kept here rather than in fixtures/turn.json so that file stays focused.
        ("1", invalid()),
        (submit(version=-1), unsupported("event-1")),
        (submit(version=None), invalid("event-1")),
        ({k: v for k, v in submit(version=2).items() if k != "protocol"}, invalid("event-1")),
        (submit(event="Client.Turn.Submit"), unknown("event-1")),
        (submit(eventId=7), invalid()),
        (envelope("client.turn.submit", {"input": ["hi"]}), invalid("event-1")),
        (submit(emittedAt="2026-07-11T24:00:00Z"), invalid("event-1")),
        (submit(sequence="1"), invalid("event-1")),
        (submit(protocol="agentskit.chat.Turn"), invalid("event-1")),
        (envelope("server.turn.snapshot", {"messages": [], "status": "idle"}), invalid("event-1")),
        (json.dumps(submit()) + json.dumps(submit()), invalid(message=NOT_JSON)),
        (envelope("client.turn.submit", snapshot()["payload"]), invalid("event-1")),
        (envelope("server.turn.snapshot", submit()["payload"]), invalid("event-1")),
    ],
)
def test_more_decoder_cases(data: Any, expected: dict[str, Any]) -> None:
    assert failure(data) == expected


@pytest.mark.parametrize(
    "payload_change",
    [
        {"lineage": {"operation": "retry", "parentTurnId": "bad id", "sourceMessageId": "m"}},
        {"lineage": {"operation": "regenerate", "parentTurnId": "t"}},
        {"error": None},
        {"error": {"version": 1, "code": "X", "message": "", "retryable": True}},
        {"error": {"version": 1, "code": "X", "message": "m", "retryable": 1}},
        {"messages": [{**MESSAGE, "createdAt": "2026-07-11T03:00:01Z"}]},
        {
            "messages": [
                {
                    **MESSAGE,
                    "toolCalls": [{"id": "c", "name": "", "args": {}, "status": "complete"}],
                }
            ]
        },
        {"usage": {**USAGE, "totalTokens": JS_MAX_SAFE_INTEGER + 1}},
        {"usage": {**USAGE, "totalTokens": 1.5}},
        {"status": None},
    ],
)
def test_invalid_snapshot_payloads(payload_change: dict[str, Any]) -> None:
    event = snapshot([MESSAGE])
    event["payload"].update(payload_change)
    assert failure(event) == invalid("event-1")


def test_valid_edge_values() -> None:
    for event in (
        submit("\u0085"),  # NEL is not JavaScript whitespace
        submit("\x1c"),  # nor is the file separator (str.strip would remove both)
        submit(eventId="e" * 128),
        submit(emittedAt="2024-02-29T23:59:59Z"),
        submit(sequence=JS_MAX_SAFE_INTEGER),
        snapshot(usage={**USAGE}),
    ):
        assert decode_turn_event(event).ok, event
    lineage = {"operation": "submit", "parentTurnId": "t"}
    event = snapshot()
    event["payload"]["lineage"] = lineage
    assert decode_turn_event(event).event.to_wire()["payload"]["lineage"] == {"operation": "submit"}


def test_event_id_echo_only_when_safe() -> None:
    assert failure(submit(" ", eventId="safe-1")) == invalid("safe-1")
    for unsafe in ("unsafe\nlog", "e" * 129, "", "-leading", "a b", "\U0001f600", 5, None, ["x"]):
        diagnostic = failure(submit(" ", eventId=unsafe))
        assert "eventId" not in diagnostic
        assert diagnostic == invalid()


class TrickyStr(str):
    """A str subclass: never echoed, even when its text looks safe."""


def test_str_subclass_event_id_is_not_echoed() -> None:
    assert "eventId" not in failure(submit(" ", eventId=TrickyStr("safe")))


def test_not_json_never_echoes() -> None:
    text = '{"eventId":"safe","protocol":"agentskit.chat.turn","version":1'
    assert failure(text) == invalid(message=NOT_JSON)
    assert failure(text.encode()) == invalid(message=NOT_JSON)
    assert failure(b"\xef\xbb\xbf" + json.dumps(submit()).encode()) == invalid(message=NOT_JSON)


def test_bytes_like_inputs() -> None:
    line = json.dumps(submit()).encode()
    for data in (line, bytearray(line), memoryview(line)):
        assert decode_turn_event(data).ok


def test_version_is_never_coerced_but_integral_floats_are_numbers() -> None:
    assert failure(submit(version="1")) == invalid("event-1")
    assert failure(submit(version=True)) == invalid("event-1")
    assert failure(submit(version=False))["code"] == PROTOCOL_INVALID_PAYLOAD
    assert failure(submit(version=1.5))["code"] == PROTOCOL_UNSUPPORTED_VERSION
    assert failure(submit(version=float("nan")))["code"] == PROTOCOL_UNSUPPORTED_VERSION
    assert decode_turn_event(submit(version=1.0)).event.version == 1
    assert decode_turn_event(submit(sequence=3.0)).event.sequence == 3
    assert failure(submit(sequence=True)) == invalid("event-1")
    payload = {"version": True, "code": "X", "message": "m", "retryable": False}
    assert failure(envelope("server.turn.diagnostic", payload)) == invalid("event-1")


def test_unknown_event_needs_a_string_event_and_version_one() -> None:
    assert failure(submit(event="x.y"))["code"] == PROTOCOL_UNKNOWN_EVENT
    assert failure(submit(event="x.y", version=1.0))["code"] == PROTOCOL_UNKNOWN_EVENT
    assert failure(submit(event=None))["code"] == PROTOCOL_INVALID_PAYLOAD
    assert failure(submit(event="x.y", version=2))["code"] == PROTOCOL_UNSUPPORTED_VERSION
    assert failure(submit(event="x.y", protocol="other"))["code"] == PROTOCOL_INVALID_PAYLOAD


def test_submit_input_has_no_schema_maximum() -> None:
    big = "x" * 1_000_000
    assert decode_turn_event(submit(big)).event.payload.input == big


# --- structural bounds --------------------------------------------------------------------


def test_hundred_thousand_brackets_give_the_diagnostic() -> None:
    text = "[" * 100_000 + "]" * 100_000
    assert failure(text) == invalid()
    assert failure(text.encode()) == invalid()
    buried = json.dumps(submit()).replace('"hello"', '"hello","x":' + text)
    assert failure(buried) == invalid()
    assert failure("[" * 100_000) == invalid()


def test_text_nesting_at_and_past_the_parser_bound() -> None:
    # The event object itself is one level; an extra field nests the rest around a scalar.
    def with_nesting(levels: int) -> str:
        extra = "[" * (levels - 1) + "0" + "]" * (levels - 1)
        return json.dumps(submit()).replace('"version": 1', f'"version": 1, "x": {extra}')

    assert decode_turn_event(with_nesting(JSON_MAX_NESTING)).ok
    assert failure(with_nesting(JSON_MAX_NESTING + 1)) == invalid()


def test_dict_nesting_at_and_past_the_bound() -> None:
    # Same shape as the text case: `levels` containers around a scalar.
    def with_nesting(levels: int) -> dict[str, Any]:
        extra: Any = 0
        for _ in range(levels - 1):
            extra = [extra]
        return submit(x=extra)

    assert decode_turn_event(with_nesting(JSON_MAX_NESTING)).ok
    assert failure(with_nesting(JSON_MAX_NESTING + 1)) == invalid("event-1")


def test_very_deep_dict_gives_the_diagnostic_without_recursion() -> None:
    deep: Any = {}
    for _ in range(100_000):
        deep = {"d": deep}
    assert failure(submit(x=deep)) == invalid("event-1")
    assert failure(deep) == invalid()
    event = snapshot([{**MESSAGE, "metadata": deep}])
    assert failure(event) == invalid("event-1")


def test_event_node_bound_at_and_past() -> None:
    # root + 8 envelope scalars + payload + input + the extra list = 12 nodes.
    filler = TURN_EVENT_MAX_NODES - 12
    assert decode_turn_event(submit(x=[0] * filler)).ok
    assert failure(submit(x=[0] * (filler + 1))) == invalid("event-1")


def test_snapshot_messages_obey_the_memory_record_caps() -> None:
    def messages_with_record_nodes(total: int) -> list[dict[str, Any]]:
        # Record: root, version, messages list, message dict + 5 fields, metadata, list.
        return [{**MESSAGE, "metadata": {"l": [0] * (total - 11)}}]

    assert decode_turn_event(snapshot(messages_with_record_nodes(MEMORY_RECORD_MAX_NODES))).ok
    too_many = snapshot(messages_with_record_nodes(MEMORY_RECORD_MAX_NODES + 1))
    assert failure(too_many) == invalid("event-1")
    nested: Any = "leaf"
    for _ in range(29):
        nested = {"d": nested}
    assert decode_turn_event(snapshot([{**MESSAGE, "metadata": nested}])).ok
    assert failure(snapshot([{**MESSAGE, "metadata": {"d": nested}}])) == invalid("event-1")


def test_cyclic_dicts_give_the_diagnostic() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    assert failure(snapshot([{**MESSAGE, "metadata": cyclic}])) == invalid("event-1")
    event = submit()
    event["payload"]["loop"] = event
    assert failure(event) == invalid("event-1")
    looped: list[Any] = []
    looped.append(looped)
    assert failure(looped) == invalid()


def test_cyclic_event_with_version_skew_still_reports_the_version() -> None:
    event = submit(version=2)
    event["self"] = event
    assert failure(event)["code"] == PROTOCOL_UNSUPPORTED_VERSION


class Explosive:
    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("blocked")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("blocked")

    __hash__ = None  # type: ignore[assignment]


class ExplosiveDict(dict):  # type: ignore[type-arg]
    def __getitem__(self, key: Any) -> Any:
        raise RuntimeError("blocked")

    def get(self, *args: Any) -> Any:
        raise RuntimeError("blocked")

    def items(self) -> Any:
        raise RuntimeError("blocked")

    def keys(self) -> Any:
        raise RuntimeError("blocked")


class ExplosiveStr(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("blocked")

    __hash__ = str.__hash__


@pytest.mark.parametrize(
    "data",
    [
        None,
        0,
        1.5,
        float("nan"),
        True,
        [],
        (),
        set(),
        object(),
        Explosive(),
        ExplosiveDict(submit()),
        submit(payload=Explosive()),
        submit(protocol=ExplosiveStr("agentskit.chat.turn")),
        submit(event=ExplosiveStr("client.turn.submit")),
        submit("hi", x=ExplosiveDict()),
        submit(x={"when": datetime.now(UTC)}),
        submit(x=float("inf")),
        {1: 2},
        {"protocol": "agentskit.chat.turn", "version": 1, "event": "x", ExplosiveStr("k"): 1},
    ],
    ids=repr,
)
def test_hostile_inputs_never_raise(data: Any) -> None:
    result = decode_turn_event(data)
    assert not result.ok or isinstance(result.event, SubmitTurnEvent)
    if not result.ok:
        assert result.diagnostic is not None
        assert result.diagnostic.code in CODES
        assert result.diagnostic.message in FIXED_MESSAGES
        assert result.diagnostic.retryable is False


def test_host_objects_that_are_not_json_are_invalid() -> None:
    # The echo reads the dict's storage directly, never the subclass's methods.
    assert failure(ExplosiveDict(submit())) == invalid("event-1")
    assert failure(submit(x={"when": datetime.now(UTC)})) == invalid("event-1")
    assert failure(submit(x=float("inf"))) == invalid("event-1")
    assert failure(submit(x=(1, 2))) == invalid("event-1")


def test_decoded_models_can_be_decoded_again() -> None:
    event = decode_turn_event(snapshot([MESSAGE])).event
    again = decode_turn_event(event)
    assert again.ok and again.event == event.to_wire()


# --- encode --------------------------------------------------------------------------------


def test_encode_writes_one_line_and_refuses_invalid_events() -> None:
    line = encode_turn_event(submit("a\nb"))
    assert "\n" not in line and json.loads(line) == submit("a\nb")
    model = decode_turn_event(snapshot([MESSAGE])).event
    assert json.loads(encode_turn_event(model)) == snapshot([MESSAGE])
    for bad in (submit(" "), submit(version=2), submit(event="x.y"), "{}", None, [], 5):
        with pytest.raises(ProtocolError) as caught:
            encode_turn_event(bad)
        assert caught.value.code == PROTOCOL_INVALID_PAYLOAD
        assert caught.value.message == INVALID
        assert caught.value.__context__ is None


# --- create_snapshot_event -------------------------------------------------------------------


def test_create_snapshot_event_from_models_and_dicts() -> None:
    when = datetime(2026, 7, 11, 5, 0, 0, 250000, tzinfo=timezone(timedelta(hours=2)))
    event = create_snapshot_event(
        event_id="e1",
        session_id="s1",
        turn_id="t1",
        sequence=4,
        emitted_at=when,
        messages=[
            new_message("m1", "user", "Hi", "complete", "2026-07-11T03:00:00.000Z"),
            {**MESSAGE, "id": "m2", "createdAt": when, "future": 1},
        ],
        status="error",
        usage=TokenUsage.model_validate(USAGE),
        lineage=DerivedLineage.model_validate(
            {"operation": "edit", "parentTurnId": "t0", "sourceMessageId": "m1"}
        ),
        error=CHAT_TURN_FAILED.diagnostic(),
    )
    assert isinstance(event, SnapshotTurnEvent)
    wire = event.to_wire()
    assert wire["emittedAt"] == "2026-07-11T03:00:00.250Z"
    assert [message["id"] for message in wire["payload"]["messages"]] == ["m1", "m2"]
    assert wire["payload"]["messages"][1]["createdAt"] == "2026-07-11T03:00:00.250Z"
    assert "future" not in wire["payload"]["messages"][1]
    assert list(wire["payload"]) == ["messages", "status", "usage", "error", "lineage"]
    assert wire["payload"]["error"] == {
        "version": 1,
        "code": "CHAT_TURN_FAILED",
        "message": "The chat turn failed.",
        "retryable": True,
    }
    assert decode_turn_event(encode_turn_event(event)).event == wire


@pytest.mark.parametrize(
    "lineage",
    [
        None,
        {"operation": "submit"},
        SubmitLineage.model_validate({"operation": "submit"}),
        {"operation": "retry", "parentTurnId": "t0", "sourceMessageId": "m0"},
        {"operation": "regenerate", "parentTurnId": "t0", "sourceMessageId": "m0"},
    ],
)
def test_create_snapshot_event_lineage_variants(lineage: Any) -> None:
    event = create_snapshot_event(
        event_id="e1",
        session_id="s1",
        turn_id="t1",
        sequence=0,
        emitted_at="2026-07-11T03:00:00Z",
        messages=[],
        status="idle",
        usage=USAGE,
        lineage=lineage,
    )
    payload = event.to_wire()["payload"]
    if lineage is None:
        assert "lineage" not in payload
    else:
        expected = lineage if isinstance(lineage, dict) else lineage.to_wire()
        assert payload["lineage"] == expected


@pytest.mark.parametrize(
    "change",
    [
        {"event_id": "bad id"},
        {"session_id": ""},
        {"sequence": -1},
        {"sequence": True},
        {"emitted_at": "2026-02-30T00:00:00Z"},
        {"status": "done"},
        {"usage": {"promptTokens": 1}},
        {"messages": [{**MESSAGE, "role": "bot"}]},
        {"lineage": {"operation": "edit"}},
        {"error": {"version": 1, "code": "lower", "message": "m", "retryable": True}},
    ],
)
def test_create_snapshot_event_raises_on_invalid_fields(change: dict[str, Any]) -> None:
    arguments: dict[str, Any] = {
        "event_id": "e1",
        "session_id": "s1",
        "turn_id": "t1",
        "sequence": 0,
        "emitted_at": "2026-07-11T03:00:00Z",
        "messages": [MESSAGE],
        "status": "complete",
        "usage": USAGE,
    }
    arguments.update(change)
    with pytest.raises(ProtocolError) as caught:
        create_snapshot_event(**arguments)
    assert caught.value.code == PROTOCOL_INVALID_PAYLOAD


# --- cursor ------------------------------------------------------------------------------------


@pytest.mark.parametrize("session_id", ["", "a b", "-x", "s" * 129, None, 5, TrickyStr("s")])
def test_cursor_needs_a_safe_session_id(session_id: Any) -> None:
    with pytest.raises(ValueError) as caught:
        TurnSnapshotCursor(session_id)
    assert isinstance(caught.value, ProtocolError)


def test_cursor_state_is_immutable() -> None:
    cursor = TurnSnapshotCursor("session-1")
    assert cursor.snapshot is None
    current = snapshot([{**MESSAGE, "metadata": {"a": [1]}}], sequence=5)
    assert cursor.apply(current)
    accepted = cursor.snapshot
    assert accepted is not None
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen-instance error
        accepted.sequence = 0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        accepted.payload.messages.append(None)  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        accepted.payload.messages[0].metadata["b"] = 1  # type: ignore[index]
    wire = accepted.to_wire()
    wire["sequence"] = 0
    wire["payload"]["messages"].clear()
    current["sequence"] = 1
    current["payload"]["messages"][0]["metadata"]["a"].append(2)
    assert cursor.snapshot is accepted
    assert accepted.sequence == 5
    assert accepted.to_wire()["payload"]["messages"][0]["metadata"] == {"a": [1]}
    assert not cursor.apply(snapshot(sequence=4, eventId="stale-after-mutation"))


def test_cursor_accepts_models_and_text() -> None:
    cursor = TurnSnapshotCursor("session-1")
    model = decode_turn_event(snapshot(sequence=1)).event
    assert cursor.apply(model)
    assert not cursor.apply(model)
    assert cursor.apply(encode_turn_event(snapshot(sequence=2)).encode())
    assert cursor.snapshot is not None and cursor.snapshot.sequence == 2


def test_cursor_is_inert_on_hostile_input() -> None:
    cursor = TurnSnapshotCursor("session-1")
    for data in (Explosive(), ExplosiveDict(snapshot()), None, "{", b"\xff", snapshot(version=2)):
        assert cursor.apply(data) is False
    assert cursor.snapshot is None


def test_cursor_ignores_other_kinds_even_first() -> None:
    cursor = TurnSnapshotCursor("session-1")
    assert not cursor.apply(submit(sequence=0))
    assert not cursor.apply(diagnostic_event(sequence=0))
    assert cursor.apply(snapshot(sequence=0))
    assert cursor.session_id == "session-1"


# --- reference server table ----------------------------------------------------------------


def test_server_error_table() -> None:
    expected = {
        "REQUEST_METHOD_NOT_ALLOWED": (405, False),
        "REQUEST_UNSUPPORTED_MEDIA_TYPE": (415, False),
        "REQUEST_TOO_LARGE": (413, False),
        "REQUEST_INVALID_JSON": (400, False),
        "REQUEST_INVALID_EVENT": (400, False),
        "SESSION_BUSY": (409, True),
        "SESSION_CONFLICT": (409, True),
        "SERVER_TIMEOUT": (408, True),
        "REQUEST_CANCELLED": (499, True),
        "SERVER_INTERNAL": (500, True),
        "SERVER_INVALID_CONFIG": (500, False),
        "CHAT_TURN_FAILED": (None, True),
    }
    assert {code: (spec.status, spec.retryable) for code, spec in TURN_SERVER_ERRORS.items()} == (
        expected
    )
    for spec in TURN_SERVER_ERRORS.values():
        assert isinstance(spec.diagnostic(), TurnDiagnostic)
        assert spec.diagnostic().to_wire() == spec.to_wire()
    assert SESSION_BUSY.retryable and SESSION_CONFLICT.retryable
    assert CHAT_TURN_FAILED.message == "The chat turn failed."
    assert REQUEST_INVALID_EVENT.error_body() == {
        "error": {
            "version": 1,
            "code": "REQUEST_INVALID_EVENT",
            "message": "Request body must be a valid turn submission.",
            "retryable": False,
        }
    }


def test_server_headers() -> None:
    assert TURN_STREAM_HEADERS == {
        "content-type": "application/x-ndjson; charset=utf-8",
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
    }
    assert TURN_ERROR_HEADERS["cache-control"] == "no-store"
    with pytest.raises(TypeError):
        TURN_STREAM_HEADERS["x"] = "y"  # type: ignore[index]


@pytest.mark.parametrize(
    ("status", "count", "expected"),
    [
        ("error", 0, "error"),
        ("error", 3, "error"),
        ("streaming", 0, "streaming"),
        ("streaming", 2, "streaming"),
        ("idle", 0, "idle"),
        ("idle", 2, "complete"),
        ("complete", 0, "idle"),
    ],
)
def test_snapshot_status_mapping(status: str, count: int, expected: str) -> None:
    assert snapshot_status(status, count) == expected


# --- properties ------------------------------------------------------------------------------

json_like = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["agentskit.chat.turn", "client.turn.submit", "server.turn.snapshot"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["protocol", "version", "event", "eventId", "payload", "messages", "input", "x"]
            )
            | st.text(max_size=6),
            children,
            max_size=6,
        )
    ),
    max_leaves=30,
)


def assert_safe_failure_or_event(data: Any) -> None:
    result = decode_turn_event(data)
    if result.ok:
        assert isinstance(result.event, (SubmitTurnEvent, SnapshotTurnEvent, DiagnosticTurnEvent))
        return
    assert result.diagnostic is not None
    assert result.diagnostic.code in CODES
    assert result.diagnostic.message in FIXED_MESSAGES
    assert result.diagnostic.retryable is False


@settings(max_examples=400, deadline=None)
@given(json_like)
def test_decode_never_raises_on_json_like_values(value: Any) -> None:
    assert_safe_failure_or_event(value)
    for key in ("payload", "version", "event"):
        assert_safe_failure_or_event(submit(**{key: value}))
    try:
        text = json.dumps(value)
    except (ValueError, TypeError):
        return
    assert_safe_failure_or_event(text)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200))
def test_decode_never_raises_on_bytes_or_text(data: bytes | str) -> None:
    assert_safe_failure_or_event(data)
    line = json.dumps(submit()).encode()
    cut = len(data) % (len(line) + 1)
    spliced = line[:cut] + (
        data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    )
    assert_safe_failure_or_event(spliced)


secret_text = st.text(min_size=1, max_size=30).map(lambda text: "\u2603" + text)


def leaky_event(secret: str, where: str) -> dict[str, Any]:
    """An invalid event carrying `secret` in the named place."""
    if where == "input":
        return submit(secret, sequence=-1)
    if where == "extra":
        return submit(" ", secret=secret)
    if where == "code":
        payload = {"version": 1, "code": secret, "message": secret, "retryable": False}
        return diagnostic_event(payload=payload)
    return submit(**{where: secret})


@settings(max_examples=300, deadline=None)
@given(secret_text, st.sampled_from(["input", "extra", "protocol", "event", "version", "code"]))
def test_diagnostics_never_contain_payload_text(secret: str, where: str) -> None:
    data = leaky_event(secret, where)
    for form in (data, json.dumps(data), json.dumps(data)[:-1]):
        result = decode_turn_event(form)
        assert not result.ok and result.diagnostic is not None
        rendered = json.dumps(result.diagnostic.to_wire()) + repr(result.diagnostic)
        assert secret not in rendered
        assert json.dumps(secret)[1:-1] not in rendered


hostile_text = st.text(
    st.characters(codec=None)
    | st.sampled_from(["\n", "\r", "\x1e", "\u2028", "\u2029", "\u0085", "\ud800", "\udfff"])
    | st.sampled_from(["\U0001f600", '"', "\\", "<", "\ufeff", "\x00"]),
    min_size=1,
    max_size=40,
)


def assert_round_trip(event: dict[str, Any]) -> None:
    line = encode_turn_event(event)
    for breaker in ("\n", "\r", "\u2028", "\u2029"):
        assert breaker not in line
    line.encode("utf-8")  # strict: no lone surrogate survives unescaped
    decoded = decode_turn_event(line)
    assert decoded.ok, line
    assert decoded.event.to_wire() == event
    assert decode_turn_event(line.encode("utf-8")).event.to_wire() == event
    assert encode_turn_event(decoded.event) == line


@settings(max_examples=300, deadline=None)
@given(hostile_text.filter(lambda text: not js_is_blank(text)), hostile_text)
def test_submit_round_trips_hostile_text(text: str, extra: str) -> None:
    assert_round_trip(submit(text))
    line = encode_turn_event(submit(text, x=extra, payload={"input": text, "y": extra}))
    assert line == encode_turn_event(submit(text))


@settings(max_examples=200, deadline=None)
@given(hostile_text, hostile_text, hostile_text, st.integers(0, JS_MAX_SAFE_INTEGER))
def test_snapshot_round_trips_hostile_text(
    content: str, key: str, value: str, sequence: int
) -> None:
    message = {
        **MESSAGE,
        "content": content,
        "metadata": {key: [value, {"k": value}]},
        "toolCalls": [{"id": value, "name": content, "args": {key: value}, "status": "complete"}],
        "parts": [{"type": "text", "text": value}],
    }
    event = snapshot([message], sequence=sequence)
    event["payload"]["error"] = {"version": 1, "code": "X", "message": content, "retryable": True}
    assert_round_trip(event)
    diagnostic = diagnostic_event(
        payload={"version": 1, "code": "CODE_1", "message": value, "retryable": False}
    )
    assert_round_trip(diagnostic)


def test_round_trip_of_every_valid_fixture_event() -> None:
    for case in load_fixture("turn.json")["cases"]:
        if case["expect"]["ok"] and "input" in case:
            assert_round_trip(copy.deepcopy(case["expect"]["value"]))


def test_nesting_depth_skips_strings_counts_the_limit_and_stays_linear() -> None:
    import time

    from agentskit_web.protocol.wire_json import nesting_depth_exceeds

    at, past = JSON_MAX_NESTING, JSON_MAX_NESTING + 1
    assert not nesting_depth_exceeds("[" * at + "]" * at)
    assert nesting_depth_exceeds("[" * past + "]" * past)
    braces_in_strings = json.dumps({"content": "{" * 5000, "more": ["[" * 5000, '\\"{{']})
    assert not nesting_depth_exceeds(braces_in_strings)
    # An escaped quote does not end the string; an escaped backslash before a quote does.
    assert not nesting_depth_exceeds('["\\"' + "{" * past + '"]')
    assert nesting_depth_exceeds('["\\\\",' + "[" * past + "]" * past + "]")
    # A quote never closed (no JSON): one pass, however many backslashes and quotes follow.
    hostile = '"\\' * 200_000 + "[" * past
    started = time.perf_counter()
    nesting_depth_exceeds(hostile)
    assert time.perf_counter() - started < 2.0
