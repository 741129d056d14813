"""The component manifest and the 12 standard components (PROTOCOL.md 3, reference facts)."""

import dataclasses
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from agentskit_web.chat import (
    STANDARD_COMPONENTS,
    STANDARD_MANIFEST,
    ComponentAccessibility,
    ComponentDefinition,
    ComponentEventSpec,
    define_component_manifest,
    resolve_component_frame,
    validate_component_event,
)
from agentskit_web.chat.components import standard as std
from agentskit_web.protocol.diagnostics import ProtocolError
from agentskit_web.protocol.limits import (
    BUTTON_GROUP_MAX_BUTTONS,
    CHOICE_LIST_MAX_CHOICES,
    COMPONENT_JSON_RECORD_KEY_MAX_CHARS,
    COMPONENT_LABEL_MAX_CHARS,
    COMPONENT_TEXT_MAX_CHARS,
    ERROR_NOTICE_CODE_MAX_CHARS,
    FILE_MIME_TYPE_MAX_CHARS,
    FORM_FIELD_MAX_OPTIONS,
    FORM_MAX_FIELDS,
    FORM_PLACEHOLDER_MAX_CHARS,
    JS_MAX_SAFE_INTEGER,
    TABLE_CELL_MAX_CHARS,
    TABLE_MAX_COLUMNS,
    TABLE_MAX_ROWS,
)

PROTOCOL = "agentskit.chat.component"
EMOJI = "\U0001f600"  # two UTF-16 code units


def code(result: Any) -> str | None:
    """The diagnostic code of a failed result (None when it succeeded)."""
    return None if result.diagnostic is None else str(result.diagnostic.code)


def frame(key: str, props: Any, instance: str = "c1") -> dict[str, Any]:
    return {
        "protocol": PROTOCOL,
        "version": 1,
        "type": "render",
        "componentKey": key,
        "instanceId": instance,
        "props": props,
        "fallback": {"kind": key, "summary": "A component."},
    }


def interact(key: str, event: str, *value: Any, instance: str = "c1") -> dict[str, Any]:
    wire: dict[str, Any] = {
        "protocol": PROTOCOL,
        "version": 1,
        "type": "interact",
        "componentKey": key,
        "instanceId": instance,
        "event": event,
    }
    if value:
        wire["value"] = value[0]
    return wire


def select(key: str, choice: str, instance: str = "c1") -> dict[str, Any]:
    return {
        "protocol": PROTOCOL,
        "version": 1,
        "type": "select",
        "componentKey": key,
        "instanceId": instance,
        "choiceId": choice,
    }


VALID: dict[str, tuple[dict[str, Any], str]] = {
    "button-group": (
        {
            "label": "Pick",
            "buttons": [
                {"id": "yes", "label": "Yes", "variant": "primary"},
                {"id": "no", "label": "No", "disabled": True, "variant": "danger"},
            ],
        },
        "Pick: Yes, No.",
    ),
    "choice-list": (
        {
            "prompt": "Which plan?",
            "choices": [
                {"id": "free", "label": "Free"},
                {
                    "id": "pro",
                    "label": "Pro",
                    "description": "Paid",
                    "action": {"name": "upgrade", "input": {"tier": "pro", "seats": [1, None]}},
                },
            ],
        },
        "Which plan? Free, Pro.",
    ),
    "form": (
        {
            "fields": [
                {"id": "email", "label": "Email", "type": "email", "required": True},
                {"id": "age", "label": "Age", "type": "number", "placeholder": ""},
                {"id": "news", "label": "News", "type": "checkbox"},
                {
                    "id": "size",
                    "label": "Size",
                    "type": "select",
                    "options": [{"id": "s", "label": "Small"}, {"id": "l", "label": "Large"}],
                },
            ],
            "submitLabel": "Send",
        },
        "Form: Email, Age, News, Size.",
    ),
    "confirmation": (
        {
            "title": "Delete?",
            "message": "This cannot be undone.",
            "confirmLabel": "Delete",
            "cancelLabel": "Keep",
        },
        "Delete?: This cannot be undone.",
    ),
    "progress": ({"label": "Indexing", "value": 42, "status": "Half way"}, "Indexing: 42%."),
    "source-list": (
        {
            "label": "Sources",
            "sources": [
                {"id": "intro", "title": "Intro", "url": "/docs/intro", "snippet": "Start."},
                {"id": "api", "title": "API"},
            ],
        },
        "Sources: Intro, API.",
    ),
    "link-card": (
        {"title": "Docs", "href": "https://example.com/docs"},
        "Docs: https://example.com/docs",
    ),
    "error-notice": (
        {"title": "Failed", "message": "Try later.", "code": "E_1", "retryLabel": "Retry"},
        "Failed: Try later.",
    ),
    "tool-call": (
        {"name": "search", "status": "complete", "arguments": {"q": "x"}, "result": [1, "a"]},
        "search: complete.",
    ),
    "approval-request": (
        {
            "title": "Run tool?",
            "description": "It writes files.",
            "approveLabel": "Run",
            "denyLabel": "Stop",
        },
        "Run tool?: It writes files.",
    ),
    "table": (
        {
            "caption": "Plans",
            "columns": [{"key": "name", "label": "Name"}, {"key": "price", "label": "Price"}],
            "rows": [
                {"name": "Free", "price": 0, "ok": True, "note": None},
                {"name": "Pro", "price": 9.5, "extra": "not a column"},
            ],
        },
        "Plans: 2 rows.",
    ),
    "file-attachment": (
        {
            "name": "report.pdf",
            "mimeType": "application/pdf",
            "sizeBytes": 1024,
            "url": "/files/report.pdf",
        },
        "report.pdf (application/pdf).",
    ),
}


