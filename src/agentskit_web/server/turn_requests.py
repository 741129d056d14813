"""Turn requests: parsing a submit, the refusals before a stream, and how they are sent.

The status table of the turn endpoint beyond PROTOCOL.md's fixed errors
(`turn_errors`): the refusals this server adds (a weak anonymous id, an input
or session past its bound, an overloaded server, a lineage that names nothing of
the session, an unknown session), the Ask admission refusals mapped into the
turn diagnostic shape, and `parse_submit`, which turns a body into a `Submit`
(strict JSON, a valid `client.turn.submit`, a valid optional lineage, an
anonymous id strong enough to be a capability). Nothing here touches the store.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from starlette.types import Send

from ..protocol.text_metrics import js_length
from ..protocol.turn import DerivedLineage, SubmitTurnEvent, decode_turn_event
from ..protocol.wire_json import JSON_INVALID, dump_json, parse_json
from .ask_app import _raw, _Reject
from .turn_errors import (
    REQUEST_INVALID_EVENT,
    REQUEST_INVALID_JSON,
    REQUEST_TOO_LARGE,
    SERVER_INTERNAL,
    SERVER_TIMEOUT,
    TURN_ERROR_HEADERS,
    TurnErrorSpec,
)
from .turn_limits import (
    CAPABILITY_ID_MIN_CHARS,
    TURN_INPUT_MAX_CHARS,
    TURN_SESSION_MAX_BYTES,
    is_capability_id,
)

ANONYMOUS_SESSION_ID_MIN_CHARS: Final = CAPABILITY_ID_MIN_CHARS
"""An anonymous session id is a capability: see `turn_limits.is_capability_id`."""
ANONYMOUS_OWNER: Final = "anonymous"
WEAK_SESSION_ID: Final = TurnErrorSpec(
    400,
    "REQUEST_INVALID_EVENT",
    "Anonymous session ids need at least 128 random bits (22 or more random characters).",
    False,
)
INPUT_TOO_LONG: Final = TurnErrorSpec(
    400,
    "REQUEST_INVALID_EVENT",
    f"The input is longer than {TURN_INPUT_MAX_CHARS} characters.",
    False,
)
SESSION_TOO_LARGE: Final = TurnErrorSpec(
    413,
    "SESSION_TOO_LARGE",
    f"This conversation has reached its size limit ({TURN_SESSION_MAX_BYTES // 1024} KiB); "
    "start a new conversation.",
    False,
)
SERVER_OVERLOADED: Final = TurnErrorSpec(
    503, "SERVER_OVERLOADED", "The server is busy; try again shortly.", True
)
STORE_FULL: Final = TurnErrorSpec(
    503,
    "SERVER_OVERLOADED",
    "The server cannot keep more conversations until older ones expire; try again later.",
    True,
)
"""A new session when the store is full: `Retry-After` says when the oldest one expires."""
BAD_LINEAGE: Final = TurnErrorSpec(
    400,
    "REQUEST_INVALID_EVENT",
    "The lineage does not name a turn and message of this session that it may replace.",
    False,
)
TURN_ID_USED: Final = TurnErrorSpec(
    400, "REQUEST_INVALID_EVENT", "This turn id was already used in this session.", False
)
SESSION_NOT_FOUND: Final = TurnErrorSpec(404, "SESSION_NOT_FOUND", "No such session.", False)
GET_NOT_ALLOWED: Final = TurnErrorSpec(
    405, "REQUEST_METHOD_NOT_ALLOWED", "Only GET is supported.", False
)


class TurnReject(Exception):
    """A refusal before the stream: status, turn diagnostic, extra headers."""

    def __init__(
        self,
        status: int,
        diagnostic: Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(diagnostic.get("code"))
        self.status = status
        self.diagnostic = dict(diagnostic)
        self.headers = dict(headers or {})

    @classmethod
    def of(cls, spec: TurnErrorSpec, **headers: str) -> "TurnReject":
        assert spec.status is not None
        return cls(spec.status, spec.to_wire(), headers)


def from_ask(reject: _Reject) -> TurnReject:
    """An Ask admission refusal in the turn table's terms (auth and rate codes kept)."""
    mapped = {
        413: REQUEST_TOO_LARGE,
        408: SERVER_TIMEOUT,
        400: REQUEST_INVALID_JSON,
        500: SERVER_INTERNAL,
    }.get(reject.status)
    if mapped is not None:
        return TurnReject(reject.status, mapped.to_wire(), reject.headers)
    diagnostic = {
        "version": 1,
        "code": reject.code,
        "message": reject.message,
        "retryable": reject.retryable,
    }
    return TurnReject(reject.status, diagnostic, reject.headers)


@dataclass(frozen=True, slots=True)
class Submit:
    principal_owner: str
    event: SubmitTurnEvent
    lineage: dict[str, Any]


@dataclass(slots=True)
class Reservation:
    """The client key holding a running-turn slot, until a started run takes it over."""

    client: str | None = None


def owner_of(principal: Any, session_id: str) -> str | None:
    """The key's owner, or None when an anonymous id is too weak to be a capability."""
    if principal.anonymous:
        if not is_capability_id(session_id):
            return None
        return ANONYMOUS_OWNER
    return f"sub:{principal.subject}"


def parse_submit(body: bytes, principal: Any) -> Submit:
    raw = parse_json(body)
    if raw is JSON_INVALID:
        raise TurnReject.of(REQUEST_INVALID_JSON)
    result = decode_turn_event(raw)
    if not result.ok or not isinstance(result.event, SubmitTurnEvent):
        raise TurnReject.of(REQUEST_INVALID_EVENT)
    event: SubmitTurnEvent = result.event
    if js_length(event.payload.input) > TURN_INPUT_MAX_CHARS:
        raise TurnReject.of(INPUT_TOO_LONG)
    lineage: dict[str, Any] = {"operation": "submit"}
    payload = raw.get("payload") if isinstance(raw, dict) else None
    offered = payload.get("lineage") if isinstance(payload, dict) else None
    if offered is not None:
        lineage = _lineage_or_none(offered) or {}
        if not lineage:
            raise TurnReject.of(REQUEST_INVALID_EVENT)
    owner = owner_of(principal, event.session_id)
    if owner is None:
        raise TurnReject.of(WEAK_SESSION_ID)
    return Submit(owner, event, lineage)


def _lineage_or_none(value: Any) -> dict[str, Any] | None:
    try:
        if isinstance(value, dict) and value.get("operation") == "submit" and len(value) == 1:
            return {"operation": "submit"}
        return DerivedLineage.model_validate(value).to_wire()
    except Exception:
        return None


async def send_error(send: Send, reject: TurnReject, cors: Mapping[str, str]) -> None:
    body = dump_json({"error": reject.diagnostic}).encode()
    headers = {
        **TURN_ERROR_HEADERS,
        "content-length": str(len(body)),
        "x-content-type-options": "nosniff",
        **reject.headers,
        **cors,
    }
    await send({"type": "http.response.start", "status": reject.status, "headers": _raw(headers)})
    await send({"type": "http.response.body", "body": body})
