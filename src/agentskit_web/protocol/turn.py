"""Turn protocol `agentskit.chat.turn` version 1 (PROTOCOL.md section 1).

A turn is a client submit followed by server snapshots (complete projections,
never deltas) and diagnostics, one JSON event per NDJSON line. This module
holds the event models, the never-raising decoder with the spec's exact
diagnostic order, the one-line encoder, the snapshot factory, the snapshot
cursor that orders reconnect deliveries, and the reference server's fixed
error table and status mapping.

Numbers follow JavaScript, as the reference decoder does: an integral float
(`1.0`) is the same number as `1`, a boolean never is, and integers must be
JavaScript-safe. Strings are never coerced into numbers ("1" is not 1).
"""

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, BeforeValidator, Field, TypeAdapter

from .dates import IsoDateTime, format_memory_datetime
from .diagnostics import DecodeResult, Diagnostic, ProtocolError
from .identifiers import Code, SafeId, is_safe_id, js_chars
from .json_structure import StructureLimits, check_structure
from .limits import JS_MAX_SAFE_INTEGER, JSON_MAX_NESTING, TURN_EVENT_MAX_NODES
from .memory_record import (
    MemoryMessage,
    memory_messages_to_wire,
    validate_memory_messages,
)
from .text_metrics import js_is_blank
from .wire_json import JSON_INVALID, dump_json, nesting_depth_exceeds, parse_json
from .wire_model import WireModel

TURN_PROTOCOL: Final = "agentskit.chat.turn"
TURN_PROTOCOL_VERSION: Final = 1

SUBMIT_EVENT: Final = "client.turn.submit"
SNAPSHOT_EVENT: Final = "server.turn.snapshot"
DIAGNOSTIC_EVENT: Final = "server.turn.diagnostic"
TURN_EVENT_NAMES: Final = frozenset({SUBMIT_EVENT, SNAPSHOT_EVENT, DIAGNOSTIC_EVENT})

# Decoder diagnostics: codes and their fixed messages (the table of section 1).
PROTOCOL_INVALID_PAYLOAD: Final = "PROTOCOL_INVALID_PAYLOAD"
PROTOCOL_UNSUPPORTED_VERSION: Final = "PROTOCOL_UNSUPPORTED_VERSION"
PROTOCOL_UNKNOWN_EVENT: Final = "PROTOCOL_UNKNOWN_EVENT"
TURN_NOT_JSON_MESSAGE: Final = "Turn event is not valid JSON."
TURN_UNSUPPORTED_VERSION_MESSAGE: Final = "Turn event uses an unsupported protocol version."
TURN_UNKNOWN_EVENT_MESSAGE: Final = "Turn event kind is unknown."
TURN_INVALID_PAYLOAD_MESSAGE: Final = "Turn event payload is invalid."
TURN_CURSOR_SESSION_MESSAGE: Final = "Turn snapshot cursor session id is invalid."

# Pre-check for host objects and parsed text alike: plain JSON, no cycles, the
# same nesting bound as `parse_json` (root counted as depth 1, hence + 1).
TURN_EVENT_LIMITS: Final = StructureLimits(
    max_nodes=TURN_EVENT_MAX_NODES, max_depth=JSON_MAX_NESTING + 1
)