def with_(key: str, **changes: Any) -> dict[str, Any]:
    """The valid props of `key` with top-level fields replaced (a value of ... deletes)."""
    props: dict[str, Any] = json.loads(json.dumps(VALID[key][0]))
    for name, value in changes.items():
        if value is ...:
            props.pop(name, None)
        else:
            props[name] = value
    return props


INVALID: list[tuple[str, Any]] = [
    ("button-group", with_("button-group", buttons=[])),
    ("button-group", with_("button-group", buttons=[{"id": "a", "label": "A"}] * 2)),
    ("button-group", with_("button-group", buttons=[{"id": "a", "label": "A", "variant": "x"}])),
    ("button-group", with_("button-group", buttons=[{"id": "a", "label": "A", "disabled": None}])),
    ("button-group", with_("button-group", buttons=[{"id": "a", "label": "A", "disabled": 1}])),
    ("button-group", with_("button-group", extra=True)),
    ("choice-list", with_("choice-list", prompt="")),
    ("choice-list", with_("choice-list", choices=[{"id": "a", "label": "A", "description": None}])),
    ("choice-list", with_("choice-list", choices=[{"id": "a b", "label": "A"}])),
    (
        "choice-list",
        with_("choice-list", choices=[{"id": "a", "label": "A", "action": {"name": "x"}}]),
    ),
    ("form", with_("form", fields=[{"id": "s", "label": "S", "type": "select"}])),
    (
        "form",
        with_(
            "form",
            fields=[
                {"id": "t", "label": "T", "type": "text", "options": [{"id": "a", "label": "A"}]}
            ],
        ),
    ),
    ("form", with_("form", fields=[{"id": "d", "label": "D", "type": "date"}])),
    ("form", with_("form", submitLabel=...)),
    ("form", with_("form", title=None)),
    ("confirmation", with_("confirmation", cancelLabel=...)),
    ("confirmation", with_("confirmation", message="")),
    ("progress", with_("progress", value=101)),
    ("progress", with_("progress", value=-1)),
    ("progress", with_("progress", value=True)),
    ("progress", with_("progress", value="42")),
    ("progress", with_("progress", status=None)),
    (
        "source-list",
        with_("source-list", sources=[{"id": "a", "title": "A", "url": "javascript:x"}]),
    ),
    ("source-list", with_("source-list", sources=[{"id": "a", "title": "A", "url": None}])),
    ("source-list", with_("source-list", sources=[{"id": "a", "title": "A"}] * 2)),
    ("source-list", with_("source-list", sources=[])),
    ("link-card", with_("link-card", href="//evil.example")),
    ("link-card", with_("link-card", href="https:evil.example")),
    ("link-card", with_("link-card", href="JavaScript:alert(1)")),
    ("link-card", with_("link-card", href="https://user:pw@example.com/")),
    ("link-card", with_("link-card", href=...)),
    ("link-card", with_("link-card", description=None)),
    ("error-notice", with_("error-notice", code="C" * (ERROR_NOTICE_CODE_MAX_CHARS + 1))),
    ("error-notice", with_("error-notice", retryLabel="")),
    ("tool-call", with_("tool-call", status="done")),
    ("tool-call", with_("tool-call", arguments=[1])),
    ("tool-call", with_("tool-call", arguments=None)),
    ("approval-request", with_("approval-request", denyLabel=...)),
    ("table", with_("table", columns=[])),
    ("table", with_("table", columns=[{"key": "a", "label": "A"}] * 2)),
    ("table", with_("table", rows=[{"a": {"nested": 1}}])),
    ("table", with_("table", rows=[{"a": [1]}])),
    ("table", with_("table", rows=[1])),
    ("file-attachment", with_("file-attachment", sizeBytes=-1)),
    ("file-attachment", with_("file-attachment", sizeBytes=1.5)),
    ("file-attachment", with_("file-attachment", sizeBytes=JS_MAX_SAFE_INTEGER + 1)),
    ("file-attachment", with_("file-attachment", mimeType="")),
    ("file-attachment", with_("file-attachment", url="data:text/html,x")),
    ("file-attachment", with_("file-attachment", name=...)),
]


# --- the standard catalog ------------------------------------------------------------


def test_standard_catalog_has_the_twelve_keys_in_reference_order() -> None:
    assert list(STANDARD_COMPONENTS) == [
        "button-group",
        "choice-list",
        "form",
        "confirmation",
        "progress",
        "source-list",
        "link-card",
        "error-notice",
        "tool-call",
        "approval-request",
        "table",
        "file-attachment",
    ]
    assert set(VALID) == set(STANDARD_COMPONENTS)
    assert dict(STANDARD_MANIFEST) == dict(STANDARD_COMPONENTS)


