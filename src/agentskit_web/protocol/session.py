"""Session envelope `agentskit.chat.session` v1 (and the v0 shape), PROTOCOL.md section 4.

A session snapshot is application metadata only (identity, definition
revision, cursor, deterministic decisions, confirmation bindings); messages
live in chat memory. Unknown additive fields are dropped, as the reference
schema (a non-strict zod object) does.

Version 0 is the v1 object without `protocol` and with `version: 0`; it is
decoded by migrating it (adding `protocol`, setting `version: 1`) and
validating the result as v1, so `.snapshot` is always v1.

Storage is a port: `SessionStore.save(snapshot, expected_cursor)` is an
atomic compare-and-set on `cursor`, which is what keeps two tabs or two
requests from silently overwriting each other.
"""

import copy
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, BeforeValidator, Field, ValidationError

from .component import is_bounded_json
from .dates import IsoDateTime
from .diagnostics import DecodeResult, Diagnostic
from .identifiers import SafeId, js_chars
from .json_structure import StructureLimits, check_structure
from .limits import (
    BOUNDED_JSON_MAX_NODES,
    JSON_MAX_NESTING,
    SESSION_DECISION_CONTENT_MAX_CHARS,
    SESSION_DECISION_INPUT_MAX_CHARS,
    SESSION_MAX_CONFIRMATIONS,
    SESSION_MAX_DECISIONS,
    SESSION_MAX_TERMINAL_TURNS,
    SESSION_STATE_MAX_CHARS,
)
from .wire_fields import NOT_NULL, JsNonNegativeInt, JsPositiveInt, exact_number
from .wire_json import JSON_INVALID, parse_json
from .wire_model import WireModel

SESSION_PROTOCOL: Final = "agentskit.chat.session"
SESSION_PROTOCOL_VERSION: Final = 1
SESSION_LEGACY_VERSION: Final = 0

SESSION_INVALID_SNAPSHOT: Final = "SESSION_INVALID_SNAPSHOT"
SESSION_UNSUPPORTED_VERSION: Final = "SESSION_UNSUPPORTED_VERSION"

_NOT_JSON: Final = Diagnostic(SESSION_INVALID_SNAPSHOT, "Session snapshot is not valid JSON.")
SESSION_PAYLOAD_INVALID: Final = Diagnostic(
    SESSION_INVALID_SNAPSHOT, "Session snapshot payload is invalid."
)
_UNSUPPORTED: Final = Diagnostic(
    SESSION_UNSUPPORTED_VERSION, "Session snapshot uses an unsupported version."
)

# Pre-check for host dicts before pydantic sees them: cycle-safe, no deeper
# than parsed JSON could be, and no more nodes than a maximal valid snapshot
# (every confirmation carrying a full bounded-JSON input) plus slack.
_STRUCTURE: Final = StructureLimits(
    max_nodes=SESSION_MAX_CONFIRMATIONS * (BOUNDED_JSON_MAX_NODES + 16)
    + SESSION_MAX_DECISIONS * 16
    + SESSION_MAX_TERMINAL_TURNS * 8
    + 1_024,
    max_depth=JSON_MAX_NESTING + 1,
)

StateName = Annotated[str, js_chars(1, SESSION_STATE_MAX_CHARS)]


def _unique(field: str) -> AfterValidator:
    """Reject a list in which two items share the value of `field`."""

    def check(items: list[Any]) -> list[Any]:
        seen: set[str] = set()
        for item in items:
            value = getattr(item, field)
            if value in seen:
                raise ValueError(f"{field} must be unique")
            seen.add(value)
        return items

    return AfterValidator(check)


def _json_object(value: Any) -> Any:
    """Confirmation input: a plain JSON object within the section-3 bounded-JSON caps."""
    if type(value) is not dict or not is_bounded_json(value):
        raise ValueError("not a bounded JSON object")
    # A private copy, so a host mutating its dict cannot change a frozen snapshot;
    # bounded JSON is at most 21 levels deep, so the recursive copy is safe.
    return copy.deepcopy(value)


class SessionActiveTurn(WireModel):
    """The turn currently running and when its lease expires (epoch ms)."""

    turn_id: SafeId = Field(alias="turnId")
    expires_at: JsNonNegativeInt = Field(alias="expiresAt")


class SessionTerminalTurn(WireModel):
    """A finished turn and whether its outcome is known."""

    turn_id: SafeId = Field(alias="turnId")
    outcome: Literal["completed", "indeterminate"]


class SessionDecision(WireModel):
    """One deterministic routing decision taken for a message."""

    message_id: SafeId = Field(alias="messageId")
    input: Annotated[str, js_chars(0, SESSION_DECISION_INPUT_MAX_CHARS)]
    route_id: SafeId = Field(alias="routeId")
    kind: Literal["deterministic", "repaired", "fallback"]
    content: Annotated[str, js_chars(0, SESSION_DECISION_CONTENT_MAX_CHARS)]
    from_state: StateName = Field(alias="fromState")
    to_state: StateName = Field(alias="toState")


