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
"""

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import anyio.to_thread

from ..protocol.limits import ASK_REQUEST_MAX_MESSAGES
from ..protocol.wire_json import JSON_INVALID, dump_json, parse_json

SESSION_RECORD_MAX_MESSAGES: Final = ASK_REQUEST_MAX_MESSAGES


class PersistenceConflict(RuntimeError):
    """The record changed since it was read; the save did not happen."""


class PersistenceError(RuntimeError):
    """The store failed (I/O, corrupt row); the save did not happen."""


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
    PRIMARY KEY (site_id, subject, session_id)
) WITHOUT ROWID;
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

    def __init__(self, database: str | Path = ":memory:") -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(database), check_same_thread=False, timeout=5.0)
        with self._db:
            self._db.executescript(_SCHEMA)

    # -- synchronous core ---------------------------------------------------

    def load_sync(self, key: SessionKey) -> SessionRecord:
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT revision, messages FROM ask_sessions "
                    "WHERE site_id = ? AND subject = ? AND session_id = ?",
                    (key.site_id, key.subject, key.session_id),
                ).fetchone()
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
        try:
            with self._lock, self._db:
                if expected_revision == 0:
                    cursor = self._db.execute(
                        "INSERT OR IGNORE INTO ask_sessions VALUES (?, ?, ?, 1, ?)",
                        (key.site_id, key.subject, key.session_id, text),
                    )
                else:
                    cursor = self._db.execute(
                        "UPDATE ask_sessions SET revision = ?, messages = ? "
                        "WHERE site_id = ? AND subject = ? AND session_id = ? AND revision = ?",
                        (
                            new_revision,
                            text,
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
    "SESSION_RECORD_MAX_MESSAGES",
    "PersistenceConflict",
    "PersistenceError",
    "SessionKey",
    "SessionRecord",
    "SessionStore",
    "StoredMessage",
    "record_to_wire",
]