def test_standard_catalog_is_read_only() -> None:
    with pytest.raises(TypeError):
        STANDARD_COMPONENTS["x"] = STANDARD_COMPONENTS["table"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        STANDARD_COMPONENTS["table"].key = "other"  # type: ignore[misc]


FACTS = {
    # key: (events, role, keyboard, live, capabilities)
    "button-group": ((("select", "id"),), "group", True, "none", ("display", "selection")),
    "choice-list": ((("select", "id"),), "group", True, "none", ("display", "selection")),
    "form": ((("submit", "form"),), "form", True, "none", ("display", "input")),
    "confirmation": (
        (("confirm", "none"), ("cancel", "none")),
        "group",
        True,
        "none",
        ("display", "action"),
    ),
    "progress": ((), "progressbar", False, "polite", ("display", "progress")),
    "source-list": ((("open", "id"),), "list", True, "none", ("display", "navigation")),
    "link-card": ((("open", "url"),), "link", True, "none", ("display", "navigation")),
    "error-notice": ((("retry", "none"),), "alert", True, "none", ("display", "action")),
    "tool-call": ((), "status", False, "polite", ("display",)),
    "approval-request": (
        (("approve", "none"), ("deny", "none")),
        "group",
        True,
        "none",
        ("display", "action"),
    ),
    "table": ((), "table", False, "none", ("display",)),
    "file-attachment": ((("open", "url"),), "link", True, "none", ("display", "download")),
}


@pytest.mark.parametrize("key", list(FACTS))
def test_standard_definition_facts(key: str) -> None:
    events, role, keyboard, live, capabilities = FACTS[key]
    definition = STANDARD_COMPONENTS[key]
    assert definition.key == key
    assert tuple((event.name, event.value) for event in definition.events) == events
    accessibility = definition.accessibility
    assert accessibility is not None
    assert (accessibility.role, accessibility.keyboard, accessibility.live) == (
        role,
        keyboard,
        live,
    )
    assert definition.capabilities == capabilities
    assert definition.fallback is not None


@pytest.mark.parametrize("key", list(VALID))
def test_every_standard_key_resolves_valid_props_with_its_fallback(key: str) -> None:
    props, text = VALID[key]
    resolved = resolve_component_frame(frame(key, props))
    assert resolved.ok, resolved.diagnostic
    assert resolved.frame.component_key == key
    assert resolved.props_wire() == props
    assert resolved.fallback_text() == text
    assert resolved.definition is STANDARD_COMPONENTS[key]


@pytest.mark.parametrize(
    ("key", "props"), INVALID, ids=[f"{k}-{i}" for i, (k, _) in enumerate(INVALID)]
)
def test_every_standard_key_rejects_invalid_props(key: str, props: Any) -> None:
    resolved = resolve_component_frame(frame(key, props))
    assert not resolved.ok
    assert resolved.diagnostic is not None
    assert resolved.diagnostic.to_wire() == {
        "code": "COMPONENT_INVALID_PROPS",
        "message": "Component props are invalid.",
        "retryable": False,
    }
    assert resolved.frame is not None and resolved.frame.component_key == key
    assert resolved.props is None and resolved.fallback_text() is None


def test_every_standard_key_has_an_invalid_case() -> None:
    assert {key for key, _ in INVALID} == set(STANDARD_COMPONENTS)


@pytest.mark.parametrize("key", list(VALID))
def test_props_are_strict_objects(key: str) -> None:
    candidates: list[Any] = [None, [], "props", 1, {**VALID[key][0], "unknown": 1}]
    for bad in candidates:
        assert code(resolve_component_frame(frame(key, bad))) == "COMPONENT_INVALID_PROPS"


def test_validated_props_are_frozen_and_detached_from_the_input() -> None:
    props = with_("button-group")
    resolved = resolve_component_frame(frame("button-group", props))
    props["label"] = "changed"
    assert resolved.props.label == "Pick"
    with pytest.raises(ValidationError):
        resolved.props.label = "x"


# --- limits: at the limit and one past ----------------------------------------------


def _label(units: int) -> str:
    """A label of exactly `units` UTF-16 units, built from emoji (2 units each) when even."""
    return EMOJI * (units // 2) + "a" * (units % 2)


LIMIT_CASES: list[tuple[type[BaseModel], Any, Any]] = [
    (
        std.ButtonGroupProps,
        with_("button-group", label=_label(COMPONENT_LABEL_MAX_CHARS)),
        with_("button-group", label=_label(COMPONENT_LABEL_MAX_CHARS) + "a"),
    ),
    (
        std.ConfirmationProps,
        with_("confirmation", message=_label(COMPONENT_TEXT_MAX_CHARS)),
        with_("confirmation", message=_label(COMPONENT_TEXT_MAX_CHARS) + "a"),
    ),
    (
        std.ChoiceListProps,
        with_(
            "choice-list",
            choices=[{"id": f"c{i}", "label": "L"} for i in range(CHOICE_LIST_MAX_CHOICES)],
        ),
        with_(
            "choice-list",
            choices=[{"id": f"c{i}", "label": "L"} for i in range(CHOICE_LIST_MAX_CHOICES + 1)],
        ),
    ),
    (
        std.ChoiceListProps,
        with_(
            "choice-list",
            choices=[
                {
                    "id": "a",
                    "label": "A",
                    "action": {
                        "name": "n",
                        "input": {"k" * COMPONENT_JSON_RECORD_KEY_MAX_CHARS: 1},
                    },
                }
            ],
        ),
        with_(
            "choice-list",
            choices=[
                {
                    "id": "a",
                    "label": "A",
                    "action": {
                        "name": "n",
                        "input": {"k" * (COMPONENT_JSON_RECORD_KEY_MAX_CHARS + 1): 1},
                    },
                }
            ],
        ),
    ),
    (
        std.ButtonGroupProps,
        with_(
            "button-group",
            buttons=[{"id": f"b{i}", "label": "L"} for i in range(BUTTON_GROUP_MAX_BUTTONS)],
        ),
        with_(
            "button-group",
            buttons=[{"id": f"b{i}", "label": "L"} for i in range(BUTTON_GROUP_MAX_BUTTONS + 1)],
        ),
    ),
    (
        std.FormProps,
        with_(
            "form",
            fields=[{"id": f"f{i}", "label": "L", "type": "text"} for i in range(FORM_MAX_FIELDS)],
        ),
        with_(
            "form",
            fields=[
                {"id": f"f{i}", "label": "L", "type": "text"} for i in range(FORM_MAX_FIELDS + 1)
            ],
        ),
    ),
    (
        std.FormProps,
        with_(
            "form",
            fields=[
                {
                    "id": "s",
                    "label": "S",
                    "type": "select",
                    "options": [
                        {"id": f"o{i}", "label": "O"} for i in range(FORM_FIELD_MAX_OPTIONS)
                    ],
                }
            ],
        ),
        with_(
            "form",
            fields=[
                {
                    "id": "s",
                    "label": "S",
                    "type": "select",
                    "options": [
                        {"id": f"o{i}", "label": "O"} for i in range(FORM_FIELD_MAX_OPTIONS + 1)
                    ],
                }
            ],
        ),
    ),
    (
        std.FormProps,
        with_(
            "form",
            fields=[
                {
                    "id": "t",
                    "label": "T",
                    "type": "text",
                    "placeholder": _label(FORM_PLACEHOLDER_MAX_CHARS),
                }
            ],
        ),
        with_(
            "form",
            fields=[
                {
                    "id": "t",
                    "label": "T",
                    "type": "text",
                    "placeholder": _label(FORM_PLACEHOLDER_MAX_CHARS) + "a",
                }
            ],
        ),
    ),
    (
        std.ErrorNoticeProps,
        with_("error-notice", code=_label(ERROR_NOTICE_CODE_MAX_CHARS)),
        with_("error-notice", code=_label(ERROR_NOTICE_CODE_MAX_CHARS) + "a"),
    ),
    (
        std.ToolCallProps,
        with_("tool-call", arguments={"k" * COMPONENT_JSON_RECORD_KEY_MAX_CHARS: None}),
        with_("tool-call", arguments={"k" * (COMPONENT_JSON_RECORD_KEY_MAX_CHARS + 1): None}),
    ),
    (
        std.TableProps,
        with_("table", columns=[{"key": f"k{i}", "label": "K"} for i in range(TABLE_MAX_COLUMNS)]),
        with_(
            "table",
            columns=[{"key": f"k{i}", "label": "K"} for i in range(TABLE_MAX_COLUMNS + 1)],
        ),
    ),
    (
        std.TableProps,
        with_("table", rows=[{}] * TABLE_MAX_ROWS),
        with_("table", rows=[{}] * (TABLE_MAX_ROWS + 1)),
    ),
    (
        std.TableProps,
        with_("table", rows=[{"a": _label(TABLE_CELL_MAX_CHARS)}]),
        with_("table", rows=[{"a": _label(TABLE_CELL_MAX_CHARS) + "a"}]),
    ),
    (
        std.FileAttachmentProps,
        with_("file-attachment", mimeType=_label(FILE_MIME_TYPE_MAX_CHARS)),
        with_("file-attachment", mimeType=_label(FILE_MIME_TYPE_MAX_CHARS) + "a"),
    ),
    (
        std.FileAttachmentProps,
        with_("file-attachment", sizeBytes=JS_MAX_SAFE_INTEGER),
        with_("file-attachment", sizeBytes=JS_MAX_SAFE_INTEGER + 1),
    ),
    (
        std.ProgressProps,
        with_("progress", value=100),
        with_("progress", value=100.0001),
    ),
    (
        std.ProgressProps,
        with_("progress", value=0),
        with_("progress", value=-0.0001),
    ),
]


@pytest.mark.parametrize(("schema", "at_limit", "past_limit"), LIMIT_CASES)
def test_limits_at_and_past(schema: type[BaseModel], at_limit: Any, past_limit: Any) -> None:
    schema.model_validate(at_limit)
    with pytest.raises(ValidationError):
        schema.model_validate(past_limit)


def test_emoji_labels_count_utf16_units() -> None:
    # 128 emoji = 256 units: at the limit although Python counts 128 code points.
    assert std.ButtonGroupProps.model_validate(with_("button-group", label=EMOJI * 128))
    with pytest.raises(ValidationError):
        std.ButtonGroupProps.model_validate(with_("button-group", label=EMOJI * 129))


def test_size_bytes_accepts_an_integral_float_as_javascript_does() -> None:
    props = std.FileAttachmentProps.model_validate(with_("file-attachment", sizeBytes=2048.0))
    assert props.to_wire()["sizeBytes"] == 2048 and type(props.size_bytes) is int


def test_progress_keeps_the_json_number_type() -> None:
    assert std.ProgressProps.model_validate(with_("progress", value=42)).to_wire()["value"] == 42
    assert type(std.ProgressProps.model_validate(with_("progress", value=42)).value) is int


def test_tool_call_result_null_differs_from_absent() -> None:
    with_null = std.ToolCallProps.model_validate({"name": "n", "status": "error", "result": None})
    without = std.ToolCallProps.model_validate({"name": "n", "status": "error"})
    assert with_null.to_wire() == {"name": "n", "status": "error", "result": None}
    assert without.to_wire() == {"name": "n", "status": "error"}


def test_table_cells_reject_non_finite_numbers() -> None:
    with pytest.raises(ValidationError):
        std.TableProps.model_validate(with_("table", rows=[{"a": math.inf}]))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (-0.0, "0"),
        (42, "42"),
        (42.0, "42"),
        (12.5, "12.5"),
        (0.1, "0.1"),
        (99.99999999999999, "99.99999999999999"),
        (100 / 3, "33.333333333333336"),
        (0.000001, "0.000001"),
        (0.0000015, "0.0000015"),
        (1e-7, "1e-7"),
        (1.5e-10, "1.5e-10"),
        (-2.5, "-2.5"),
        (1e21, "1e+21"),
        (1.2345e22, "1.2345e+22"),
        (123456789012345680000.0, "123456789012345680000"),
        (0.001, "0.001"),
        (2**60, "1152921504606847000"),
        (1e20, "100000000000000000000"),
    ],
)
def test_js_number_text_matches_javascript_string(value: float, text: str) -> None:
    assert std.js_number_text(value) == text


