"""Session snapshot storage for a turn server: the port and a process-local store.

`save` is an atomic compare-and-set on `cursor`, the rule that keeps two
concurrent turns of one session from losing each other's messages.
"""

import threading
from typing import Any, Protocol

from ..protocol.diagnostics import ProtocolError
from ..protocol.session import (
    SESSION_PAYLOAD_INVALID,
    SessionSnapshot,
    decode_session_snapshot,
)


class SessionStore(Protocol):
    """Storage port for session snapshots, keyed by `sessionId`.

    `save` must be an atomic compare-and-set on `cursor`: it stores the
    snapshot only when the stored snapshot's cursor equals `expected_cursor`
    (or, with `expected_cursor=None`, only when nothing is stored yet) and
    returns False on conflict, leaving the stored value unchanged.
    """

    def load(self, session_id: str) -> SessionSnapshot | None: ...

    def save(self, snapshot: SessionSnapshot, expected_cursor: int | None) -> bool: ...


def _valid_snapshot(snapshot: Any) -> SessionSnapshot:
    """The host's snapshot as a model; an invalid one is a host error (ProtocolError)."""
    result = decode_session_snapshot(snapshot)
    if not result.ok:
        raise ProtocolError(SESSION_PAYLOAD_INVALID.code, SESSION_PAYLOAD_INVALID.message)
    value: SessionSnapshot = result.snapshot
    return value


def _valid_expected(expected_cursor: Any) -> int | None:
    if expected_cursor is None or (type(expected_cursor) is int and expected_cursor >= 0):
        return expected_cursor
    raise ValueError("expected_cursor must be None or an int >= 0")


class InMemorySessionStore:
    """A process-local `SessionStore` (tests, tools, single-process servers).

    One lock makes each save's read-compare-write atomic. Snapshots are
    immutable models, so handing them out shares nothing mutable.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snapshots: dict[str, SessionSnapshot] = {}

    def load(self, session_id: str) -> SessionSnapshot | None:
        with self._lock:
            return self._snapshots.get(session_id)

    def save(self, snapshot: SessionSnapshot | dict[str, Any], expected_cursor: int | None) -> bool:
        """Store `snapshot` if the stored cursor still equals `expected_cursor`.

        `expected_cursor=None` means create-only. Raises ProtocolError for an
        invalid snapshot and ValueError for a malformed expected cursor.
        """
        value = _valid_snapshot(snapshot)
        expected = _valid_expected(expected_cursor)
        with self._lock:
            current = self._snapshots.get(value.session_id)
            if not _matches(current, expected):
                return False
            self._snapshots[value.session_id] = value
            return True

    def delete(self, session_id: str) -> None:
        """Forget a session (e.g. "new conversation")."""
        with self._lock:
            self._snapshots.pop(session_id, None)


def _matches(current: SessionSnapshot | None, expected: int | None) -> bool:
    if expected is None:
        return current is None
    return current is not None and current.cursor == expected
