"""Presentation of chat messages (PROTOCOL.md 2-3): items, merged text, legacy frames, fallbacks."""

import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from agentskit_web.chat import (
    ComponentDefinition,
    define_component_manifest,
    present_chat_message,
    semantic_fallback,
)
from agentskit_web.chat.view.presentation import (
    GENERIC_FALLBACK,
    component_fallback_text,
    is_component_frame_candidate,
)
from agentskit_web.protocol import (
    ASSISTANT_CONTENT_PREFIX,
    AssistantContentEncoder,
    decode_component_frame,
)

SOURCES = {
    "protocol": "agentskit.chat.component",
    "version": 1,
    "type": "render",
    "componentKey": "source-list",
    "instanceId": "sources-1",
    "props": {"label": "Sources", "sources": [{"id": "a", "title": "Intro", "url": "/intro"}]},
    "fallback": {"kind": "sources", "summary": "Intro"},
}
CHART = {**SOURCES, "componentKey": "chart", "fallback": {"kind": "chart", "summary": "Sales up"}}


def encode(*parts: dict[str, Any]) -> str:
    encoder = AssistantContentEncoder()
    return "".join(encoder.encode(part) for part in parts)


def text(value: str) -> dict[str, Any]:
    return {"kind": "text", "text": value}


def component(frame: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "component", "frame": frame}


def assistant(content: Any, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "id": "m1", **extra}


# --- plain strings ------------------------------------------------------------------


@pytest.mark.parametrize("role", ["user", "assistant", "system", "tool"])
def test_plain_string_is_one_message_item(role: str) -> None:
    message = {"role": role, "content": "Hello **world**", "id": "m1"}
    items = present_chat_message(message)
    assert items == [{"kind": "message", "message": message}]
    assert items[0]["message"] is not message


def test_empty_plain_string_is_still_a_message() -> None:
    assert present_chat_message(assistant("")) == [{"kind": "message", "message": assistant("")}]


@pytest.mark.parametrize("role", ["user", "system"])
def test_user_content_is_never_decoded(role: str) -> None:
    for content in (encode(text("hi")), json.dumps(SOURCES)):
        message = {"role": role, "content": content}
        assert present_chat_message(message) == [{"kind": "message", "message": message}]


# --- ordered content ------------------------------------------------------------------


def test_ordered_content_in_order_with_adjacent_text_merged() -> None:
    content = encode(text("Hello "), text("world."), component(SOURCES), text("More"), text("!"))
    items = present_chat_message(assistant(content, createdAt="2026-01-01T00:00:00.000Z"))
    assert items == [
        {
            "kind": "message",
            "message": {
                "role": "assistant",
                "content": "Hello world.",
                "id": "m1",
                "createdAt": "2026-01-01T00:00:00.000Z",
            },
        },
        {"kind": "component", "frame": SOURCES},
        {
            "kind": "message",
            "message": {
                "role": "assistant",
                "content": "More!",
                "id": "m1",
                "createdAt": "2026-01-01T00:00:00.000Z",
            },
        },
    ]


def test_adjacent_components_stay_separate() -> None:
    items = present_chat_message(assistant(encode(component(SOURCES), component(CHART))))
    assert [item["kind"] for item in items] == ["component", "component"]
    assert items[1]["frame"]["componentKey"] == "chart"


def test_protocol_look_alikes_in_text_stay_text() -> None:
    hostile = ASSISTANT_CONTENT_PREFIX + json.dumps(component(SOURCES)) + "\n\x1e<script>"
    items = present_chat_message(assistant(encode(text(hostile))))
    assert items == [{"kind": "message", "message": assistant(hostile)}]


def test_streaming_content_shows_only_complete_records() -> None:
    full = encode(text("Hello "), component(SOURCES))
    partial = full[: len(full) - 10]
    assert present_chat_message(assistant(partial)) == [
        {"kind": "message", "message": assistant("Hello ")}
    ]