def test_progress_fallback_formats_numbers_like_javascript() -> None:
    resolved = resolve_component_frame(frame("progress", {"label": "L", "value": 0.0000001}))
    assert resolved.fallback_text() == "L: 1e-7%."


# --- manifests ------------------------------------------------------------------------


class NoteProps(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)
    text: str


NOTE = ComponentDefinition(
    key="note",
    props_schema=NoteProps,
    events=({"name": "dismiss", "value": "none"}, ComponentEventSpec("pick", "id")),  # type: ignore[arg-type]
    accessibility={"role": "note", "keyboard": False, "live": "polite"},  # type: ignore[arg-type]
    capabilities=("display",),
    fallback=lambda props: f"Note: {props.text}",
)


def test_manifest_includes_the_standard_catalog_and_application_components() -> None:
    manifest = define_component_manifest([NOTE])
    assert list(manifest) == [*STANDARD_COMPONENTS, "note"]
    assert manifest["note"] is NOTE
    assert len(manifest) == 13
    with pytest.raises(TypeError):
        manifest["other"] = NOTE  # type: ignore[index]


def test_definition_normalises_mappings() -> None:
    assert NOTE.events == (ComponentEventSpec("dismiss", "none"), ComponentEventSpec("pick", "id"))
    assert NOTE.accessibility == ComponentAccessibility("note", False, "polite")
    assert NOTE.event("pick") == ComponentEventSpec("pick", "id")
    assert NOTE.event("nope") is None


