"""Ask event shapes: strict, bounded, never raising; limits at and past each bound."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentskit_web.protocol import (
    AskDoneEvent,
    AskErrorEvent,
    AskTextEvent,
    AskToolEvent,
    ask_event_wire_or_none,
)
from agentskit_web.protocol.limits import (
    ASK_ERROR_CODE_MAX_CHARS,
    ASK_ERROR_MESSAGE_MAX_CHARS,
    ASK_MODEL_MAX_CHARS,
    ASK_TEXT_DELTA_MAX_CHARS,
    ASK_TOOL_ARG_KEY_MAX_CHARS,
    ASK_TOOL_ID_MAX_CHARS,
    ASK_TOOL_NAME_MAX_CHARS,
)

EMOJI = "😀"  # two UTF-16 code units


def tool(**changes: Any) -> dict[str, Any]:
    return {"type": "tool", "id": "t-1", "name": "cite", "args": {}, **changes}


@pytest.mark.parametrize(
    "event",
    [
        {"type": "text", "delta": "hi"},
        {"type": "text", "delta": ""},
        tool(args={"sources": [{"title": "A", "path": "/a"}], "n": 1.5, "z": None}),
        {"type": "done"},
        {"type": "done", "model": "m"},
        {"type": "error", "message": "m"},
        {"type": "error", "message": "m", "code": "ASK_TIMEOUT", "retryable": True},
    ],
)
def test_valid_events_round_trip(event: dict[str, Any]) -> None:
    assert ask_event_wire_or_none(event) == event
    assert ask_event_wire_or_none(json.dumps(event)) == event
    assert ask_event_wire_or_none(json.dumps(event).encode()) == event


@pytest.mark.parametrize(
    "event",
    [
        {"type": "text", "delta": "x", "extra": None},
        {"type": "done", "extra": 1},
        tool(extra=True),
        {"type": "error", "message": "m", "details": "x"},
        {"type": "done", "model": None},
        {"type": "error", "message": "m", "code": None},
        {"type": "error", "message": "m", "retryable": None},
        {"type": "error", "message": "m", "retryable": 1},
        {"type": "error", "message": "m", "retryable": "true"},
        {"type": "error", "message": ""},
        {"type": "error"},
        {"type": "text"},
        {"type": "text", "delta": 5},
        tool(args=[]),
        tool(args="x"),
        tool(id=1),
        {"type": "tool", "id": "t", "name": "n"},
        {"type": "answer", "markdown": "x"},
        {"type": "cite"},
        {"type": None},
        {"delta": "no type"},
    ],
)
def test_invalid_events_are_none(event: dict[str, Any]) -> None:
    assert ask_event_wire_or_none(event) is None


@pytest.mark.parametrize(
    ("field", "limit", "build"),
    [
        ("delta", ASK_TEXT_DELTA_MAX_CHARS, lambda v: {"type": "text", "delta": v}),
        ("id", ASK_TOOL_ID_MAX_CHARS, lambda v: tool(id=v)),
        ("name", ASK_TOOL_NAME_MAX_CHARS, lambda v: tool(name=v)),
        ("arg key", ASK_TOOL_ARG_KEY_MAX_CHARS, lambda v: tool(args={v: 1})),
        ("model", ASK_MODEL_MAX_CHARS, lambda v: {"type": "done", "model": v}),
        ("message", ASK_ERROR_MESSAGE_MAX_CHARS, lambda v: {"type": "error", "message": v}),
    ],
)
def test_char_limits_at_and_past(field: str, limit: int, build: Any) -> None:
    assert ask_event_wire_or_none(build("a" * limit)) is not None, field
    assert ask_event_wire_or_none(build("a" * (limit + 1))) is None, field
    # Limits are UTF-16 code units: an emoji counts two.
    assert ask_event_wire_or_none(build(EMOJI * (limit // 2))) is not None, field
    assert ask_event_wire_or_none(build(EMOJI * (limit // 2) + "a")) is None, field


def test_error_code_pattern_and_length() -> None:
    def ok(code: str) -> bool:
        return ask_event_wire_or_none({"type": "error", "message": "m", "code": code}) is not None

    assert ok("A") and ok("ASK_TIMEOUT") and ok("A1_") and ok("A" * ASK_ERROR_CODE_MAX_CHARS)
    for bad in (
        "",
        "a",
        "1A",
        "_A",
        "A-B",
        "A B",
        "A\n",
        "Ä",
        "A" * (ASK_ERROR_CODE_MAX_CHARS + 1),
    ):
        assert not ok(bad), bad


def test_models_expose_the_wire_form() -> None:
    assert AskTextEvent.model_validate({"type": "text", "delta": "x"}).to_wire() == {
        "type": "text",
        "delta": "x",
    }
    assert AskDoneEvent.model_validate({"type": "done"}).to_wire() == {"type": "done"}
    error = AskErrorEvent.model_validate({"type": "error", "message": "m", "retryable": False})
    assert error.to_wire() == {"type": "error", "message": "m", "retryable": False}
    event = AskToolEvent.model_validate(tool())
    assert ask_event_wire_or_none(event) == tool()


def test_json_text_is_parsed_strictly() -> None:
    assert ask_event_wire_or_none('{"type":"text","delta":"a","delta":"b"}') is None
    assert ask_event_wire_or_none('{"type":"tool","id":"t","name":"n","args":{"x":NaN}}') is None
    assert ask_event_wire_or_none(b'{"type":"text","delta":"\xff"}') is None
    assert ask_event_wire_or_none("[" * 100_000) is None
    assert ask_event_wire_or_none("") is None


def test_hostile_host_objects_are_none_not_raised() -> None:
    cyclic: dict[str, Any] = {"type": "tool", "id": "t", "name": "n"}
    cyclic["args"] = {"self": cyclic}
    deep: Any = 0
    for _ in range(10_000):
        deep = [deep]

    class Weird(dict):  # type: ignore[type-arg]
        def get(self, *args: Any) -> Any:
            raise RuntimeError("boom")

    for value in (cyclic, tool(args={"x": deep}), Weird(type="done"), object(), None, 3, [tool()]):
        assert ask_event_wire_or_none(value) is None
    assert ask_event_wire_or_none(tool(args={"x": float("nan")})) is None


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300)
@given(
    st.one_of(
        _JSON,
        st.fixed_dictionaries(
            {"type": st.sampled_from(["text", "tool", "done", "error", "x"])},
            optional={
                "delta": _JSON,
                "id": _JSON,
                "name": _JSON,
                "args": _JSON,
                "model": _JSON,
                "message": _JSON,
                "code": _JSON,
                "retryable": _JSON,
            },
        ),
    )
)
def test_parse_never_raises_and_valid_results_are_fixed_points(value: Any) -> None:
    result = ask_event_wire_or_none(value)
    if result is not None:
        assert ask_event_wire_or_none(result) == result
        assert ask_event_wire_or_none(json.dumps(result)) == result