def _js_integer(value: Any) -> Any:
    """JavaScript number semantics: `2.0` is the integer 2; a boolean is not a number."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def _present(value: Any) -> Any:
    if value is None:
        raise ValueError("explicit null")
    return value


def _non_blank(value: str) -> str:
    if js_is_blank(value):
        raise ValueError("blank")
    return value


ProtocolVersion = Annotated[Literal[1], BeforeValidator(_js_integer)]
SafeCount = Annotated[int, BeforeValidator(_js_integer), Field(ge=0, le=JS_MAX_SAFE_INTEGER)]
SnapshotStatus = Literal["idle", "streaming", "complete", "error"]


class TurnDiagnostic(WireModel):
    """`{version: 1, code, message, retryable}`: a server diagnostic or a snapshot error."""

    version: ProtocolVersion
    code: Code
    message: Annotated[str, js_chars(1)]
    retryable: bool


class TokenUsage(WireModel):
    """Token counts of the turn so far, integers >= 0."""

    prompt_tokens: SafeCount = Field(alias="promptTokens")
    completion_tokens: SafeCount = Field(alias="completionTokens")
    total_tokens: SafeCount = Field(alias="totalTokens")


class SubmitLineage(WireModel):
    """A snapshot produced by a plain submit."""

    operation: Literal["submit"]


class DerivedLineage(WireModel):
    """A snapshot produced by retrying, editing or regenerating an earlier turn."""

    operation: Literal["retry", "edit", "regenerate"]
    parent_turn_id: SafeId = Field(alias="parentTurnId")
    source_message_id: SafeId = Field(alias="sourceMessageId")


TurnLineage = Annotated[SubmitLineage | DerivedLineage, Field(discriminator="operation")]


class SubmitPayload(WireModel):
    """`{input}`: at least one char and not blank after JavaScript trimming."""

    input: Annotated[str, js_chars(1), AfterValidator(_non_blank)]


def _snapshot_messages(value: Any) -> tuple[MemoryMessage, ...]:
    try:
        return validate_memory_messages(value)
    except ProtocolError:
        raise ValueError("messages are not a valid memory record") from None


class SnapshotPayload(WireModel):
    """`{messages, status, usage, error?, lineage?}` - a complete projection of the turn."""

    messages: Annotated[tuple[MemoryMessage, ...], BeforeValidator(_snapshot_messages)]
    status: SnapshotStatus
    usage: TokenUsage
    error: Annotated[TurnDiagnostic | None, BeforeValidator(_present)] = None
    lineage: Annotated[TurnLineage | None, BeforeValidator(_present)] = None


class TurnEventBase(WireModel):
    """Envelope fields shared by every v1 event, in wire order."""

    protocol: Literal["agentskit.chat.turn"]
    version: ProtocolVersion
    event_id: SafeId = Field(alias="eventId")
    session_id: SafeId = Field(alias="sessionId")
    turn_id: SafeId = Field(alias="turnId")
    sequence: SafeCount
    emitted_at: IsoDateTime = Field(alias="emittedAt")


class SubmitTurnEvent(TurnEventBase):
    """`client.turn.submit`."""

    event: Literal["client.turn.submit"]
    payload: SubmitPayload


class SnapshotTurnEvent(TurnEventBase):
    """`server.turn.snapshot`."""

    event: Literal["server.turn.snapshot"]
    payload: SnapshotPayload


class DiagnosticTurnEvent(TurnEventBase):
    """`server.turn.diagnostic`."""

    event: Literal["server.turn.diagnostic"]
    payload: TurnDiagnostic


AnyTurnEvent = SubmitTurnEvent | SnapshotTurnEvent | DiagnosticTurnEvent
TurnEvent = Annotated[AnyTurnEvent, Field(discriminator="event")]
_TURN_EVENT: Final[TypeAdapter[AnyTurnEvent]] = TypeAdapter(TurnEvent)


# --- decoding ---------------------------------------------------------------


def _is_js_number(value: Any) -> bool:
    return type(value) is int or type(value) is float


_TOO_DEEP: Final = object()
"""Sentinel: JSON text nested deeper than the decoder's bound (valid JSON, invalid event)."""


def _parse_text(data: str | bytes | bytearray | memoryview) -> Any:
    """Parse event text; syntax errors are `JSON_INVALID`, excessive nesting `_TOO_DEEP`.

    Deep nesting is told apart from bad syntax so that a well-formed but
    100,000-bracket document is reported as an invalid event, as the
    reference (whose parser accepts it) reports it, not as "not JSON".
    """
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return JSON_INVALID
    if nesting_depth_exceeds(text, JSON_MAX_NESTING):
        return _TOO_DEEP
    return parse_json(text, depth_checked=True)


def _candidate(data: Any) -> Any:
    """Parsed JSON for text, the wire dict for a model, the value itself otherwise."""
    if isinstance(data, (str, bytes, bytearray, memoryview)):
        return _parse_text(data)
    if isinstance(data, WireModel):
        return data.to_wire()
    return data


def _field(candidate: Any, key: str) -> Any:
    """Read a top-level field without running any method the host object overrides."""
    return dict.get(candidate, key) if isinstance(candidate, dict) else None


def _echo_event_id(candidate: Any) -> str | None:
    event_id = _field(candidate, "eventId")
    return event_id if type(event_id) is str and is_safe_id(event_id) else None


def _skew(candidate: Any) -> tuple[str, str] | None:
    """Version skew and unknown kinds, checked before the schema as the spec orders them."""
    protocol = _field(candidate, "protocol")
    if type(protocol) is not str or protocol != TURN_PROTOCOL:
        return None
    version = _field(candidate, "version")
    if not _is_js_number(version):
        return None
    if version != TURN_PROTOCOL_VERSION:
        return PROTOCOL_UNSUPPORTED_VERSION, TURN_UNSUPPORTED_VERSION_MESSAGE
    event = _field(candidate, "event")
    if type(event) is str and event not in TURN_EVENT_NAMES:
        return PROTOCOL_UNKNOWN_EVENT, TURN_UNKNOWN_EVENT_MESSAGE
    return None


def _validate(candidate: Any) -> AnyTurnEvent | None:
    try:
        if not check_structure(candidate, TURN_EVENT_LIMITS):
            return None
        return _TURN_EVENT.validate_python(candidate)
    except Exception:  # anything the input does while validated makes it invalid
        return None


def _decode(data: Any) -> DecodeResult:
    candidate = _candidate(data)
    if candidate is JSON_INVALID:
        return DecodeResult.failure(Diagnostic(PROTOCOL_INVALID_PAYLOAD, TURN_NOT_JSON_MESSAGE))
    if candidate is _TOO_DEEP:
        return DecodeResult.failure(
            Diagnostic(PROTOCOL_INVALID_PAYLOAD, TURN_INVALID_PAYLOAD_MESSAGE)
        )
    event_id = _echo_event_id(candidate)
    skew = _skew(candidate)
    if skew is not None:
        return DecodeResult.failure(Diagnostic(*skew, event_id=event_id))
    event = _validate(candidate)
    if event is None:
        return DecodeResult.failure(
            Diagnostic(PROTOCOL_INVALID_PAYLOAD, TURN_INVALID_PAYLOAD_MESSAGE, event_id=event_id)
        )
    return DecodeResult.success(event)