def test_empty_manifest_is_the_standard_catalog() -> None:
    assert dict(define_component_manifest()) == dict(STANDARD_COMPONENTS)
    assert dict(define_component_manifest([])) == dict(STANDARD_COMPONENTS)


def test_passing_a_standard_definition_itself_is_allowed_once() -> None:
    source_list = STANDARD_COMPONENTS["source-list"]
    assert define_component_manifest([source_list])["source-list"] is source_list
    with pytest.raises(ProtocolError):
        define_component_manifest([source_list, source_list])


def _note(key: Any) -> ComponentDefinition:
    return dataclasses.replace(NOTE, key=key)


MANIFEST_MESSAGE = (
    "Component manifest keys must be non-empty, unique, and must not override standard "
    "catalog keys."
)


@pytest.mark.parametrize(
    "definitions",
    [
        [_note("")],
        [_note("Note")],
        [_note("1note")],
        [_note("note_x")],
        [_note("a" * 65)],
        [_note("note\n")],
        [_note(None)],
        [_note("note"), _note("note")],
        [_note("source-list")],
        [dataclasses.replace(STANDARD_COMPONENTS["table"], fallback=lambda _props: "x")],
        [{"key": "note"}],
        ["note"],
        "note",
        {"note": NOTE},
    ],
)
def test_manifest_refuses_invalid_duplicate_and_standard_override_keys(definitions: Any) -> None:
    with pytest.raises(ProtocolError) as raised:
        define_component_manifest(definitions)
    assert raised.value.code == "AK_CONFIG_INVALID"
    assert raised.value.message == MANIFEST_MESSAGE


