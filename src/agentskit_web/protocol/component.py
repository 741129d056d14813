"""Component frames and user-side component events, `agentskit.chat.component` v1 (PROTOCOL.md 3).

A render frame is validated here only as an envelope: identities, a required
semantic fallback and props that are bounded JSON. Whether the component is
registered and whether its props fit its schema is the manifest's job later,
so a `javascript:` string inside props is not this module's concern.

Unknown additive fields are dropped, not rejected: the reference schemas are
non-strict objects (unknown keys stripped) and the compatibility rules allow
optional additive fields within v1.
"""

from collections.abc import Callable
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, BeforeValidator, Field, ValidationError

from .diagnostics import DecodeResult, Diagnostic, ProtocolError
from .identifiers import ComponentKey, SafeId, js_chars
from .json_structure import StructureLimits, check_structure
from .limits import (
    BOUNDED_JSON_MAX_ARRAY_ITEMS,
    BOUNDED_JSON_MAX_DEPTH,
    BOUNDED_JSON_MAX_KEY_CHARS,
    BOUNDED_JSON_MAX_NODES,
    BOUNDED_JSON_MAX_OBJECT_KEYS,
    BOUNDED_JSON_MAX_STRING_CHARS,
    COMPONENT_FALLBACK_KIND_MAX_CHARS,
    COMPONENT_FALLBACK_SUMMARY_MAX_CHARS,
)
from .wire_json import JSON_INVALID, parse_json
from .wire_model import WireModel

COMPONENT_PROTOCOL: Final = "agentskit.chat.component"
COMPONENT_PROTOCOL_VERSION: Final = 1

COMPONENT_INVALID_FRAME: Final = "COMPONENT_INVALID_FRAME"
COMPONENT_UNSUPPORTED_VERSION: Final = "COMPONENT_UNSUPPORTED_VERSION"
COMPONENT_UNKNOWN_TYPE: Final = "COMPONENT_UNKNOWN_TYPE"
COMPONENT_INVALID_EVENT: Final = "COMPONENT_INVALID_EVENT"

# Bounded JSON as the reference counts it: the root sits at depth 0, so a leaf
# may sit at depth 20. `check_structure` counts the root as depth 1, hence +1.
BOUNDED_JSON_LIMITS: Final = StructureLimits(
    max_nodes=BOUNDED_JSON_MAX_NODES,
    max_depth=BOUNDED_JSON_MAX_DEPTH + 1,
    max_string_chars=BOUNDED_JSON_MAX_STRING_CHARS,
    max_array_items=BOUNDED_JSON_MAX_ARRAY_ITEMS,
    max_object_keys=BOUNDED_JSON_MAX_OBJECT_KEYS,
    max_key_chars=BOUNDED_JSON_MAX_KEY_CHARS,
)


def is_bounded_json(value: Any) -> bool:
    """True when `value` is plain JSON data within the section-3 caps; never raises.

    Cycles, non-finite numbers, tuples, dict/list subclasses and any other
    object are invalid, as is anything that raises while being inspected.
    """
    return check_structure(value, BOUNDED_JSON_LIMITS)


def _copy_json(value: Any) -> Any:
    """A private deep copy, so a host mutating its dict cannot change a frozen frame.

    Only called on values that passed `is_bounded_json`: depth <= 21, so the
    recursion is shallow.
    """
    if type(value) is dict:
        return {key: _copy_json(item) for key, item in value.items()}
    if type(value) is list:
        return [_copy_json(item) for item in value]
    return value


def _bounded_json(value: Any) -> Any:
    if not is_bounded_json(value):
        raise ValueError("not bounded JSON")
    return _copy_json(value)


BoundedJson = Annotated[Any, AfterValidator(_bounded_json)]
"""Any JSON value within the section-3 caps (validated and privately copied)."""


def _is_number(value: object) -> bool:
    """A JavaScript `typeof value === "number"`: int or float, never bool."""
    return type(value) is int or type(value) is float


def _exact_version_one(value: object) -> object:
    """Accept exactly the number 1 (JSON `1` or `1.0`); never `True` or `"1"`.

    pydantic's `Literal[1]` accepts `True` even in strict mode, and a boolean
    is not a version on the wire.
    """
    if _is_number(value) and value == COMPONENT_PROTOCOL_VERSION:
        return COMPONENT_PROTOCOL_VERSION
    raise ValueError("version must be the number 1")


VersionOne = Annotated[Literal[1], BeforeValidator(_exact_version_one)]
ProtocolName = Literal["agentskit.chat.component"]