def decode_turn_event(data: Any) -> DecodeResult:
    """Decode one untrusted event (JSON text, UTF-8 bytes, a dict or a model); never raises.

    On success `result.event` is the model (`.to_wire()` gives the projected
    wire dict, unknown fields dropped). On failure `result.diagnostic` holds
    a fixed message and echoes `eventId` only when it is itself a SafeId.
    """
    try:
        return _decode(data)
    except Exception:  # a decoder never raises, whatever the host passed
        return DecodeResult.failure(
            Diagnostic(PROTOCOL_INVALID_PAYLOAD, TURN_INVALID_PAYLOAD_MESSAGE)
        )


def _invalid_event() -> ProtocolError:
    return ProtocolError(PROTOCOL_INVALID_PAYLOAD, TURN_INVALID_PAYLOAD_MESSAGE)


def _valid_event(event: Any) -> AnyTurnEvent:
    """A validated model for a host-built event (dict or model), or `ProtocolError`."""
    result = decode_turn_event(event) if isinstance(event, (dict, WireModel)) else None
    if result is None or not result.ok:
        raise _invalid_event()
    validated: AnyTurnEvent = result.event
    return validated


def encode_turn_event(event: Any) -> str:
    """One compact JSON line (no newline) for a valid event; raises `ProtocolError` if invalid.

    The event is validated first, so unknown fields are dropped and only a
    wire-valid event is ever written. Line breaks, U+2028/2029 and lone
    surrogates in text are escaped: the line cannot be split by its content.
    """
    return dump_json(_valid_event(event).to_wire())


# --- snapshots ----------------------------------------------------------------


def _wire_part(value: Any) -> Any:
    return value.to_wire() if isinstance(value, WireModel) else value


def _wire_time(value: Any) -> Any:
    return format_memory_datetime(value) if isinstance(value, datetime) else value


def create_snapshot_event(
    *,
    event_id: str,
    session_id: str,
    turn_id: str,
    sequence: int,
    emitted_at: str | datetime,
    messages: Iterable[MemoryMessage | Mapping[str, Any]],
    status: SnapshotStatus,
    usage: TokenUsage | Mapping[str, Any],
    lineage: SubmitLineage | DerivedLineage | Mapping[str, Any] | None = None,
    error: TurnDiagnostic | Mapping[str, Any] | None = None,
) -> SnapshotTurnEvent:
    """Build a validated `server.turn.snapshot`; raises `ProtocolError` when any field is invalid.

    Messages may be `MemoryMessage` models or wire dicts (a `datetime`
    createdAt is formatted as memory requires); `emitted_at` may be a datetime.
    """
    payload: dict[str, Any] = {
        "messages": memory_messages_to_wire(messages),
        "status": status,
        "usage": _wire_part(usage),
    }
    if error is not None:
        payload["error"] = _wire_part(error)
    if lineage is not None:
        payload["lineage"] = _wire_part(lineage)
    event = _valid_event(
        {
            "protocol": TURN_PROTOCOL,
            "version": TURN_PROTOCOL_VERSION,
            "eventId": event_id,
            "sessionId": session_id,
            "turnId": turn_id,
            "sequence": sequence,
            "emittedAt": _wire_time(emitted_at),
            "event": SNAPSHOT_EVENT,
            "payload": payload,
        }
    )
    if not isinstance(event, SnapshotTurnEvent):
        raise _invalid_event()
    return event


class TurnSnapshotCursor:
    """The latest accepted snapshot of one session, robust to reconnects and replays.

    The first valid snapshot for the session is accepted whatever its
    sequence; after it only a strictly higher sequence is. Anything else
    (duplicate, stale, other session, malformed, not a snapshot) is inert.
    Accepted snapshots are deeply immutable models.
    """

    __slots__ = ("_session_id", "_snapshot")

    def __init__(self, session_id: str) -> None:
        if type(session_id) is not str or not is_safe_id(session_id):
            raise ProtocolError(PROTOCOL_INVALID_PAYLOAD, TURN_CURSOR_SESSION_MESSAGE)
        self._session_id = session_id
        self._snapshot: SnapshotTurnEvent | None = None

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def snapshot(self) -> SnapshotTurnEvent | None:
        """The last accepted snapshot, or None before the first."""
        return self._snapshot

    def apply(self, event: Any) -> bool:
        """Decode `event` and accept it if it advances this session; never raises."""
        try:
            return self._accept(decode_turn_event(event))
        except Exception:  # an inert input must not break the caller
            return False

    def _accept(self, result: DecodeResult) -> bool:
        candidate = result.event
        if not result.ok or not isinstance(candidate, SnapshotTurnEvent):
            return False
        if candidate.session_id != self._session_id:
            return False
        if self._snapshot is not None and candidate.sequence <= self._snapshot.sequence:
            return False
        self._snapshot = candidate
        return True