def test_manifest_key_at_the_length_limit() -> None:
    assert "a" * 64 in define_component_manifest([_note("a" * 64)])


@pytest.mark.parametrize(
    "changes",
    [
        {"props_schema": dict},
        {"props_schema": NoteProps(text="x")},
        {"events": ({"name": "Bad Name", "value": "none"},)},
        {"events": ({"name": "go", "value": "object"},)},
        {"events": ({"name": "go", "value": "none"}, {"name": "go", "value": "id"})},
        {"events": ({"name": "go"},)},
        {"events": "go"},
        {"accessibility": {"role": "", "keyboard": True}},
        {"accessibility": {"role": "list", "keyboard": "yes"}},
        {"accessibility": {"role": "list", "keyboard": True, "live": "rude"}},
        {"accessibility": {"role": "list", "keyboard": True, "extra": 1}},
        {"accessibility": {"keyboard": True}},
        {"capabilities": ("display", "teleport")},
        {"capabilities": "display"},
        {"fallback": "text"},
        {"interaction": 1},
    ],
)
def test_definition_refuses_invalid_parts(changes: dict[str, Any]) -> None:
    fields = {
        "key": "note",
        "props_schema": NoteProps,
        "events": (),
        "accessibility": None,
        "capabilities": (),
        "fallback": None,
    }
    with pytest.raises(ProtocolError) as raised:
        ComponentDefinition(**{**fields, **changes})
    assert raised.value.code == "AK_CONFIG_INVALID"


# --- resolution -----------------------------------------------------------------------


def test_unknown_key_is_not_registered_and_keeps_the_frame_for_its_fallback() -> None:
    resolved = resolve_component_frame(frame("chart", {"points": [1, 2]}))
    assert not resolved.ok
    assert resolved.diagnostic is not None
    assert resolved.diagnostic.to_wire() == {
        "code": "COMPONENT_UNKNOWN",
        "message": "Component is not registered.",
        "retryable": False,
    }
    assert resolved.frame.fallback.kind == "chart"


def test_custom_component_resolves_only_through_its_manifest() -> None:
    manifest = define_component_manifest([NOTE])
    assert code(resolve_component_frame(frame("note", {"text": "hi"}))) == "COMPONENT_UNKNOWN"
    resolved = resolve_component_frame(frame("note", {"text": "hi"}), manifest)
    assert resolved.ok and resolved.fallback_text() == "Note: hi"
    bad = resolve_component_frame(frame("note", {"text": 1}), manifest)
    assert code(bad) == "COMPONENT_INVALID_PROPS"


def test_frame_decoding_failures_pass_through_without_a_frame() -> None:
    cases = {
        "COMPONENT_UNSUPPORTED_VERSION": {**frame("table", {}), "version": 2},
        "COMPONENT_UNKNOWN_TYPE": {**frame("table", {}), "type": "patch"},
    }
    for expected, data in cases.items():
        resolved = resolve_component_frame(data)
        assert code(resolved) == expected
        assert resolved.frame is None
    assert code(resolve_component_frame("{")) == "COMPONENT_INVALID_FRAME"


def test_frame_text_and_bytes_resolve() -> None:
    data = json.dumps(frame("progress", {"label": "L", "value": 5}))
    assert resolve_component_frame(data).ok
    assert resolve_component_frame(data.encode()).ok


