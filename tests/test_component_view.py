"""Component frames -> view tree: standard keys render, the rest falls back, nothing raises."""

from typing import Any

import pytest

from agentskit_web.chat import (
    STANDARD_COMPONENTS,
    define_component_manifest,
    validate_component_event,
)
from agentskit_web.chat.components.catalog import ComponentDefinition
from agentskit_web.chat.components.standard import LinkCardProps
from agentskit_web.chat.view.component_view import (
    COMPONENT_EVENT,
    COMPONENT_SUBMIT,
    NO_EVENT_VALUE,
    build_component_event,
    component_view,
)
from agentskit_web.chat.view.tree import Node, links_of, text_of, walk

PROPS: dict[str, dict[str, Any]] = {
    "button-group": {
        "label": "Pick",
        "buttons": [
            {"id": "a", "label": "A", "variant": "primary"},
            {"id": "b", "label": "B", "disabled": True},
        ],
    },
    "choice-list": {
        "prompt": "Which?",
        "choices": [{"id": "x", "label": "X", "description": "the x"}, {"id": "y", "label": "Y"}],
    },
    "form": {
        "title": "Contact",
        "submitLabel": "Send",
        "fields": [
            {"id": "name", "label": "Name", "type": "text", "required": True, "placeholder": "you"},
            {"id": "n", "label": "N", "type": "number"},
            {"id": "ok", "label": "OK", "type": "checkbox"},
            {"id": "c", "label": "C", "type": "select", "options": [{"id": "o1", "label": "O1"}]},
        ],
    },
    "confirmation": {
        "title": "Sure?",
        "message": "Really",
        "confirmLabel": "Yes",
        "cancelLabel": "No",
    },
    "progress": {"label": "Indexing", "value": 42.5, "status": "busy"},
    "source-list": {
        "label": "Sources",
        "sources": [
            {
                "id": "s1",
                "title": "Install <b>",
                "url": "/docs/install#pip",
                "snippet": "<img onerror>",
            },
            {"id": "s2", "title": "No link"},
        ],
    },
    "link-card": {
        "title": "Guide",
        "description": "Read",
        "href": "https://example.com/g",
        "label": "Open",
    },
    "error-notice": {"title": "Oops", "message": "Failed", "code": "E_X", "retryLabel": "Again"},
    "tool-call": {"name": "search", "status": "complete", "arguments": {"q": "x"}, "result": None},
    "approval-request": {
        "title": "Deploy",
        "description": "to prod",
        "approveLabel": "Go",
        "denyLabel": "Stop",
    },
    "table": {
        "caption": "Plans",
        "columns": [{"key": "name", "label": "Name"}, {"key": "price", "label": "Price"}],
        "rows": [{"name": "Free", "price": 0}, {"name": "Pro", "price": 12.5, "extra": True}],
    },
    "file-attachment": {
        "name": "a.pdf",
        "mimeType": "application/pdf",
        "sizeBytes": 2048,
        "url": "/a.pdf",
    },
}


def frame(key: str, props: Any, **changes: Any) -> dict[str, Any]:
    wire = {
        "protocol": "agentskit.chat.component",
        "version": 1,
        "type": "render",
        "componentKey": key,
        "instanceId": "i-1",
        "props": props,
        "fallback": {"kind": key, "summary": "<script>alert(1)</script> summary"},
    }
    wire.update(changes)
    return wire


def nodes(root: Node) -> list[Node]:
    return [item for event, item in walk(root) if event == "open" and isinstance(item, Node)]


def test_every_standard_key_has_a_view() -> None:
    assert set(PROPS) == set(STANDARD_COMPONENTS)


@pytest.mark.parametrize("key", sorted(PROPS))
def test_standard_component_renders_its_view(key: str) -> None:
    view = component_view(frame(key, PROPS[key]))
    assert view.attr("data-key") == key and view.attr("data-instance") == "i-1"
    assert "ak-fallback" not in (view.attr("class") or "")
    assert text_of(view).strip()


@pytest.mark.parametrize("key", sorted(PROPS))
def test_every_control_event_validates_against_its_frame(key: str) -> None:
    wire = frame(key, PROPS[key])
    for node in nodes(component_view(wire)):
        if node.attr("data-action") != COMPONENT_EVENT or node.attr("disabled") is not None:
            continue
        value = node.attr("data-value")
        event = build_component_event(
            key, "i-1", node.attr("data-event") or "", NO_EVENT_VALUE if value is None else value
        )
        assert validate_component_event(None, event, wire).ok, (key, event)


def test_source_list_is_a_list_of_safe_links_with_snippets() -> None:
    view = component_view(frame("source-list", PROPS["source-list"]))
    assert links_of(view) == ["/docs/install#pip"]
    listing = next(node for node in nodes(view) if node.tag == "ul")
    assert listing.attr("role") == "list" and listing.attr("aria-label") == "Sources"
    text = text_of(view)
    assert "Install <b>" in text and "<img onerror>" in text and "No link" in text


def test_form_submit_button_and_field_names() -> None:
    view = component_view(frame("form", PROPS["form"]))
    found = nodes(view)
    assert [n.attr("name") for n in found if n.tag in ("input", "select")] == [
        "name",
        "n",
        "ok",
        "c",
    ]
    assert any(n.attr("data-action") == COMPONENT_SUBMIT for n in found)


def test_submit_value_validates() -> None:
    wire = frame("form", PROPS["form"])
    event = build_component_event("form", "i-1", "submit", {"name": "Ada", "ok": True, "c": "o1"})
    assert validate_component_event(None, event, wire).ok


def test_unknown_component_shows_its_semantic_fallback() -> None:
    view = component_view(frame("weather-card", {"x": 1}))
    assert view.attr("class") == "ak-fallback" and view.attr("role") == "note"
    assert text_of(view) == "[unsupported visual: weather-card] <script>alert(1)</script> summary\n"


def test_invalid_props_show_the_fallback() -> None:
    view = component_view(frame("link-card", {"title": "x", "href": "javascript:alert(1)"}))
    assert links_of(view) == []
    assert text_of(view).startswith("[unsupported visual: link-card]")


@pytest.mark.parametrize("bad", [None, 1, "x", [], {"protocol": "agentskit.chat.component"}, "{"])
def test_undecodable_frames_show_the_generic_fallback(bad: Any) -> None:
    view = component_view(bad)
    assert text_of(view).startswith("[unsupported visual:")


def test_application_component_shows_its_definition_fallback() -> None:
    custom = ComponentDefinition(
        key="weather-card",
        props_schema=LinkCardProps,
        fallback=lambda props: f"Weather: {props.title}",
    )
    manifest = define_component_manifest([custom])
    props = {"title": "Sunny", "href": "/w"}
    assert text_of(component_view(frame("weather-card", props), manifest)) == "Weather: Sunny\n"


def test_a_raising_fallback_still_shows_something() -> None:
    def boom(_props: Any) -> str:
        raise RuntimeError("no")

    custom = ComponentDefinition(key="weather-card", props_schema=LinkCardProps, fallback=boom)
    manifest = define_component_manifest([custom])
    view = component_view(frame("weather-card", {"title": "t", "href": "/w"}), manifest)
    assert text_of(view).startswith("[unsupported visual: weather-card]")


def test_selection_event_shape() -> None:
    event = build_component_event("choice-list", "i-1", "select", "x")
    assert event["type"] == "select" and event["choiceId"] == "x"
    interaction = build_component_event("confirmation", "i-1", "confirm")
    assert interaction["type"] == "interact" and "value" not in interaction