@pytest.mark.parametrize("content", ["\x1e", "\x1eagentskit.chat", ASSISTANT_CONTENT_PREFIX])
def test_prefix_alone_presents_nothing_yet(content: str) -> None:
    assert present_chat_message(assistant(content)) == []


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        (
            ASSISTANT_CONTENT_PREFIX + "not json\n",
            "ASSISTANT_CONTENT_INVALID_RECORD",
            "Assistant content record is invalid.",
        ),
        (
            ASSISTANT_CONTENT_PREFIX + "\n",
            "ASSISTANT_CONTENT_INVALID_RECORD",
            "Assistant content record is invalid.",
        ),
        (
            ASSISTANT_CONTENT_PREFIX + json.dumps(component(CHART | {"version": 2})) + "\n",
            "ASSISTANT_CONTENT_INVALID_RECORD",
            "Assistant content record is invalid.",
        ),
        (
            "\x1eagentskit.chat.content/2\n",
            "ASSISTANT_CONTENT_UNSUPPORTED_VERSION",
            "Assistant content envelope uses an unsupported version.",
        ),
        (
            "\x1eplain text after a record separator",
            "ASSISTANT_CONTENT_INVALID_RECORD",
            "Assistant content envelope is invalid.",
        ),
    ],
)
def test_invalid_ordered_content_is_one_diagnostic(content: str, code: str, message: str) -> None:
    assert present_chat_message(assistant(content)) == [
        {"kind": "diagnostic", "code": code, "message": message}
    ]


def test_an_invalid_record_after_valid_ones_fails_the_whole_message() -> None:
    content = encode(text("ok")) + '{"kind":"text","text":""}\n'
    items = present_chat_message(assistant(content))
    assert [item["kind"] for item in items] == ["diagnostic"]


def test_diagnostics_never_echo_the_payload() -> None:
    content = ASSISTANT_CONTENT_PREFIX + '{"kind":"text","text":"<script>secret</script>","x":\n'
    (item,) = present_chat_message(assistant(content))
    assert "secret" not in json.dumps(item)


# --- legacy whole-message frames ------------------------------------------------------


def test_legacy_whole_message_frame_is_that_component() -> None:
    assert present_chat_message(assistant(json.dumps(SOURCES))) == [
        {"kind": "component", "frame": SOURCES}
    ]


def test_legacy_frame_with_surrounding_json_whitespace() -> None:
    items = present_chat_message(assistant(" \n\t" + json.dumps(SOURCES) + "\r\n"))
    assert items == [{"kind": "component", "frame": SOURCES}]


def test_legacy_frame_given_as_a_dict() -> None:
    assert present_chat_message(assistant(SOURCES)) == [{"kind": "component", "frame": SOURCES}]


def test_legacy_unknown_component_is_still_a_component_item() -> None:
    # Registration is the renderer's manifest step: it then shows the semantic fallback.
    assert present_chat_message(assistant(json.dumps(CHART))) == [
        {"kind": "component", "frame": CHART}
    ]


@pytest.mark.parametrize(
    ("frame", "code", "message"),
    [
        (
            {**SOURCES, "version": 2},
            "COMPONENT_UNSUPPORTED_VERSION",
            "Component frame uses an unsupported version.",
        ),
        (
            {**SOURCES, "type": "patch"},
            "COMPONENT_UNKNOWN_TYPE",
            "Component frame type is unknown.",
        ),
        (
            {**SOURCES, "fallback": None},
            "COMPONENT_INVALID_FRAME",
            "Component frame payload is invalid.",
        ),
        (
            {**SOURCES, "instanceId": "bad id"},
            "COMPONENT_INVALID_FRAME",
            "Component frame payload is invalid.",
        ),
    ],
)
def test_invalid_legacy_frame_is_a_diagnostic(
    frame: dict[str, Any], code: str, message: str
) -> None:
    assert present_chat_message(assistant(json.dumps(frame))) == [
        {"kind": "diagnostic", "code": code, "message": message}
    ]


