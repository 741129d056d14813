"""Server-side conversation records: (site, subject, session) -> revision + messages.

Saving is a compare-and-set on the revision: a writer says which revision it
read, and the write lands only if the record is still at that revision (the
revision then goes up by one). Two requests that read the same revision cannot
both win: the loser gets `PersistenceConflict` (the app reports
ASK_PERSISTENCE_CONFLICT in the stream) and nothing is overwritten, so no turn
is ever lost silently.

The app appends only the latest user turn and the answer it produced, never the
client's copy of the history (the client is not trusted). A record keeps the
newest `SESSION_RECORD_MAX_MESSAGES` messages.

The client chooses its `sessionId`, so without bounds one caller could store
rows forever. Two bounds keep the store finite:

- a record not written for `ttl_seconds` (default 30 days) is expired: it
  reads as a new, empty conversation and is deleted when a new session is
  stored;
- each (site, subject) keeps at most `max_sessions_per_subject` records
  (default 10,000). Storing one more deletes that subject's records written
  longest ago. All anonymous callers are one subject, so a flood of anonymous
  sessions can only evict anonymous sessions, never a bearer user's.

An answer whose record is evicted while it is being generated is reported as
a conflict (the compare-and-set finds no row), never saved into a stale row.
"""

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import anyio.to_thread

from ..protocol.limits import ASK_REQUEST_MAX_MESSAGES
from ..protocol.wire_json import JSON_INVALID, dump_json, parse_json

SESSION_RECORD_MAX_MESSAGES: Final = ASK_REQUEST_MAX_MESSAGES
SESSION_TTL_SECONDS: Final = 30 * 24 * 60 * 60
"""Server policy: a saved conversation not written for 30 days is forgotten."""
SESSION_MAX_PER_SUBJECT: Final = 10_000
"""Server policy: saved conversations kept per (site, subject); the oldest go first."""


class PersistenceConflict(RuntimeError):
    """The record changed since it was read; the save did not happen."""


class PersistenceError(RuntimeError):
    """The store failed (I/O, corrupt row); the save did not happen."""


SQLITE_BUSY_TIMEOUT_SECONDS: Final = 5.0
"""How long a write waits for another process's lock on the shared file before failing."""


def open_database(database: str | Path, schema: str) -> sqlite3.Connection:
    """One connection for a store (shared by its threads behind the store's lock), with
    `schema` applied in one transaction: the Ask and the turn session stores set up alike."""
    db = sqlite3.connect(
        str(database), check_same_thread=False, timeout=SQLITE_BUSY_TIMEOUT_SECONDS
    )
    with db:
        db.executescript(schema)
    return db


def check_store_bounds(ttl_seconds: float, max_per_owner: int) -> None:
    """A store's TTL must be positive and its per-owner cap at least 1."""
    if ttl_seconds <= 0 or max_per_owner < 1:
        raise ValueError("Session TTL must be positive and the per-owner cap at least 1.")


@dataclass(frozen=True, slots=True)
class SessionKey:
    site_id: str
    subject: str
    session_id: str


