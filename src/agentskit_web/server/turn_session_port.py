"""The turn session store port: one contract, two stores (SQLite, PostgreSQL).

A turn session is one row per (site, owner, session id) holding

- the `agentskit.chat.session` v1 envelope (validated with
  `decode_session_snapshot` before every write; its `cursor` is the row's
  compare-and-set column, the session's revision),
- the conversation as a validated memory record (`{version: 1, messages}`),
- the last `server.turn.snapshot` line sent for the session, which is what
  `GET <turn path>/<sessionId>` answers, byte for byte,
- the turn lease: the envelope's `activeTurn` (which turn, until when) plus
  the instance that holds it (`holder`), stored with the session so that any
  instance sharing the store can see who runs a turn and when that claim ends.

The contract every store keeps (tests/test_turn_store_contract.py runs the
same suite against both):

- `save` is an atomic compare-and-set on `cursor`: it writes only when the
  stored cursor is `expected_cursor` (`None`: only when no row exists) and
  returns False when it loses, changing nothing. It holds across processes
  (and, for PostgreSQL, across machines);
- the envelope and the messages are validated before any write (ValueError /
  ProtocolError: the host's bug, nothing written); an envelope of another
  session is a ValueError;
- a row not written for `ttl_seconds` reads as missing and is deleted when a
  new session is stored;
- each client key (the rate limiter's key) keeps at most
  `max_sessions_per_client` rows: storing one more removes that client's
  oldest (by last write, then session id), never anyone else's;
- the whole store holds at most `max_sessions_total` rows: past it a new
  session is refused with `StoreFull`, unless the client is at its own cap
  (then it replaces its own oldest and the store does not grow);
- a failing or corrupt store raises `PersistenceError`.

Both stores read time from the same `clock` (the instance's wall clock, as
the lease's `expiresAt` does), so the suite can drive TTLs with a fake clock.
"""

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import anyio.to_thread

from ..protocol.memory_record import validate_memory_record
from ..protocol.session import SessionSnapshot, decode_session_snapshot
from ..protocol.wire_json import JSON_INVALID, dump_json, parse_json
from .persistence import PersistenceError

TURN_STORE_MAX_SESSIONS_TOTAL: Final = 50_000
"""Server policy: sessions one turn store keeps over all clients; past it new ones are refused."""
TURN_STORE_MIN_CLIENTS_TO_FILL: Final = 500
"""Server policy: a client's share of the store is at most this fraction of it (1/500).

With the Ask store's per-subject cap (10,000) five addresses filled the
50,000 sessions, and every other reader was refused for up to the TTL (30
days). At 1/500 (100 sessions an address by default) filling the store takes
500 addresses, or IPv6 /64s; the cost is that a crowd behind one address (an
office NAT) keeps only its 100 most recent conversations: the 101st replaces
that address's oldest, it is never refused."""
TURN_STORE_MAX_SESSIONS_PER_CLIENT: Final = (
    TURN_STORE_MAX_SESSIONS_TOTAL // TURN_STORE_MIN_CLIENTS_TO_FILL
)
"""Sessions one client key keeps by default (100); past it its oldest is replaced."""
LEASE_HOLDER_MAX_CHARS: Final = 128
"""An instance id is at most this long (it is stored with every leased session)."""


class StoreFull(PersistenceError):
    """The store holds `max_sessions_total` live sessions: a new one is refused, none evicted.

    `retry_after` is when room appears for sure: the seconds until the oldest
    session expires (nothing else frees a row for someone new), at least 1.
    """

    def __init__(self, retry_after: float) -> None:
        super().__init__("The turn session store is full.")
        self.retry_after = max(1, math.ceil(retry_after))