class ComponentFallback(WireModel):
    """The required semantic fallback shown wherever the component cannot render."""

    kind: Annotated[str, js_chars(1, COMPONENT_FALLBACK_KIND_MAX_CHARS)]
    summary: Annotated[str, js_chars(1, COMPONENT_FALLBACK_SUMMARY_MAX_CHARS)]


class ComponentFrame(WireModel):
    """A v1 render frame: envelope valid, props bounded, not yet resolved by a manifest."""

    protocol: ProtocolName
    version: VersionOne
    type: Literal["render"]
    component_key: ComponentKey = Field(alias="componentKey")
    instance_id: SafeId = Field(alias="instanceId")
    props: BoundedJson
    fallback: ComponentFallback


class ComponentSelection(WireModel):
    """The user chose `choiceId` in a rendered component instance."""

    protocol: ProtocolName
    version: VersionOne
    type: Literal["select"]
    component_key: ComponentKey = Field(alias="componentKey")
    instance_id: SafeId = Field(alias="instanceId")
    choice_id: SafeId = Field(alias="choiceId")


class ComponentInteraction(WireModel):
    """A named interaction (`event`) with an optional bounded JSON `value`.

    `value` absent and `value: null` differ on the wire; `to_wire()` keeps the
    difference because unset fields are omitted.
    """

    protocol: ProtocolName
    version: VersionOne
    type: Literal["interact"]
    component_key: ComponentKey = Field(alias="componentKey")
    instance_id: SafeId = Field(alias="instanceId")
    event: ComponentKey
    value: BoundedJson = None


ComponentEvent = ComponentSelection | ComponentInteraction


# Fixed diagnostics: never any part of the payload or of a validator error.
_FRAME_NOT_JSON: Final = Diagnostic(COMPONENT_INVALID_FRAME, "Component frame is not valid JSON.")
_FRAME_INVALID: Final = Diagnostic(COMPONENT_INVALID_FRAME, "Component frame payload is invalid.")
_FRAME_VERSION: Final = Diagnostic(
    COMPONENT_UNSUPPORTED_VERSION, "Component frame uses an unsupported version."
)
_FRAME_TYPE: Final = Diagnostic(COMPONENT_UNKNOWN_TYPE, "Component frame type is unknown.")
_EVENT_NOT_JSON: Final = Diagnostic(COMPONENT_INVALID_EVENT, "Component event is not valid JSON.")
_EVENT_INVALID: Final = Diagnostic(COMPONENT_INVALID_EVENT, "Component event payload is invalid.")
_EVENT_VERSION: Final = Diagnostic(
    COMPONENT_UNSUPPORTED_VERSION, "Component event uses an unsupported version."
)
_EVENT_TYPE: Final = Diagnostic(COMPONENT_UNKNOWN_TYPE, "Component event type is unknown.")

_VALIDATION_ERRORS: Final = (ValidationError, ValueError, TypeError, RecursionError)


def _candidate(data: Any) -> Any:
    """Text or bytes parsed strictly (duplicate keys rejected); anything else as given."""
    if isinstance(data, str | bytes | bytearray):
        return parse_json(data)
    return data


def _classify(candidate: Any, known_types: tuple[str, ...]) -> str | None:
    """Version/type triage done before schema validation, in the reference order.

    Only an object that names this protocol is triaged: a numeric version
    other than 1 wins over everything, then an unknown `type`. Anything else
    (missing or non-numeric version included) is left to the schema.
    """
    if not isinstance(candidate, dict):
        return None
    protocol = candidate.get("protocol")
    if type(protocol) is not str or protocol != COMPONENT_PROTOCOL:
        return None
    version = candidate.get("version")
    if _is_number(version) and version != COMPONENT_PROTOCOL_VERSION:
        return "version"
    kind = candidate.get("type")
    if type(kind) is not str or kind not in known_types:
        return "type"
    return None


def component_frame_or_none(candidate: Any) -> ComponentFrame | None:
    """The frame for an already-parsed value (dict or model), or None; never raises."""
    try:
        if isinstance(candidate, ComponentFrame):
            return candidate
        if not isinstance(candidate, dict):
            return None
        return ComponentFrame.model_validate(candidate)
    except _VALIDATION_ERRORS:
        return None
    except Exception:  # hostile objects may raise anything; inert
        return None


