"""The reference turn server's fixed errors and stream headers (PROTOCOL.md section 1).

Errors answered before a stream are JSON `{"error": <turn diagnostic>}` with
the HTTP status of this table; `CHAT_TURN_FAILED` only appears inside a
snapshot. Server policy lives here, beside the server, while the diagnostic
model itself (`TurnDiagnostic`) is the wire contract in protocol/turn.py.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from ..protocol.turn import TURN_PROTOCOL_VERSION, SnapshotStatus, TurnDiagnostic


@dataclass(frozen=True, slots=True)
class TurnErrorSpec:
    """One fixed error of the reference turn server: HTTP status, code, message, retryable.

    `status` is None for errors that only appear inside a snapshot.
    """

    status: int | None
    code: str
    message: str
    retryable: bool

    def diagnostic(self) -> TurnDiagnostic:
        """The turn diagnostic model (`{version: 1, code, message, retryable}`)."""
        return TurnDiagnostic.model_validate(self.to_wire())

    def to_wire(self) -> dict[str, Any]:
        return {
            "version": TURN_PROTOCOL_VERSION,
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
        }

    def error_body(self) -> dict[str, Any]:
        """The JSON body of an error answered before streaming: `{"error": <diagnostic>}`."""
        return {"error": self.to_wire()}


REQUEST_METHOD_NOT_ALLOWED: Final = TurnErrorSpec(
    405, "REQUEST_METHOD_NOT_ALLOWED", "Only POST is supported.", False
)
REQUEST_UNSUPPORTED_MEDIA_TYPE: Final = TurnErrorSpec(
    415, "REQUEST_UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json.", False
)
REQUEST_TOO_LARGE: Final = TurnErrorSpec(
    413, "REQUEST_TOO_LARGE", "Request body is too large.", False
)
REQUEST_INVALID_JSON: Final = TurnErrorSpec(
    400, "REQUEST_INVALID_JSON", "Request body is not valid JSON.", False
)
REQUEST_INVALID_EVENT: Final = TurnErrorSpec(
    400, "REQUEST_INVALID_EVENT", "Request body must be a valid turn submission.", False
)
SESSION_BUSY: Final = TurnErrorSpec(
    409, "SESSION_BUSY", "Another turn is active for this session.", True
)
SESSION_CONFLICT: Final = TurnErrorSpec(
    409, "SESSION_CONFLICT", "Another turn is active for this session.", True
)
SERVER_TIMEOUT: Final = TurnErrorSpec(408, "SERVER_TIMEOUT", "The chat request timed out.", True)
REQUEST_CANCELLED: Final = TurnErrorSpec(
    499, "REQUEST_CANCELLED", "The chat request was cancelled.", True
)
SERVER_INTERNAL: Final = TurnErrorSpec(500, "SERVER_INTERNAL", "The chat request failed.", True)
SERVER_INVALID_CONFIG: Final = TurnErrorSpec(
    500, "SERVER_INVALID_CONFIG", "Chat handler configuration is invalid.", False
)
CHAT_TURN_FAILED: Final = TurnErrorSpec(None, "CHAT_TURN_FAILED", "The chat turn failed.", True)
CHAT_TURN_INTERRUPTED: Final = TurnErrorSpec(
    None,
    "CHAT_TURN_INTERRUPTED",
    "The answer was interrupted before it finished (the server writing it stopped); ask again.",
    True,
)
"""A turn whose instance went away (its lease expired) or stopped at the shutdown deadline.

Only inside a snapshot, like CHAT_TURN_FAILED; the session envelope records such a turn as
`indeterminate`, the one non-completed outcome the envelope's v1 schema has. An addition of
this server (like SESSION_NOT_FOUND), so not in PROTOCOL.md's table below."""

TURN_SERVER_ERRORS: Final[Mapping[str, TurnErrorSpec]] = MappingProxyType(
    {
        spec.code: spec
        for spec in (
            REQUEST_METHOD_NOT_ALLOWED,
            REQUEST_UNSUPPORTED_MEDIA_TYPE,
            REQUEST_TOO_LARGE,
            REQUEST_INVALID_JSON,
            REQUEST_INVALID_EVENT,
            SESSION_BUSY,
            SESSION_CONFLICT,
            SERVER_TIMEOUT,
            REQUEST_CANCELLED,
            SERVER_INTERNAL,
            SERVER_INVALID_CONFIG,
            CHAT_TURN_FAILED,
        )
    }
)

TURN_STREAM_HEADERS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "content-type": "application/x-ndjson; charset=utf-8",
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
    }
)
TURN_ERROR_HEADERS: Final[Mapping[str, str]] = MappingProxyType(
    {"content-type": "application/json; charset=utf-8", "cache-control": "no-store"}
)


def snapshot_status(controller_status: str, message_count: int) -> SnapshotStatus:
    """Snapshot status from the chat controller state, as the reference server maps it.

    Controller error -> error, streaming -> streaming, no messages -> idle,
    otherwise complete.
    """
    if controller_status == "error":
        return "error"
    if controller_status == "streaming":
        return "streaming"
    return "idle" if message_count == 0 else "complete"
