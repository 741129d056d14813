"""PostgreSQL storage for turn sessions: the shared implementation of the session store port.

Several backend instances behind a load balancer share one database, so a
resume or a new question that lands on another instance finds the same
session, and a lease that an instance took is visible to all of them (who and
until when). The contract is `turn_session_port`'s, kept exactly as the SQLite
store keeps it (one contract suite runs against both):

- the compare-and-set is one `UPDATE ... WHERE cursor = %s`: PostgreSQL locks
  the row and re-checks the condition after a concurrent writer commits, so of
  two writers that read the same cursor exactly one updates a row;
- creating a session (expire, room check, insert, evict the client's oldest)
  runs under a transaction-scoped advisory lock, so the per-client and total
  caps hold exactly with any number of instances; creates are one per new
  conversation, so serialising them costs little, while the hot path (every
  streaming save) takes no lock beyond its row's;
- times come from the store's `clock`, like the SQLite store's, so rows and
  the leases in them compare against the same wall clock that wrote them.

psycopg 3 with a `psycopg_pool.ConnectionPool`; the blocking calls run in a
worker thread (`anyio.to_thread`), as the SQLite store's do. No ORM: five
statements.
"""

import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import psycopg
from psycopg_pool import ConnectionPool

from ..protocol.session import SessionSnapshot
from .persistence import (
    SESSION_TTL_SECONDS,
    PersistenceError,
    check_store_bounds,
)
from .turn_session_port import (
    TURN_STORE_MAX_SESSIONS_PER_CLIENT,
    TURN_STORE_MAX_SESSIONS_TOTAL,
    BlockingStoreFacade,
    PreparedWrite,
    StoreFull,
    TurnSessionKey,
    TurnSessionRow,
    decode_row,
    prepare_write,
    redacted,
)

POSTGRES_POOL_MIN: Final = 1
POSTGRES_POOL_MAX: Final = 8
"""Connections one instance keeps at most; the turn endpoint's saves are short transactions."""
POSTGRES_POOL_TIMEOUT_SECONDS: Final = 5.0
"""How long a save waits for a free connection (or a reconnect) before it fails (500)."""
POSTGRES_CONNECT_TIMEOUT_SECONDS: Final = 5
"""libpq `connect_timeout`: an unreachable server fails a start-up in this time, not minutes."""
POSTGRES_STATEMENT_TIMEOUT_MS: Final = 5000
"""A statement that runs longer is cancelled by the server (a stuck lock fails, not hangs)."""
POSTGRES_SYNCHRONOUS_COMMIT: Final = "off"
"""Commits return before their WAL is flushed to disk (for this store's sessions only).

Every save of a streaming answer is a commit; waiting for an fsync each time
put one to several milliseconds on the first token and on every snapshot. With
`off`, a crash of the *database server* can lose the last fraction of a second
of saves (never corrupts, never reorders them); a session then reads as it was
a moment earlier, and a turn still running loses its next compare-and-set and
stops with a diagnostic, so nothing is duplicated. Losing an instance loses
nothing: the commit is visible to every other connection when it returns."""
_CREATE_LOCK_KEY: Final = 0x61676B74  # "agkt": the advisory lock that serialises creates
_SCHEMA_LOCK_KEY: Final = 0x61676B73  # one instance creates the schema at a time

_SCHEMA: Final = (
    """
    CREATE TABLE IF NOT EXISTS turn_sessions (
        site_id TEXT NOT NULL,
        owner TEXT NOT NULL,
        session_id TEXT NOT NULL,
        cursor BIGINT NOT NULL,
        envelope TEXT NOT NULL,
        messages TEXT NOT NULL,
        last_snapshot TEXT NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        client_key TEXT NOT NULL DEFAULT '',
        lease_holder TEXT NOT NULL DEFAULT '',
        lease_expires_ms BIGINT,
        PRIMARY KEY (site_id, owner, session_id)
    )
    """,
    "CREATE INDEX IF NOT EXISTS turn_sessions_by_age ON turn_sessions (updated_at)",
    "CREATE INDEX IF NOT EXISTS turn_sessions_by_client_age"
    " ON turn_sessions (site_id, client_key, updated_at)",
)