class SessionConversation(WireModel):
    """Conversation state machine position and its decisions (unique messageId)."""

    state: StateName
    decisions: Annotated[
        list[SessionDecision],
        Field(max_length=SESSION_MAX_DECISIONS),
        _unique("message_id"),
    ]


class SessionConfirmation(WireModel):
    """A pending or settled confirmation bound to one tool call."""

    token: SafeId
    action: SafeId
    input: Annotated[dict[str, Any], BeforeValidator(_json_object)]
    tool_call_id: SafeId = Field(alias="toolCallId")
    expires_at: JsNonNegativeInt = Field(alias="expiresAt")
    status: Literal[
        "pending", "approving", "rejecting", "expiring", "approved", "rejected", "expired"
    ]


class SessionSnapshot(WireModel):
    """A v1 session snapshot (immutable). Decode untrusted data with `decode_session_snapshot`."""

    protocol: Literal["agentskit.chat.session"]
    version: Annotated[Literal[1], exact_number(SESSION_PROTOCOL_VERSION)]
    session_id: SafeId = Field(alias="sessionId")
    definition_id: SafeId = Field(alias="definitionId")
    definition_revision: JsPositiveInt = Field(alias="definitionRevision")
    updated_at: IsoDateTime = Field(alias="updatedAt")
    cursor: JsNonNegativeInt
    active_turn: Annotated[SessionActiveTurn | None, NOT_NULL] = Field(
        default=None, alias="activeTurn"
    )
    terminal_turns: Annotated[
        list[SessionTerminalTurn] | None,
        NOT_NULL,
        Field(max_length=SESSION_MAX_TERMINAL_TURNS),
        _unique("turn_id"),
    ] = Field(default=None, alias="terminalTurns")
    conversation: Annotated[SessionConversation | None, NOT_NULL] = None
    confirmations: Annotated[
        list[SessionConfirmation],
        Field(max_length=SESSION_MAX_CONFIRMATIONS),
        _unique("token"),
        _unique("tool_call_id"),
    ]


_VALIDATION_ERRORS: Final = (ValidationError, ValueError, TypeError, RecursionError)


def _is_number(value: object) -> bool:
    """JavaScript `typeof value === "number"`: int or float, never bool."""
    return type(value) is int or type(value) is float


def _validate(candidate: dict[str, Any]) -> SessionSnapshot | None:
    try:
        return SessionSnapshot.model_validate(candidate)
    except _VALIDATION_ERRORS:
        return None


def _migrate_v0(candidate: dict[str, Any]) -> SessionSnapshot | None:
    """A v0 object is v1 minus `protocol` with version 0: add protocol, bump, validate.

    Any `protocol` field already on a v0 object is not part of its shape and
    is replaced, as the reference's legacy schema drops it.
    """
    version = candidate.get("version")
    if not (_is_number(version) and version == SESSION_LEGACY_VERSION):
        return None
    migrated = {**candidate, "protocol": SESSION_PROTOCOL, "version": SESSION_PROTOCOL_VERSION}
    return _validate(migrated)


def _decode(data: Any) -> DecodeResult:
    if isinstance(data, SessionSnapshot):
        return DecodeResult.success(data)
    candidate = parse_json(data) if isinstance(data, str | bytes | bytearray) else data
    if candidate is JSON_INVALID:
        return DecodeResult.failure(_NOT_JSON)
    if type(candidate) is not dict or not check_structure(candidate, _STRUCTURE):
        return DecodeResult.failure(SESSION_PAYLOAD_INVALID)
    version = candidate.get("version")
    if _is_number(version) and version not in (SESSION_LEGACY_VERSION, SESSION_PROTOCOL_VERSION):
        return DecodeResult.failure(_UNSUPPORTED)
    snapshot = _validate(candidate) or _migrate_v0(candidate)
    return (
        DecodeResult.failure(SESSION_PAYLOAD_INVALID)
        if snapshot is None
        else DecodeResult.success(snapshot)
    )


def decode_session_snapshot(data: Any) -> DecodeResult:
    """Decode an untrusted session snapshot (text, bytes or dict); `.snapshot` is always v1.

    Order: not JSON -> SESSION_INVALID_SNAPSHOT ("... not valid JSON."); a
    numeric `version` other than 0 or 1 -> SESSION_UNSUPPORTED_VERSION; then
    v1, then v0 migrated to v1; anything else -> SESSION_INVALID_SNAPSHOT.
    Never raises.
    """
    try:
        return _decode(data)
    except Exception:  # a decoder never raises; hostile objects may
        return DecodeResult.failure(SESSION_PAYLOAD_INVALID)