@dataclass(frozen=True, slots=True)
class StoredMessage:
    role: Literal["user", "assistant"]
    content: str

    def to_wire(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A record as read: `revision` 0 and no messages when it does not exist yet."""

    revision: int
    messages: tuple[StoredMessage, ...] = ()


_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS ask_sessions (
    site_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    session_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    messages TEXT NOT NULL,
    updated_at REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (site_id, subject, session_id)
) WITHOUT ROWID;
"""
_INDEXES: Final = """
CREATE INDEX IF NOT EXISTS ask_sessions_by_age ON ask_sessions (updated_at);
CREATE INDEX IF NOT EXISTS ask_sessions_by_subject_age
    ON ask_sessions (site_id, subject, updated_at);
"""


def _decode_messages(text: str) -> tuple[StoredMessage, ...]:
    value = parse_json(text)
    if value is JSON_INVALID or not isinstance(value, list):
        raise PersistenceError("Stored session record is corrupt.")
    messages: list[StoredMessage] = []
    for item in value:
        if (
            not isinstance(item, dict)
            or item.get("role") not in ("user", "assistant")
            or not isinstance(item.get("content"), str)
        ):
            raise PersistenceError("Stored session record is corrupt.")
        messages.append(StoredMessage(item["role"], item["content"]))
    return tuple(messages)


class SessionStore:
    """SQLite-backed records (`:memory:` or a file), one connection behind a lock.

    The CAS itself is a single `UPDATE ... WHERE revision = ?` (or an insert
    that must not find an existing row), so it is atomic even across processes
    sharing one database file.
    """

    def __init__(
        self,
        database: str | Path = ":memory:",
        *,
        ttl_seconds: float = SESSION_TTL_SECONDS,
        max_sessions_per_subject: int = SESSION_MAX_PER_SUBJECT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_store_bounds(ttl_seconds, max_sessions_per_subject)
        self.ttl_seconds = ttl_seconds
        self.max_sessions_per_subject = max_sessions_per_subject
        self._clock = clock
        self._lock = threading.Lock()
        self._db = open_database(database, _SCHEMA)
        with self._db:
            self._add_age_column()
            self._db.executescript(_INDEXES)

    def _add_age_column(self) -> None:
        """Upgrade a file written before records had an age: its rows start their TTL now."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(ask_sessions)")}
        if "updated_at" in columns:
            return
        self._db.execute("ALTER TABLE ask_sessions ADD COLUMN updated_at REAL NOT NULL DEFAULT 0")
        self._db.execute("UPDATE ask_sessions SET updated_at = ?", (self._clock(),))

    def _expired_before(self, now: float) -> float:
        """Records last written before this time are expired."""
        return now - self.ttl_seconds

    # -- synchronous core ---------------------------------------------------

    def load_sync(self, key: SessionKey) -> SessionRecord:
        """The record as stored; an expired one is deleted and reads as new (revision 0)."""
        now = self._clock()
        try:
            with self._lock, self._db:
                row = self._db.execute(
                    "SELECT revision, messages, updated_at FROM ask_sessions "
                    "WHERE site_id = ? AND subject = ? AND session_id = ?",
                    (key.site_id, key.subject, key.session_id),
                ).fetchone()
                if row is not None and row[2] < self._expired_before(now):
                    self._db.execute(
                        "DELETE FROM ask_sessions "
                        "WHERE site_id = ? AND subject = ? AND session_id = ? AND revision = ?",
                        (key.site_id, key.subject, key.session_id, row[0]),
                    )
                    row = None
        except sqlite3.Error as error:
            raise PersistenceError("Session store read failed.") from error
        if row is None:
            return SessionRecord(0)
        return SessionRecord(int(row[0]), _decode_messages(row[1]))

    def save_sync(
        self, key: SessionKey, expected_revision: int, messages: Sequence[StoredMessage]
    ) -> int:
        """Write `messages` if the record is still at `expected_revision`; return the new one."""
        kept = list(messages)[-SESSION_RECORD_MAX_MESSAGES:]
        text = dump_json([m.to_wire() for m in kept])
        new_revision = expected_revision + 1
        now = self._clock()
        try:
            with self._lock, self._db:
                if expected_revision == 0:
                    # The only way the table grows: make room first, then insert.
                    self._db.execute(
                        "DELETE FROM ask_sessions WHERE updated_at < ?",
                        (self._expired_before(now),),
                    )
                    cursor = self._db.execute(
                        "INSERT OR IGNORE INTO ask_sessions VALUES (?, ?, ?, 1, ?, ?)",
                        (key.site_id, key.subject, key.session_id, text, now),
                    )
                    if cursor.rowcount == 1:
                        self._evict_oldest(key)
                else:
                    cursor = self._db.execute(
                        "UPDATE ask_sessions SET revision = ?, messages = ?, updated_at = ? "
                        "WHERE site_id = ? AND subject = ? AND session_id = ? AND revision = ?",
                        (
                            new_revision,
                            text,
                            now,
                            key.site_id,
                            key.subject,
                            key.session_id,
                            expected_revision,
                        ),
                    )
                changed = cursor.rowcount
        except sqlite3.Error as error:
            raise PersistenceError("Session store write failed.") from error
        if changed != 1:
            raise PersistenceConflict("Session record changed since it was read.")
        return new_revision

    def _evict_oldest(self, kept: SessionKey) -> None:
        """Delete the subject's records written longest ago, beyond the cap (never `kept`)."""
        (count,) = self._db.execute(
            "SELECT COUNT(*) FROM ask_sessions WHERE site_id = ? AND subject = ?",
            (kept.site_id, kept.subject),
        ).fetchone()
        excess = int(count) - self.max_sessions_per_subject
        if excess <= 0:
            return
        self._db.execute(
            "DELETE FROM ask_sessions WHERE site_id = ? AND subject = ? AND session_id IN ("
            " SELECT session_id FROM ask_sessions"
            " WHERE site_id = ? AND subject = ? AND session_id != ?"
            " ORDER BY updated_at ASC, session_id ASC LIMIT ?)",
            (
                kept.site_id,
                kept.subject,
                kept.site_id,
                kept.subject,
                kept.session_id,
                excess,
            ),
        )

    def count_sync(self, site_id: str, subject: str) -> int:
        """Stored records of one (site, subject), expired ones included until purged."""
        with self._lock:
            (count,) = self._db.execute(
                "SELECT COUNT(*) FROM ask_sessions WHERE site_id = ? AND subject = ?",
                (site_id, subject),
            ).fetchone()
        return int(count)

    def append_turn_sync(
        self, key: SessionKey, record: SessionRecord, question: str, answer: str
    ) -> int:
        """CAS-append one user question and its answer to the record as read."""
        messages = [
            *record.messages,
            StoredMessage("user", question),
            StoredMessage("assistant", answer),
        ]
        return self.save_sync(key, record.revision, messages)

    # -- async facade used by the app ---------------------------------------

    async def load(self, key: SessionKey) -> SessionRecord:
        return await anyio.to_thread.run_sync(self.load_sync, key)

    async def append_turn(
        self, key: SessionKey, record: SessionRecord, question: str, answer: str
    ) -> int:
        return await anyio.to_thread.run_sync(self.append_turn_sync, key, record, question, answer)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def record_to_wire(record: SessionRecord) -> dict[str, object]:
    """The `{revision, messages}` wire shape of a record (for tools and tests)."""
    return {"revision": record.revision, "messages": [m.to_wire() for m in record.messages]}


__all__ = [
    "SESSION_MAX_PER_SUBJECT",
    "SESSION_RECORD_MAX_MESSAGES",
    "SESSION_TTL_SECONDS",
    "PersistenceConflict",
    "PersistenceError",
    "SessionKey",
    "SessionRecord",
    "SessionStore",
    "StoredMessage",
    "record_to_wire",
]