def client_share(per_client: int, total: int) -> int:
    """The per-client cap a store applies: at most 1/`TURN_STORE_MIN_CLIENTS_TO_FILL` of it."""
    return max(1, min(per_client, total // TURN_STORE_MIN_CLIENTS_TO_FILL))


@dataclass(frozen=True, slots=True)
class TurnSessionKey:
    site_id: str
    owner: str
    session_id: str
    client_key: str = field(default="", compare=False)
    """Who stored the session (the rate limiter's key); not part of its identity."""


@dataclass(frozen=True, slots=True)
class TurnLease:
    """Which turn runs, which instance runs it, and until when (ms since the epoch)."""

    turn_id: str
    holder: str
    expires_at_ms: int


@dataclass(frozen=True, slots=True)
class TurnSessionRow:
    """A stored session: the envelope (v1 model), its messages (wire dicts), the last snapshot."""

    envelope: SessionSnapshot
    messages: tuple[dict[str, Any], ...]
    last_snapshot: str
    holder: str = ""
    """The instance that wrote the row's lease ('' when no turn is active or unknown)."""

    @property
    def cursor(self) -> int:
        return int(self.envelope.cursor)

    @property
    def lease(self) -> TurnLease | None:
        active = self.envelope.active_turn
        if active is None:
            return None
        return TurnLease(active.turn_id, self.holder, int(active.expires_at))


@dataclass(frozen=True, slots=True)
class PreparedWrite:
    """What a store writes, validated and encoded once, whatever the store."""

    cursor: int
    envelope_text: str
    messages_text: str
    last_snapshot: str
    holder: str
    lease_expires_ms: int | None


class TurnSessionStorePort(Protocol):
    """What `TurnEndpoint` needs from a session store (see the module docstring)."""

    ttl_seconds: float
    max_sessions_per_client: int
    max_sessions_total: int

    async def load(self, key: TurnSessionKey) -> TurnSessionRow | None: ...

    async def save(
        self,
        key: TurnSessionKey,
        envelope: SessionSnapshot | dict[str, Any],
        messages: Sequence[Any],
        last_snapshot: str,
        expected_cursor: int | None,
        *,
        holder: str = "",
    ) -> bool: ...

    def load_sync(self, key: TurnSessionKey) -> TurnSessionRow | None: ...

    def save_sync(
        self,
        key: TurnSessionKey,
        envelope: SessionSnapshot | dict[str, Any],
        messages: Sequence[Any],
        last_snapshot: str,
        expected_cursor: int | None,
        *,
        holder: str = "",
    ) -> bool: ...

    def close(self) -> None: ...


def prepare_write(
    key: TurnSessionKey,
    envelope: SessionSnapshot | dict[str, Any],
    messages: Sequence[Any],
    last_snapshot: str,
    holder: str,
) -> PreparedWrite:
    """Validate and encode a save (ValueError / ProtocolError before anything is written)."""
    result = decode_session_snapshot(envelope)
    if not result.ok:
        raise ValueError("The session envelope is invalid.")
    value: SessionSnapshot = result.snapshot
    if value.session_id != key.session_id:
        raise ValueError("The envelope belongs to another session.")
    if len(holder) > LEASE_HOLDER_MAX_CHARS:
        raise ValueError(f"A lease holder id is at most {LEASE_HOLDER_MAX_CHARS} characters.")
    record = validate_memory_record({"version": 1, "messages": list(messages)})
    active = value.active_turn
    return PreparedWrite(
        cursor=int(value.cursor),
        envelope_text=dump_json(value.to_wire()),
        messages_text=dump_json({"version": 1, "messages": list(record["messages"])}),
        last_snapshot=last_snapshot,
        holder=holder if active is not None else "",
        lease_expires_ms=int(active.expires_at) if active is not None else None,
    )


def decode_row(envelope: str, messages: str, last_snapshot: str, holder: str) -> TurnSessionRow:
    """A stored row as a model; anything that does not validate is `PersistenceError`."""
    decoded = decode_session_snapshot(envelope)
    record = parse_json(messages)
    if not decoded.ok or record is JSON_INVALID or not isinstance(record, dict):
        raise PersistenceError("Stored turn session is corrupt.")
    try:
        wire = validate_memory_record(record)
    except Exception as error:
        raise PersistenceError("Stored turn session is corrupt.") from error
    return TurnSessionRow(decoded.snapshot, tuple(wire["messages"]), last_snapshot, holder)


POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")


def is_postgres_url(spec: str) -> bool:
    return spec.startswith(POSTGRES_SCHEMES)


SECRET_QUERY_KEY: Final = re.compile(r"pass|secret|token|key", re.IGNORECASE)
"""Query parameters whose values a message never shows: `password`, `sslpassword`,
`sslkey` paths, tokens (libpq and redis-py both take credentials as parameters)."""


def redacted(url: str) -> str:
    """A connection URL without its secrets, for messages and logs.

    The password of `user:password@`, and the value of every query parameter
    whose name says it holds a secret (`?password=`, which libpq accepts as
    well as the userinfo; the start-up error printed it, issue 36).
    """
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return "<unparsable URL>"
    head, mark, rest = url.partition("?")
    if parts.password is not None:
        netloc = parts.netloc.rsplit("@", 1)[1]
        hidden_user = parts._replace(netloc=f"{parts.username or ''}:***@{netloc}")
        head = urlunsplit(hidden_user._replace(query="", fragment=""))
    elif (
        "@" in head and parts.username is None
    ):  # userinfo the parser did not see (`scheme:/user:pw@host`): hide it all
        scheme, colon, after = head.partition(":")
        head = scheme + colon + "***@" + after.rsplit("@", 1)[1]
    if any(SECRET_QUERY_KEY.search(name) for name, _ in query):
        hidden = [(n, "***" if SECRET_QUERY_KEY.search(n) else v) for n, v in query]
        rest = urlencode(hidden, safe="*") + ("#" + parts.fragment if parts.fragment else "")
    return head + mark + rest


class BlockingStoreFacade:
    """The port's async half for a store whose work is blocking I/O (SQLite, psycopg's
    synchronous pool): each call runs its synchronous twin in a worker thread, so the
    event loop never waits on a disk or a database."""

    def load_sync(self, key: TurnSessionKey) -> TurnSessionRow | None:
        raise NotImplementedError

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
        raise NotImplementedError

    async def load(self, key: TurnSessionKey) -> TurnSessionRow | None:
        return await anyio.to_thread.run_sync(self.load_sync, key)

    async def save(
        self,
        key: TurnSessionKey,
        envelope: SessionSnapshot | dict[str, Any],
        messages: Sequence[Any],
        last_snapshot: str,
        expected_cursor: int | None,
        *,
        holder: str = "",
    ) -> bool:
        return await anyio.to_thread.run_sync(
            lambda: self.save_sync(
                key, envelope, messages, last_snapshot, expected_cursor, holder=holder
            )
        )


__all__ = [
    "LEASE_HOLDER_MAX_CHARS",
    "TURN_STORE_MAX_SESSIONS_PER_CLIENT",
    "TURN_STORE_MAX_SESSIONS_TOTAL",
    "TURN_STORE_MIN_CLIENTS_TO_FILL",
    "BlockingStoreFacade",
    "PreparedWrite",
    "StoreFull",
    "TurnLease",
    "TurnSessionKey",
    "TurnSessionRow",
    "TurnSessionStorePort",
    "client_share",
    "decode_row",
    "is_postgres_url",
    "prepare_write",
    "redacted",
]