class Hostile:
    """An object whose every non-dunder attribute raises."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(name)


class ExplodingProps(BaseModel):
    model_config = ConfigDict(strict=True)

    @model_validator(mode="before")
    @classmethod
    def _explode(cls, data: Any) -> Any:
        raise RuntimeError("boom")


class ExplodingMapping(dict):  # type: ignore[type-arg]
    def get(self, *_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("boom")


@pytest.mark.parametrize(
    "data",
    [
        None,
        1,
        1.5,
        True,
        [],
        [frame("table", {})],
        b"\xff",
        "",
        "null",
        Hostile(),
        {"protocol": PROTOCOL},
    ],
)
def test_resolution_never_raises(data: Any) -> None:
    resolved = resolve_component_frame(data)
    assert not resolved.ok and resolved.diagnostic is not None


def test_resolution_survives_a_raising_schema_and_a_strange_manifest() -> None:
    exploding = ComponentDefinition(key="boom", props_schema=ExplodingProps)
    manifest = define_component_manifest([exploding])
    assert code(resolve_component_frame(frame("boom", {}), manifest)) == "COMPONENT_INVALID_PROPS"
    for strange in ({"table": "not a definition"}, ExplodingMapping(), 42, "manifest"):
        assert code(resolve_component_frame(frame("table", {}), strange)) == "COMPONENT_UNKNOWN"


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(key=st.sampled_from(list(STANDARD_COMPONENTS)), props=JSON_VALUES)
def test_any_json_props_resolve_or_fail_inertly(key: str, props: Any) -> None:
    resolved = resolve_component_frame(frame(key, props))
    if resolved.ok:
        assert isinstance(resolved.fallback_text(), str)
        assert resolve_component_frame(frame(key, resolved.props_wire())).ok
    else:
        assert resolved.diagnostic is not None
        assert code(resolved) in {"COMPONENT_INVALID_PROPS", "COMPONENT_INVALID_FRAME"}


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(list(STANDARD_COMPONENTS)),
    field=st.text(min_size=1, max_size=12),
    value=JSON_VALUES,
)
def test_mutated_valid_props_never_raise(key: str, field: str, value: Any) -> None:
    props = {**VALID[key][0], field: value}
    resolved = resolve_component_frame(frame(key, props))
    assert resolved.ok or resolved.diagnostic is not None


# --- user-side events ---------------------------------------------------------------

SOURCES = frame("source-list", VALID["source-list"][0])


def ok(event: Any, frame_: Any = None, manifest: Any = None) -> bool:
    return validate_component_event(manifest, event, frame_).ok


EVENT_CASES: list[tuple[str, dict[str, Any], bool]] = [
    # source-list: open takes the id of a source that has a url
    ("source-list", interact("source-list", "open", "intro"), True),
    ("source-list", interact("source-list", "open", "api"), False),
    ("source-list", interact("source-list", "open", "missing"), False),
    ("source-list", interact("source-list", "open"), False),
    ("source-list", interact("source-list", "open", ["intro"]), False),
    ("source-list", interact("source-list", "select", "intro"), False),
    # button-group: select an enabled button, as interaction or selection
    ("button-group", interact("button-group", "select", "yes"), True),
    ("button-group", select("button-group", "yes"), True),
    ("button-group", interact("button-group", "select", "no"), False),
    ("button-group", select("button-group", "no"), False),
    ("button-group", interact("button-group", "select", "other"), False),
    # choice-list: select one of the choices
    ("choice-list", select("choice-list", "pro"), True),
    ("choice-list", select("choice-list", "team"), False),
    ("choice-list", interact("choice-list", "select", "free"), True),
    # form: submit an object keyed by field ids
    ("form", interact("form", "submit", {"email": "a@b.c"}), True),
    (
        "form",
        interact("form", "submit", {"email": "a@b.c", "age": " 12 ", "news": True, "size": "l"}),
        True,
    ),
    ("form", interact("form", "submit", {"email": "a@b.c", "age": 0x1F}), True),
    ("form", interact("form", "submit", {"email": "a@b.c", "age": "0x1F"}), True),
    ("form", interact("form", "submit", {"email": "a@b.c", "age": "1e3"}), True),
    ("form", interact("form", "submit", {"email": "a@b.c", "age": ""}), True),
    ("form", interact("form", "submit", {"email": "a@b.c", "age": "1e400"}), False),
    ("form", interact("form", "submit", {"email": "a@b.c", "age": "Infinity"}), False),
    ("form", interact("form", "submit", {"email": "a@b.c", "age": "12px"}), False),
    ("form", interact("form", "submit", {"email": "a@b.c", "age": "   "}), False),
    ("form", interact("form", "submit", {"email": "a@b.c", "age": True}), False),
    ("form", interact("form", "submit", {"email": "a@b.c", "news": "yes"}), False),
    ("form", interact("form", "submit", {"email": "a@b.c", "size": "m"}), False),
    ("form", interact("form", "submit", {"email": "a@b.c", "other": "x"}), False),
    ("form", interact("form", "submit", {"email": ""}), False),
    ("form", interact("form", "submit", {}), False),
    ("form", interact("form", "submit", {"email": 1}), False),
    ("form", interact("form", "submit", ["a@b.c"]), False),
    # confirmation / approval-request: value-less
    ("confirmation", interact("confirmation", "confirm"), True),
    ("confirmation", interact("confirmation", "cancel"), True),
    ("confirmation", interact("confirmation", "confirm", None), False),
    ("confirmation", interact("confirmation", "approve"), False),
    ("approval-request", interact("approval-request", "approve"), True),
    ("approval-request", interact("approval-request", "deny"), True),
    ("approval-request", interact("approval-request", "deny", "now"), False),
    # link-card / file-attachment: exactly their url
    ("link-card", interact("link-card", "open", "https://example.com/docs"), True),
    ("link-card", interact("link-card", "open", "https://example.com/other"), False),
    ("file-attachment", interact("file-attachment", "open", "/files/report.pdf"), True),
    ("file-attachment", interact("file-attachment", "open", "/files/other.pdf"), False),
    # error-notice: retry only with a retry label
    ("error-notice", interact("error-notice", "retry"), True),
    ("error-notice", interact("error-notice", "retry", None), False),
    # display-only components emit nothing
    ("progress", interact("progress", "open", "x"), False),
    ("tool-call", interact("tool-call", "retry"), False),
    ("table", select("table", "name"), False),
]


@pytest.mark.parametrize(
    ("key", "event", "expected"),
    EVENT_CASES,
    ids=[f"{key}-{i}" for i, (key, _, _) in enumerate(EVENT_CASES)],
)
def test_standard_event_rules(key: str, event: dict[str, Any], expected: bool) -> None:
    assert ok(event, frame(key, VALID[key][0])) is expected


def test_event_diagnostics_are_fixed() -> None:
    refused = validate_component_event(None, interact("source-list", "open", "api"), SOURCES)
    assert refused.diagnostic is not None
    assert refused.diagnostic.to_wire() == {
        "code": "AK_CONFIG_INVALID",
        "message": "Component interaction is not declared by the resolved component.",
        "retryable": False,
    }
    accepted = validate_component_event(None, interact("source-list", "open", "intro"), SOURCES)
    assert accepted.event.to_wire() == interact("source-list", "open", "intro")


def test_error_notice_without_retry_label_refuses_retry() -> None:
    no_retry = frame("error-notice", with_("error-notice", retryLabel=...))
    assert not ok(interact("error-notice", "retry"), no_retry)


def test_file_attachment_without_url_refuses_open() -> None:
    no_url = frame("file-attachment", with_("file-attachment", url=...))
    assert not ok(interact("file-attachment", "open", "/files/report.pdf"), no_url)


def test_standard_events_need_the_rendered_frame() -> None:
    assert not ok(interact("source-list", "open", "intro"))
    assert not ok(interact("confirmation", "confirm"))


def test_event_must_target_the_frame_instance() -> None:
    assert not ok(interact("source-list", "open", "intro", instance="other"), SOURCES)
    event = interact("source-list", "open", "intro")
    assert not ok({**event, "componentKey": "link-card"}, SOURCES)


def test_event_decoding_and_resolution_failures() -> None:
    assert code(validate_component_event(None, "{", SOURCES)) == "COMPONENT_INVALID_EVENT"
    bad_version = {**interact("source-list", "open", "intro"), "version": 2}
    assert (
        code(validate_component_event(None, bad_version, SOURCES))
        == "COMPONENT_UNSUPPORTED_VERSION"
    )
    unknown = interact("chart", "open", "x")
    assert code(validate_component_event(None, unknown)) == "COMPONENT_UNKNOWN"
    invalid_frame = frame("source-list", {"label": "x", "sources": []})
    event = interact("source-list", "open", "a")
    assert code(validate_component_event(None, event, invalid_frame)) == "COMPONENT_INVALID_PROPS"


def test_event_text_is_accepted() -> None:
    assert ok(json.dumps(interact("source-list", "open", "intro")), SOURCES)


def test_custom_events_check_the_declared_value_kind() -> None:
    links = ComponentDefinition(
        key="links",
        props_schema=NoteProps,
        events=(
            ComponentEventSpec("go", "url"),
            ComponentEventSpec("send", "form"),
            ComponentEventSpec("close", "none"),
            ComponentEventSpec("select", "id"),
        ),
    )
    manifest = define_component_manifest([links])
    cases = [
        (interact("links", "go", "/docs"), True),
        (interact("links", "go", "https://example.com/"), True),
        (interact("links", "go", "javascript:alert(1)"), False),
        (interact("links", "go", "//evil.example"), False),
        (interact("links", "send", {"a": 1}), True),
        (interact("links", "send", [1]), False),
        (interact("links", "close"), True),
        (interact("links", "close", None), False),
        (interact("links", "select", "a.b"), True),
        (interact("links", "select", "a b"), False),
        (select("links", "choice-1"), True),
        (interact("links", "other"), False),
    ]
    for event, expected in cases:
        assert ok(event, None, manifest) is expected, event
    note_frame = frame("links", {"text": "x"})
    assert ok(interact("links", "close"), note_frame, manifest)


def test_a_raising_interaction_rule_is_a_refusal() -> None:
    def explode(_props: Any, _event: str, _value: object) -> bool:
        raise RuntimeError("boom")

    definition = ComponentDefinition(
        key="boom",
        props_schema=NoteProps,
        events=(ComponentEventSpec("go", "none"),),
        interaction=explode,
    )
    manifest = define_component_manifest([definition])
    result = validate_component_event(
        manifest, interact("boom", "go"), frame("boom", {"text": "x"})
    )
    assert code(result) == "AK_CONFIG_INVALID"


@pytest.mark.parametrize("event", [None, 1, [], Hostile(), b"\x00", {"type": "interact"}])
def test_event_validation_never_raises(event: Any) -> None:
    assert not validate_component_event(None, event, SOURCES).ok


@pytest.mark.parametrize(
    ("text", "finite"),
    [
        ("12", True),
        (" 12 ", True),
        ("\u00a012\ufeff", True),
        ("-1.5e3", True),
        (".5", True),
        ("5.", True),
        ("0x1F", True),
        ("0b101", True),
        ("0o17", True),
        ("-0x1F", False),
        ("1e400", False),
        ("Infinity", False),
        ("-Infinity", False),
        ("NaN", False),
        ("", False),
        ("  ", False),
        ("1_000", False),
        ("12px", False),
        ("\u0085" + "1", False),
    ],
)
def test_js_numeric_string(text: str, finite: bool) -> None:
    assert std.js_numeric_string(text) is finite
