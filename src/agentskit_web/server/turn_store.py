"""SQLite storage for turn sessions: the session envelope, its messages, its latest snapshot.

One row per (site, owner, session id) holds

- the `agentskit.chat.session` v1 envelope (validated with
  `decode_session_snapshot` before every write; its `cursor` is the row's
  compare-and-set column),
- the conversation as a validated memory record (`{version: 1, messages}`),
- the last `server.turn.snapshot` line sent for the session, which is what
  `GET <turn path>/<sessionId>` answers, byte for byte.

`save` is an atomic compare-and-set on `cursor`: a single
`UPDATE ... WHERE cursor = ?` (or an insert that must not find a row), so it
holds across processes sharing one database file. It returns False when it
loses and changes nothing.

The owner is part of the key: a bearer caller's sessions are keyed by its
subject, anonymous callers all share the owner `anonymous` and are told apart
by the session id alone (which is why anonymous ids must carry >= 128 random
bits). A caller naming an id that another owner uses simply does not see that
row. Rows not written for `ttl_seconds` are forgotten, and each owner keeps
at most `max_sessions_per_owner` rows (oldest first out), as for Ask records.
"""

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio.to_thread

from ..protocol.memory_record import validate_memory_record
from ..protocol.session import SessionSnapshot, decode_session_snapshot
from ..protocol.wire_json import JSON_INVALID, dump_json, parse_json
from .persistence import (
    SESSION_MAX_PER_SUBJECT,
    SESSION_TTL_SECONDS,
    PersistenceError,
    check_store_bounds,
    open_database,
)

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS turn_sessions (
    site_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    cursor INTEGER NOT NULL,
    envelope TEXT NOT NULL,
    messages TEXT NOT NULL,
    last_snapshot TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (site_id, owner, session_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS turn_sessions_by_owner_age
    ON turn_sessions (site_id, owner, updated_at);
"""


@dataclass(frozen=True, slots=True)
class TurnSessionKey:
    site_id: str
    owner: str
    session_id: str


@dataclass(frozen=True, slots=True)
class TurnSessionRow:
    """A stored session: the envelope (v1 model), its messages (wire dicts), the last snapshot."""

    envelope: SessionSnapshot
    messages: tuple[dict[str, Any], ...]
    last_snapshot: str

    @property
    def cursor(self) -> int:
        return int(self.envelope.cursor)


def _valid_envelope(envelope: SessionSnapshot | dict[str, Any]) -> SessionSnapshot:
    result = decode_session_snapshot(envelope)
    if not result.ok:
        raise ValueError("The session envelope is invalid.")
    value: SessionSnapshot = result.snapshot
    return value


def _valid_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    record = validate_memory_record({"version": 1, "messages": list(messages)})
    return list(record["messages"])


def _decode_row(envelope: str, messages: str, last_snapshot: str) -> TurnSessionRow:
    decoded = decode_session_snapshot(envelope)
    record = parse_json(messages)
    if not decoded.ok or record is JSON_INVALID or not isinstance(record, dict):
        raise PersistenceError("Stored turn session is corrupt.")
    try:
        wire = validate_memory_record(record)
    except Exception as error:
        raise PersistenceError("Stored turn session is corrupt.") from error
    return TurnSessionRow(decoded.snapshot, tuple(wire["messages"]), last_snapshot)


class TurnSessionStore:
    """SQLite-backed turn sessions (`:memory:` or a file), one connection behind a lock."""

    def __init__(
        self,
        database: str | Path = ":memory:",
        *,
        ttl_seconds: float = SESSION_TTL_SECONDS,
        max_sessions_per_owner: int = SESSION_MAX_PER_SUBJECT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_store_bounds(ttl_seconds, max_sessions_per_owner)
        self.ttl_seconds = ttl_seconds
        self.max_sessions_per_owner = max_sessions_per_owner
        self._clock = clock
        self._lock = threading.Lock()
        self._db = open_database(database, _SCHEMA)

    # -- synchronous core ---------------------------------------------------

    def load_sync(self, key: TurnSessionKey) -> TurnSessionRow | None:
        """The stored session, or None (never stored, or expired)."""
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT envelope, messages, last_snapshot, updated_at FROM turn_sessions "
                    "WHERE site_id = ? AND owner = ? AND session_id = ?",
                    (key.site_id, key.owner, key.session_id),
                ).fetchone()
        except sqlite3.Error as error:
            raise PersistenceError("Turn session store read failed.") from error
        if row is None or row[3] < self._clock() - self.ttl_seconds:
            return None
        return _decode_row(row[0], row[1], row[2])

    def save_sync(
        self,
        key: TurnSessionKey,
        envelope: SessionSnapshot | dict[str, Any],
        messages: Sequence[Any],
        last_snapshot: str,
        expected_cursor: int | None,
    ) -> bool:
        """Compare-and-set on `cursor`: write only if the stored cursor is `expected_cursor`.

        `expected_cursor=None` means create-only. The envelope and the messages
        are validated first (ValueError / ProtocolError for the host's bug);
        the envelope's session id must be the key's. False when the CAS lost.
        """
        value = _valid_envelope(envelope)
        if value.session_id != key.session_id:
            raise ValueError("The envelope belongs to another session.")
        text = dump_json({"version": 1, "messages": _valid_messages(messages)})
        envelope_text = dump_json(value.to_wire())
        now = self._clock()
        try:
            with self._lock, self._db:
                if expected_cursor is None:
                    self._db.execute(
                        "DELETE FROM turn_sessions WHERE updated_at < ?",
                        (now - self.ttl_seconds,),
                    )
                    cursor = self._db.execute(
                        "INSERT OR IGNORE INTO turn_sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            key.site_id,
                            key.owner,
                            key.session_id,
                            value.cursor,
                            envelope_text,
                            text,
                            last_snapshot,
                            now,
                        ),
                    )
                    if cursor.rowcount == 1:
                        self._evict_oldest(key)
                else:
                    cursor = self._db.execute(
                        "UPDATE turn_sessions SET cursor = ?, envelope = ?, messages = ?, "
                        "last_snapshot = ?, updated_at = ? "
                        "WHERE site_id = ? AND owner = ? AND session_id = ? AND cursor = ?",
                        (
                            value.cursor,
                            envelope_text,
                            text,
                            last_snapshot,
                            now,
                            key.site_id,
                            key.owner,
                            key.session_id,
                            expected_cursor,
                        ),
                    )
                changed = cursor.rowcount
        except sqlite3.Error as error:
            raise PersistenceError("Turn session store write failed.") from error
        return changed == 1

    def _evict_oldest(self, kept: TurnSessionKey) -> None:
        (count,) = self._db.execute(
            "SELECT COUNT(*) FROM turn_sessions WHERE site_id = ? AND owner = ?",
            (kept.site_id, kept.owner),
        ).fetchone()
        excess = int(count) - self.max_sessions_per_owner
        if excess <= 0:
            return
        self._db.execute(
            "DELETE FROM turn_sessions WHERE site_id = ? AND owner = ? AND session_id IN ("
            " SELECT session_id FROM turn_sessions"
            " WHERE site_id = ? AND owner = ? AND session_id != ?"
            " ORDER BY updated_at ASC, session_id ASC LIMIT ?)",
            (kept.site_id, kept.owner, kept.site_id, kept.owner, kept.session_id, excess),
        )

    # -- async facade ---------------------------------------------------------

    async def load(self, key: TurnSessionKey) -> TurnSessionRow | None:
        return await anyio.to_thread.run_sync(self.load_sync, key)

    async def save(
        self,
        key: TurnSessionKey,
        envelope: SessionSnapshot | dict[str, Any],
        messages: Sequence[Any],
        last_snapshot: str,
        expected_cursor: int | None,
    ) -> bool:
        return await anyio.to_thread.run_sync(
            self.save_sync, key, envelope, messages, last_snapshot, expected_cursor
        )

    def close(self) -> None:
        with self._lock:
            self._db.close()


__all__ = ["TurnSessionKey", "TurnSessionRow", "TurnSessionStore"]