class PostgresTurnSessionStore(BlockingStoreFacade):
    """Turn sessions in PostgreSQL (`postgresql://user@host:port/db`), through a pool."""

    def __init__(
        self,
        url: str,
        *,
        ttl_seconds: float = SESSION_TTL_SECONDS,
        max_sessions_per_client: int = TURN_STORE_MAX_SESSIONS_PER_CLIENT,
        max_sessions_total: int = TURN_STORE_MAX_SESSIONS_TOTAL,
        clock: Callable[[], float] = time.time,
        pool_max: int = POSTGRES_POOL_MAX,
    ) -> None:
        check_store_bounds(ttl_seconds, max_sessions_per_client)
        check_store_bounds(ttl_seconds, max_sessions_total)
        self.ttl_seconds = ttl_seconds
        self.max_sessions_per_client = max_sessions_per_client
        self.max_sessions_total = max_sessions_total
        self._clock = clock
        self.where = redacted(url)
        self._pool = ConnectionPool(
            url,
            min_size=POSTGRES_POOL_MIN,
            max_size=max(POSTGRES_POOL_MIN, pool_max),
            timeout=POSTGRES_POOL_TIMEOUT_SECONDS,
            kwargs=_connection_options(),
            check=ConnectionPool.check_connection,
            open=False,
            name="agentskit-turn-sessions",
        )
        try:
            self._create_schema(url)
            self._pool.open(wait=True, timeout=POSTGRES_CONNECT_TIMEOUT_SECONDS)
        except (psycopg.Error, PersistenceError) as error:
            self._pool.close()
            raise PersistenceError(f"PostgreSQL at {self.where} is not reachable.") from error

    @staticmethod
    def _create_schema(url: str) -> None:
        """Create the table once; instances starting together take turns (advisory lock).

        A direct connection, not the pool: a refused connection fails at once
        here, where the pool would keep retrying until its timeout.
        """
        with psycopg.connect(url, **_connection_options()) as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
            for statement in _SCHEMA:
                db.execute(statement)

    # -- synchronous core ---------------------------------------------------

    def load_sync(self, key: TurnSessionKey) -> TurnSessionRow | None:
        """The stored session, or None (never stored, or expired)."""
        try:
            with self._pool.connection() as db:
                row = db.execute(
                    "SELECT envelope, messages, last_snapshot, updated_at, lease_holder "
                    "FROM turn_sessions WHERE site_id = %s AND owner = %s AND session_id = %s",
                    (key.site_id, key.owner, key.session_id),
                ).fetchone()
        except psycopg.Error as error:
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
        """Compare-and-set on `cursor` (see `turn_session_port`); False when it lost."""
        write = prepare_write(key, envelope, messages, last_snapshot, holder)
        now = self._clock()
        try:
            with self._pool.connection() as db:
                if expected_cursor is None:
                    return self._create(db, key, write, now)
                # One statement in autocommit: atomic alone, one round trip.
                changed = db.execute(
                    "UPDATE turn_sessions SET cursor = %s, envelope = %s, messages = %s, "
                    "last_snapshot = %s, updated_at = %s, lease_holder = %s, "
                    "lease_expires_ms = %s "
                    "WHERE site_id = %s AND owner = %s AND session_id = %s AND cursor = %s",
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
                ).rowcount
        except psycopg.Error as error:
            raise PersistenceError("Turn session store write failed.") from error
        return changed == 1

    def _create(
        self, db: psycopg.Connection[Any], key: TurnSessionKey, write: PreparedWrite, now: float
    ) -> bool:
        """Expire, check room, insert, evict: one transaction, creates serialised.

        Pipelined: the lock, the expiry and the counts travel together, then
        the insert with its eviction (one statement) and the commit.
        """
        with db.pipeline(), db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_CREATE_LOCK_KEY,))
            db.execute("DELETE FROM turn_sessions WHERE updated_at < %s", (now - self.ttl_seconds,))
            counts = db.execute(
                "SELECT COUNT(*), COUNT(*) FILTER (WHERE site_id = %s AND client_key = %s),"
                " MIN(updated_at) FROM turn_sessions",
                (key.site_id, key.client_key),
            ).fetchone()
            total, own = (int(counts[0]), int(counts[1])) if counts else (0, 0)
            if total >= self.max_sessions_total and own < self.max_sessions_per_client:
                assert counts is not None and counts[2] is not None  # total > 0
                raise StoreFull(float(counts[2]) + self.ttl_seconds - now)
            # The client keeps its newest cap - 1 other sessions beside the new one (the
            # same rows as "delete its oldest excess"), and only if the insert happened.
            row = db.execute(
                "WITH inserted AS ("
                " INSERT INTO turn_sessions (site_id, owner, session_id, cursor, envelope,"
                " messages, last_snapshot, updated_at, client_key, lease_holder,"
                " lease_expires_ms) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (site_id, owner, session_id) DO NOTHING RETURNING 1),"
                " evicted AS ("
                " DELETE FROM turn_sessions WHERE EXISTS (SELECT 1 FROM inserted)"
                " AND (site_id, owner, session_id) IN ("
                " SELECT site_id, owner, session_id FROM turn_sessions"
                " WHERE site_id = %s AND client_key = %s AND NOT (owner = %s AND session_id = %s)"
                " ORDER BY updated_at DESC, session_id DESC OFFSET %s) RETURNING 1)"
                " SELECT (SELECT COUNT(*) FROM inserted), (SELECT COUNT(*) FROM evicted)",
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
                    key.site_id,
                    key.client_key,
                    key.owner,
                    key.session_id,
                    self.max_sessions_per_client - 1,
                ),
            ).fetchone()
        return row is not None and int(row[0]) == 1

    def close(self) -> None:
        self._pool.close()


def _connection_options() -> dict[str, Any]:
    """Every connection of the store: autocommit, bounded connect and statement times."""
    return {
        "autocommit": True,
        "connect_timeout": POSTGRES_CONNECT_TIMEOUT_SECONDS,
        "options": (
            f"-c statement_timeout={POSTGRES_STATEMENT_TIMEOUT_MS}"
            f" -c synchronous_commit={POSTGRES_SYNCHRONOUS_COMMIT}"
        ),
    }


__all__ = [
    "POSTGRES_POOL_MAX",
    "POSTGRES_POOL_TIMEOUT_SECONDS",
    "PostgresTurnSessionStore",
]