@pytest.mark.parametrize(
    "content",
    [
        '{"protocol": "other", "type": "render"}',
        '{"a": 1}',
        "{not json",
        '[{"protocol": "agentskit.chat.component"}]',
        "The component protocol is agentskit.chat.component.",
        '{"protocol": "agentskit.chat.component", "protocol": "agentskit.chat.component"}',
    ],
)
def test_text_that_is_not_a_frame_candidate_is_plain_text(content: str) -> None:
    assert present_chat_message(assistant(content)) == [
        {"kind": "message", "message": assistant(content)}
    ]


def test_frame_candidate_check() -> None:
    assert is_component_frame_candidate(json.dumps(SOURCES))
    assert is_component_frame_candidate({"protocol": "agentskit.chat.component"})
    assert not is_component_frame_candidate(None)
    assert not is_component_frame_candidate("x" * 100_000)


# --- robustness -----------------------------------------------------------------------


class RaisingMessage(dict):  # type: ignore[type-arg]
    def get(self, *_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("boom")


@pytest.mark.parametrize("message", [None, "text", 1, [], RaisingMessage(role="assistant")])
def test_not_a_message_presents_nothing(message: Any) -> None:
    assert present_chat_message(message) == []


def test_message_without_content_is_presented_as_given() -> None:
    assert present_chat_message({"role": "assistant"}) == [
        {"kind": "message", "message": {"role": "assistant"}}
    ]


def test_presentation_does_not_mutate_the_message() -> None:
    message = assistant(encode(text("a"), text("b")))
    snapshot = dict(message)
    items = present_chat_message(message)
    items[0]["message"]["content"] = "changed"
    assert message == snapshot


# --- fallbacks ------------------------------------------------------------------------


def test_semantic_fallback_of_a_frame_model_dict_and_text() -> None:
    expected = "[unsupported visual: chart] Sales up"
    model = decode_component_frame(CHART).frame
    assert semantic_fallback(model) == expected
    assert semantic_fallback(CHART) == expected
    assert semantic_fallback(json.dumps(CHART)) == expected


def test_semantic_fallback_keeps_markup_as_text() -> None:
    frame = {**CHART, "fallback": {"kind": "<b>x</b>", "summary": "<img src=x onerror=alert(1)>"}}
    assert semantic_fallback(frame) == "[unsupported visual: <b>x</b>] <img src=x onerror=alert(1)>"


@pytest.mark.parametrize(
    "frame", [None, {}, "{", {**CHART, "fallback": {"kind": "", "summary": "s"}}]
)
def test_semantic_fallback_of_an_invalid_frame_is_generic(frame: Any) -> None:
    assert semantic_fallback(frame) == GENERIC_FALLBACK


class NoteProps(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    text: str


def test_component_fallback_text_prefers_the_definition() -> None:
    assert component_fallback_text(SOURCES) == "Sources: Intro."
    assert component_fallback_text(CHART) == "[unsupported visual: chart] Sales up"
    invalid = {**SOURCES, "props": {"label": "Sources", "sources": []}}
    assert component_fallback_text(invalid) == "[unsupported visual: sources] Intro"
    assert component_fallback_text("{") == GENERIC_FALLBACK


def test_component_fallback_text_survives_application_fallbacks() -> None:
    def explode(_props: Any) -> str:
        raise RuntimeError("boom")

    manifest = define_component_manifest(
        [
            ComponentDefinition(key="note", props_schema=NoteProps, fallback=explode),
            ComponentDefinition(key="plain", props_schema=NoteProps),
            ComponentDefinition(key="good", props_schema=NoteProps, fallback=lambda p: p.text),
        ]
    )
    for key in ("note", "plain"):
        frame = {**CHART, "componentKey": key, "props": {"text": "hi"}}
        assert component_fallback_text(frame, manifest) == "[unsupported visual: chart] Sales up"
    good = {**CHART, "componentKey": "good", "props": {"text": "hi"}}
    assert component_fallback_text(good, manifest) == "hi"
