"""The hand-checked hot paths give exactly what the pydantic models give."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from agentskit_web.protocol.ask_events import ask_event_or_none, ask_event_wire_from_parsed
from agentskit_web.protocol.content import AssistantTextPart, encode_part_line
from agentskit_web.protocol.diagnostics import ProtocolError
from agentskit_web.protocol.limits import (
    ASK_TEXT_DELTA_MAX_CHARS,
    ASSISTANT_CONTENT_TEXT_MAX_CODE_POINTS,
)
from agentskit_web.protocol.wire_json import dump_json, dump_json_string

# Text with the characters the metrics treat specially: astral, lone surrogates, U+2028.
TEXT = st.text(
    alphabet=st.sampled_from(["a", "\u00e9", "\U0001f680", "\ud800", "\udc00", "\u2028", '"'])
)
VALUES = st.one_of(TEXT, st.integers(), st.none(), st.lists(st.integers(), max_size=2))


def model_wire(candidate: Any) -> dict[str, Any] | None:
    event = ask_event_or_none(candidate)
    return None if event is None else event.to_wire()


@given(delta=VALUES, extra=st.dictionaries(st.sampled_from(["x", "type", "delta"]), VALUES))
def test_text_events_match_the_model(delta: Any, extra: dict[str, Any]) -> None:
    candidate = {"type": "text", "delta": delta, **extra}
    assert ask_event_wire_from_parsed(candidate) == model_wire(candidate)


def test_text_event_bound_at_and_one_past() -> None:
    at = {"type": "text", "delta": "a" * ASK_TEXT_DELTA_MAX_CHARS}
    past = {"type": "text", "delta": "a" * (ASK_TEXT_DELTA_MAX_CHARS + 1)}
    assert ask_event_wire_from_parsed(at) == at == model_wire(at)
    assert ask_event_wire_from_parsed(past) is None is model_wire(past)


class Str(str):
    """A str subclass: never taken by the fast paths."""


def test_a_str_subclass_goes_to_the_model() -> None:
    candidate = {"type": "text", "delta": Str("x")}
    assert ask_event_wire_from_parsed(candidate) == model_wire(candidate)


def model_line(part: dict[str, Any]) -> str | None:
    """The oracle: None only when the model refuses the part, never for any other error.

    A bug in the model path (a TypeError, say) must fail the comparison, not read as
    "refused" and agree with a fast path that refuses too.
    """
    try:
        model = AssistantTextPart.model_validate(part)
    except ValidationError:
        return None
    return dump_json(model.to_wire()) + "\n"


def fast_line(part: dict[str, Any]) -> str | None:
    try:
        return encode_part_line(part)
    except ProtocolError:
        return None


@given(text=VALUES, extra=st.dictionaries(st.sampled_from(["x", "frame"]), VALUES))
def test_text_records_match_the_model(text: Any, extra: dict[str, Any]) -> None:
    part = {"kind": "text", "text": text, **extra}
    assert fast_line(part) == model_line(part)


def test_text_record_bound_at_and_one_past() -> None:
    at = {"kind": "text", "text": "\U0001f680" * ASSISTANT_CONTENT_TEXT_MAX_CODE_POINTS}
    past = {"kind": "text", "text": "a" * (ASSISTANT_CONTENT_TEXT_MAX_CODE_POINTS + 1)}
    assert fast_line(at) == model_line(at) is not None
    assert fast_line(past) is None is model_line(past)


@given(text=TEXT)
def test_dump_json_string_is_dump_json_of_a_string(text: str) -> None:
    assert dump_json_string(text) == dump_json(text)
