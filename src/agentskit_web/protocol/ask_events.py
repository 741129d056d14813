"""Ask service events, version 1 (PROTOCOL.md section 5): one strict shape per NDJSON line.

Every shape is closed: an extra field makes the event invalid, and an
invalid event is inert (the decoder drops it). `answer` and `cite` are tool
*names*, projected later by the chat layer; they are not event types here.

Facts from the reference schema that the spec leaves implicit: `tool.id`
and `tool.name` have no minimum length; `tool.args` values are arbitrary
JSON (only the keys are bounded), already limited by the 1 MiB line bound and
the parser's nesting bound. `error.code` and `error.retryable` follow the
spec (the reference server emits them; an older reference schema omitted
them).
"""

from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, ValidationError

from .identifiers import AskErrorCode, js_chars
from .json_structure import StructureLimits, check_structure
from .limits import (
    ASK_ERROR_MESSAGE_MAX_CHARS,
    ASK_LINE_MAX_BYTES,
    ASK_MODEL_MAX_CHARS,
    ASK_TEXT_DELTA_MAX_CHARS,
    ASK_TOOL_ARG_KEY_MAX_CHARS,
    ASK_TOOL_ID_MAX_CHARS,
    ASK_TOOL_NAME_MAX_CHARS,
    JSON_MAX_NESTING,
)
from .text_metrics import js_length, js_length_within
from .wire_fields import NOT_NULL
from .wire_json import JSON_INVALID, parse_json
from .wire_model import StrictWireModel

# A host dict gets the same bounds a parsed line has: no deeper than the
# parser allows, and no more nodes than a 1 MiB line can spell (>= 1 byte each).
_HOST_OBJECT_LIMITS: Final = StructureLimits(
    max_nodes=ASK_LINE_MAX_BYTES,
    max_depth=JSON_MAX_NESTING + 1,
)


def _bounded_arg_keys(args: dict[str, Any]) -> dict[str, Any]:
    for key in args:
        if js_length(key) > ASK_TOOL_ARG_KEY_MAX_CHARS:
            raise ValueError("tool argument name too long")
    return args


class AskTextEvent(StrictWireModel):
    """A text delta (may be empty; the projection drops empty text)."""

    type: Literal["text"]
    delta: Annotated[str, js_chars(0, ASK_TEXT_DELTA_MAX_CHARS)]


class AskToolEvent(StrictWireModel):
    """A tool call: `answer` and `cite` are projected by the chat layer, others by the host."""

    type: Literal["tool"]
    id: Annotated[str, js_chars(0, ASK_TOOL_ID_MAX_CHARS)]
    name: Annotated[str, js_chars(0, ASK_TOOL_NAME_MAX_CHARS)]
    args: Annotated[dict[str, Any], AfterValidator(_bounded_arg_keys)]


class AskDoneEvent(StrictWireModel):
    """Terminal success, optionally naming the model."""

    type: Literal["done"]
    model: Annotated[str | None, NOT_NULL, js_chars(0, ASK_MODEL_MAX_CHARS)] = None


class AskErrorEvent(StrictWireModel):
    """Terminal failure with a safe message, an optional code and retryability."""

    type: Literal["error"]
    message: Annotated[str, js_chars(1, ASK_ERROR_MESSAGE_MAX_CHARS)]
    code: Annotated[AskErrorCode | None, NOT_NULL] = None
    retryable: Annotated[bool | None, NOT_NULL] = None


AskEvent = AskTextEvent | AskToolEvent | AskDoneEvent | AskErrorEvent

_MODELS: Final[dict[str, type[AskEvent]]] = {
    "text": AskTextEvent,
    "tool": AskToolEvent,
    "done": AskDoneEvent,
    "error": AskErrorEvent,
}

_VALIDATION_ERRORS: Final = (ValidationError, ValueError, TypeError, RecursionError)


def ask_event_or_none(candidate: Any) -> AskEvent | None:
    """The event model for an already-parsed JSON value, or None (unknown type, invalid).

    The caller guarantees `candidate` came from `parse_json` (bounded nesting);
    hosts with their own objects use `ask_event_wire_or_none`.
    """
    if type(candidate) is not dict:
        return None
    kind = candidate.get("type")
    model = _MODELS.get(kind) if type(kind) is str else None
    if model is None:
        return None
    try:
        return model.model_validate(candidate)
    except _VALIDATION_ERRORS:
        return None


_TEXT_EVENT_KEYS: Final = frozenset(("type", "delta"))


def plain_text_delta(candidate: Any) -> str | None:
    """The delta of a plain text event dict, checked by hand; None to ask the model.

    Most of a stream is text deltas, and building a pydantic model per line then
    dumping it back is most of the decoding time in the page. This accepts exactly
    what `AskTextEvent` accepts (a plain dict with the two keys, an exact `str`
    delta within bounds) and leaves every other case, valid or not, to the model.
    A dict whose keys are hostile objects may still raise in the key comparison:
    callers on untrusted input call it inside their `try`.
    """
    if type(candidate) is not dict:
        return None
    kind = candidate.get("type")
    if type(kind) is not str or kind != "text":
        return None
    delta = candidate.get("delta")
    if type(delta) is not str or candidate.keys() != _TEXT_EVENT_KEYS:
        return None
    return delta if js_length_within(delta, ASK_TEXT_DELTA_MAX_CHARS) else None


def ask_event_wire_from_parsed(candidate: Any) -> dict[str, Any] | None:
    """The wire dict of an already-parsed JSON value (from `parse_json`), or None.

    The same answer as `ask_event_or_none(candidate).to_wire()`, with text deltas
    checked without a model (the decoder's hot path).
    """
    delta = plain_text_delta(candidate)
    if delta is not None:
        return {"type": "text", "delta": delta}
    event = ask_event_or_none(candidate)
    return None if event is None else event.to_wire()


def ask_event_wire_or_none(data: Any) -> dict[str, Any] | None:
    """The wire dict of one valid Ask event, or None; never raises.

    Accepts one JSON text (str or bytes, parsed strictly: duplicate keys,
    NaN and deep nesting are invalid), an already-parsed dict (checked to be
    plain, acyclic JSON data first) or an event model.
    """
    try:
        delta = plain_text_delta(data)  # plain str values: nothing to walk
        if delta is not None:
            return {"type": "text", "delta": delta}
        if isinstance(data, AskTextEvent | AskToolEvent | AskDoneEvent | AskErrorEvent):
            return data.to_wire()
        if isinstance(data, str | bytes | bytearray):
            candidate = parse_json(data)
            if candidate is JSON_INVALID:
                return None
        else:
            candidate = data
            if not check_structure(candidate, _HOST_OBJECT_LIMITS):
                return None
        event = ask_event_or_none(candidate)
        return None if event is None else event.to_wire()
    except Exception:  # hostile objects may raise anything; inert
        return None
