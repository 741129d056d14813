"""SQLite storage for turn sessions: the default implementation of the session store port.

The contract (compare-and-set on the cursor, the lease with its holder, TTL,
per-client and total caps, oldest-first eviction, typed errors) is written
down in `turn_session_port`; `turn_store_postgres` is the other store that
keeps it. This one is a file (or `:memory:`) with one connection behind a
lock: `save` is a single `UPDATE ... WHERE cursor = ?` (or an insert that
must not find a row), so it holds across processes sharing one file.

The owner is part of the key: a bearer caller's sessions are keyed by its
subject, anonymous callers all share the owner `anonymous` and are told apart
by the session id alone (which is why anonymous ids must carry >= 128 random
bits). A caller naming an id that another owner uses simply does not see that
row.

Bounds, applied in this order when a new session is stored:

1. rows not written for `ttl_seconds` are deleted (expired sessions go first);
2. each client key (the rate limiter's key: an address or /64 for anonymous
   callers, the subject for bearer ones) keeps at most
   `max_sessions_per_client` rows; storing one more removes that client's
   oldest. The cap is per client, not per owner: all anonymous readers share
   one owner, and a per-owner cap let one address evict everyone else's
   sessions;
3. the whole store holds at most `max_sessions_total` rows: past it a new
   session is refused (`StoreFull`), never made room for by evicting another
   client's session.
"""

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from ..protocol.session import SessionSnapshot
from .persistence import (
    SESSION_TTL_SECONDS,
    PersistenceError,
    check_store_bounds,
    open_database,
)
from .turn_session_port import (
    TURN_STORE_MAX_SESSIONS_PER_CLIENT,
    TURN_STORE_MAX_SESSIONS_TOTAL,
    BlockingStoreFacade,
    StoreFull,
    TurnLease,
    TurnSessionKey,
    TurnSessionRow,
    decode_row,
    prepare_write,
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
    client_key TEXT NOT NULL DEFAULT '',
    lease_holder TEXT NOT NULL DEFAULT '',
    lease_expires_ms INTEGER,
    PRIMARY KEY (site_id, owner, session_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS turn_sessions_by_owner_age
    ON turn_sessions (site_id, owner, updated_at);
CREATE INDEX IF NOT EXISTS turn_sessions_by_age ON turn_sessions (updated_at);
"""
_CLIENT_INDEX: Final = (
    "CREATE INDEX IF NOT EXISTS turn_sessions_by_client_age"
    " ON turn_sessions (site_id, client_key, updated_at)"
)
_ADDED_COLUMNS: Final = (
    ("client_key", "TEXT NOT NULL DEFAULT ''"),
    ("lease_holder", "TEXT NOT NULL DEFAULT ''"),
    ("lease_expires_ms", "INTEGER"),
)
"""Columns a database written by an older version gains on open (in this order)."""


class TurnSessionStore(BlockingStoreFacade):
    """SQLite-backed turn sessions (`:memory:` or a file), one connection behind a lock."""

    def __init__(
        self,
        database: str | Path = ":memory:",
        *,
        ttl_seconds: float = SESSION_TTL_SECONDS,
        max_sessions_per_client: int = TURN_STORE_MAX_SESSIONS_PER_CLIENT,
        max_sessions_total: int = TURN_STORE_MAX_SESSIONS_TOTAL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_store_bounds(ttl_seconds, max_sessions_per_client)
        check_store_bounds(ttl_seconds, max_sessions_total)
        self.ttl_seconds = ttl_seconds
        self.max_sessions_per_client = max_sessions_per_client
        self.max_sessions_total = max_sessions_total
        self._clock = clock
        self._lock = threading.Lock()
        self._db = open_database(database, _SCHEMA)
        self._add_columns()

    def _add_columns(self) -> None:
        """A database written before sessions had a client key or a lease holder gains them."""
        with self._lock, self._db:
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(turn_sessions)")}
            for name, declaration in _ADDED_COLUMNS:
                if name not in columns:
                    self._db.execute(f"ALTER TABLE turn_sessions ADD COLUMN {name} {declaration}")
            self._db.execute(_CLIENT_INDEX)

    # -- synchronous core ---------------------------------------------------

    def load_sync(self, key: TurnSessionKey) -> TurnSessionRow | None:
        """The stored session, or None (never stored, or expired)."""
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT envelope, messages, last_snapshot, updated_at, lease_holder "
                    "FROM turn_sessions WHERE site_id = ? AND owner = ? AND session_id = ?",
                    (key.site_id, key.owner, key.session_id),
                ).fetchone()
        except sqlite3.Error as error:
            raise PersistenceError("Turn session store read failed.") from error
        if row is None or row[3] < self._clock() - self.ttl_seconds:
            return None
        return decode_row(row[0], row[1], row[2], row[4])

    def save_sync(
        self,
        key: TurnSessionKey,
        envelope: SessionSnapshot | dict[str, Any],
        messages: Sequence[Any],
        last_snapshot: str,
        expected_cursor: int | None,
        *,
        holder: str = "",
    ) -> bool:
        """Compare-and-set on `cursor`: write only if the stored cursor is `expected_cursor`.

        `expected_cursor=None` means create-only. The envelope and the messages
        are validated first (ValueError / ProtocolError for the host's bug);
        the envelope's session id must be the key's. `holder` is the instance
        that holds the envelope's `activeTurn` lease (stored only while there
        is one). False when the CAS lost; `StoreFull` when a new session would
        pass `max_sessions_total`.
        """
        write = prepare_write(key, envelope, messages, last_snapshot, holder)
        now = self._clock()
        try:
            with self._lock, self._db:
                if expected_cursor is None:
                    self._db.execute(
                        "DELETE FROM turn_sessions WHERE updated_at < ?",
                        (now - self.ttl_seconds,),
                    )
                    self._check_room(key)
                    cursor = self._db.execute(
                        "INSERT OR IGNORE INTO turn_sessions (site_id, owner, session_id,"
                        " cursor, envelope, messages, last_snapshot, updated_at, client_key,"
                        " lease_holder, lease_expires_ms)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            key.site_id,
                            key.owner,
                            key.session_id,
                            write.cursor,
                            write.envelope_text,
                            write.messages_text,
                            write.last_snapshot,
                            now,
                            key.client_key,
                            write.holder,
                            write.lease_expires_ms,
                        ),
                    )
                    if cursor.rowcount == 1:
                        self._evict_oldest(key)
                else:
                    cursor = self._db.execute(
                        "UPDATE turn_sessions SET cursor = ?, envelope = ?, messages = ?, "
                        "last_snapshot = ?, updated_at = ?, lease_holder = ?, "
                        "lease_expires_ms = ? "
                        "WHERE site_id = ? AND owner = ? AND session_id = ? AND cursor = ?",
                        (
                            write.cursor,
                            write.envelope_text,
                            write.messages_text,
                            write.last_snapshot,
                            now,
                            write.holder,
                            write.lease_expires_ms,
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

    def _check_room(self, key: TurnSessionKey) -> None:
        """Refuse a new session when the store is full, unless it replaces one of this client's.

        A client at its own cap evicts its own oldest session, so the store does
        not grow; anyone else is refused rather than allowed to evict others.
        """
        (total,) = self._db.execute("SELECT COUNT(*) FROM turn_sessions").fetchone()
        if int(total) < self.max_sessions_total:
            return
        if self._client_count(key) >= self.max_sessions_per_client:
            return
        (oldest,) = self._db.execute("SELECT MIN(updated_at) FROM turn_sessions").fetchone()
        raise StoreFull(float(oldest) + self.ttl_seconds - self._clock())

    def _client_count(self, key: TurnSessionKey) -> int:
        (count,) = self._db.execute(
            "SELECT COUNT(*) FROM turn_sessions WHERE site_id = ? AND client_key = ?",
            (key.site_id, key.client_key),
        ).fetchone()
        return int(count)

    def _evict_oldest(self, kept: TurnSessionKey) -> None:
        """Past its cap, the client that just stored `kept` loses its oldest other sessions."""
        excess = self._client_count(kept) - self.max_sessions_per_client
        if excess <= 0:
            return
        self._db.execute(
            "DELETE FROM turn_sessions WHERE (site_id, owner, session_id) IN ("
            " SELECT site_id, owner, session_id FROM turn_sessions"
            " WHERE site_id = ? AND client_key = ?"
            " AND NOT (owner = ? AND session_id = ?)"
            " ORDER BY updated_at ASC, session_id ASC LIMIT ?)",
            (kept.site_id, kept.client_key, kept.owner, kept.session_id, excess),
        )

    def close(self) -> None:
        with self._lock:
            self._db.close()


__all__ = [
    "TURN_STORE_MAX_SESSIONS_TOTAL",
    "StoreFull",
    "TurnLease",
    "TurnSessionKey",
    "TurnSessionRow",
    "TurnSessionStore",
]