def decode_component_frame(data: Any) -> DecodeResult:
    """Decode an untrusted render frame (text, bytes or dict); `.frame` on success.

    Never raises. Codes: COMPONENT_UNSUPPORTED_VERSION, COMPONENT_UNKNOWN_TYPE,
    COMPONENT_INVALID_FRAME (invalid JSON, schema, missing/non-numeric version).
    """
    try:
        if isinstance(data, ComponentFrame):
            return DecodeResult.success(data)
        candidate = _candidate(data)
        if candidate is JSON_INVALID:
            return DecodeResult.failure(_FRAME_NOT_JSON)
        triage = _classify(candidate, ("render",))
        if triage == "version":
            return DecodeResult.failure(_FRAME_VERSION)
        if triage == "type":
            return DecodeResult.failure(_FRAME_TYPE)
        frame = component_frame_or_none(candidate)
    except Exception:  # a decoder never raises
        return DecodeResult.failure(_FRAME_INVALID)
    return DecodeResult.failure(_FRAME_INVALID) if frame is None else DecodeResult.success(frame)


_EVENT_MODELS: Final[dict[str, type[ComponentSelection] | type[ComponentInteraction]]] = {
    "select": ComponentSelection,
    "interact": ComponentInteraction,
}


def _validate_event(candidate: Any) -> ComponentEvent | None:
    if isinstance(candidate, ComponentSelection | ComponentInteraction):
        return candidate
    if not isinstance(candidate, dict):
        return None
    kind = candidate.get("type")
    model = _EVENT_MODELS.get(kind) if type(kind) is str else None
    if model is None:
        return None
    try:
        return model.model_validate(candidate)
    except _VALIDATION_ERRORS:
        return None


def decode_component_event(data: Any) -> DecodeResult:
    """Decode an untrusted `select` or `interact` event; `.event` on success.

    Same triage as frames, with COMPONENT_INVALID_EVENT for JSON/schema
    failures (the spec names no event code; this one is ours). Never raises.
    """
    try:
        candidate = _candidate(data)
        if candidate is JSON_INVALID:
            return DecodeResult.failure(_EVENT_NOT_JSON)
        triage = _classify(candidate, tuple(_EVENT_MODELS))
        if triage == "version":
            return DecodeResult.failure(_EVENT_VERSION)
        if triage == "type":
            return DecodeResult.failure(_EVENT_TYPE)
        event = _validate_event(candidate)
    except Exception:  # a decoder never raises
        return DecodeResult.failure(_EVENT_INVALID)
    return DecodeResult.failure(_EVENT_INVALID) if event is None else DecodeResult.success(event)


def _frame_identity(frame: ComponentFrame | dict[str, Any]) -> ComponentFrame:
    validated = component_frame_or_none(frame)
    if validated is None:
        raise ProtocolError(COMPONENT_INVALID_FRAME, _FRAME_INVALID.message)
    return validated


def _build_event(build: Callable[[], ComponentEvent]) -> ComponentEvent:
    try:
        return build()
    except _VALIDATION_ERRORS:
        raise ProtocolError(COMPONENT_INVALID_EVENT, _EVENT_INVALID.message) from None


def create_selection_event(
    frame: ComponentFrame | dict[str, Any], choice_id: str
) -> ComponentSelection:
    """The selection event for `frame`; raises ProtocolError on an invalid frame or id."""
    source = _frame_identity(frame)
    wire = {
        "protocol": COMPONENT_PROTOCOL,
        "version": COMPONENT_PROTOCOL_VERSION,
        "type": "select",
        "componentKey": source.component_key,
        "instanceId": source.instance_id,
        "choiceId": choice_id,
    }
    event = _build_event(lambda: ComponentSelection.model_validate(wire))
    assert isinstance(event, ComponentSelection)
    return event


_NO_VALUE: Final = object()


def create_interaction_event(
    frame: ComponentFrame | dict[str, Any], event: str, value: Any = _NO_VALUE
) -> ComponentInteraction:
    """The interaction event for `frame`; omit `value` for value-less events.

    Raises ProtocolError when the frame, the event name or the value is invalid.
    """
    source = _frame_identity(frame)
    wire: dict[str, Any] = {
        "protocol": COMPONENT_PROTOCOL,
        "version": COMPONENT_PROTOCOL_VERSION,
        "type": "interact",
        "componentKey": source.component_key,
        "instanceId": source.instance_id,
        "event": event,
    }
    if value is not _NO_VALUE:
        wire["value"] = value
    built = _build_event(lambda: ComponentInteraction.model_validate(wire))
    assert isinstance(built, ComponentInteraction)
    return built


def fallback_text(frame: ComponentFrame | dict[str, Any]) -> str:
    """The semantic fallback line: `[unsupported visual: <kind>] <summary>`.

    Accepts a frame model or its wire dict; raises ProtocolError when the
    frame is invalid (a renderer only calls this on a decoded frame).
    """
    fallback = _frame_identity(frame).fallback
    return f"[unsupported visual: {fallback.kind}] {fallback.summary}"
