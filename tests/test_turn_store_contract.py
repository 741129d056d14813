"""The turn session store contract (`server/turn_session_port.py`), one suite for both stores.

Every test runs against the SQLite store (a file in the test's folder) and the
PostgreSQL store (a fresh database on a real server this test session started,
`_postgres_server.py`). "Two instances" are two store objects over the same
file or database, as two backend processes are.
"""

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentskit_web.protocol.diagnostics import ProtocolError
from agentskit_web.server.persistence import PersistenceError
from agentskit_web.server.turn_session_port import (
    LEASE_HOLDER_MAX_CHARS,
    TURN_STORE_MAX_SESSIONS_PER_CLIENT,
    TURN_STORE_MAX_SESSIONS_TOTAL,
    StoreFull,
    TurnLease,
    TurnSessionKey,
)
from agentskit_web.server.turn_store import TurnSessionStore
from agentskit_web.server.turn_store_postgres import PostgresTurnSessionStore

Store = TurnSessionStore | PostgresTurnSessionStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Stores:
    """Makes stores of one kind over one shared database; `sql` runs a raw statement."""

    def __init__(self, kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        self.clock = Clock()
        self.made: list[Store] = []
        if kind == "sqlite":
            self.target = str(tmp_path / "sessions.db")
        else:
            self.target = request.getfixturevalue("postgres_url")

    def __call__(self, **options: Any) -> Store:
        options.setdefault("clock", self.clock)
        store: Store
        if self.kind == "sqlite":
            store = TurnSessionStore(self.target, **options)
        else:
            store = PostgresTurnSessionStore(self.target, **options)
        self.made.append(store)
        return store

    def sql(self, statement: str) -> None:
        if self.kind == "sqlite":
            import sqlite3

            with sqlite3.connect(self.target) as db:
                db.execute(statement)
        else:
            import psycopg

            with psycopg.connect(self.target, autocommit=True) as db:
                db.execute(statement)

    def count(self) -> int:
        if self.kind == "sqlite":
            import sqlite3

            with sqlite3.connect(self.target) as db:
                return int(db.execute("SELECT COUNT(*) FROM turn_sessions").fetchone()[0])
        import psycopg

        with psycopg.connect(self.target) as db:
            row = db.execute("SELECT COUNT(*) FROM turn_sessions").fetchone()
            return int(row[0]) if row else 0


@pytest.fixture(params=["sqlite", "postgresql"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    made = Stores(request.param, tmp_path, request)
    try:
        yield made
    finally:
        for store in made.made:
            store.close()


def envelope(session_id: str, cursor: int = 1, lease: tuple[str, int] | None = None) -> dict:
    value: dict[str, Any] = {
        "protocol": "agentskit.chat.session",
        "version": 1,
        "sessionId": session_id,
        "definitionId": "docs",
        "definitionRevision": 1,
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "cursor": cursor,
        "confirmations": [],
    }
    if lease is not None:
        value["activeTurn"] = {"turnId": lease[0], "expiresAt": lease[1]}
    return value


def message(ident: str, content: str = "q") -> dict[str, Any]:
    return {
        "id": ident,
        "role": "user",
        "content": content,
        "status": "complete",
        "createdAt": "2026-01-01T00:00:00.000Z",
    }


def key(session_id: str, client: str = "ip:a", owner: str = "anonymous") -> TurnSessionKey:
    return TurnSessionKey("site", owner, session_id, client_key=client)


def store_one(store: Store, client: str, session_id: str) -> None:
    assert store.save_sync(key(session_id, client), envelope(session_id), [], "{}", None)


def present(store: Store, *session_ids: str) -> list[bool]:
    return [store.load_sync(key(sid)) is not None for sid in session_ids]


# --------------------------------------------------------------------------- compare-and-set


def test_create_only_then_compare_and_set_on_the_cursor(stores: Stores) -> None:
    store = stores()
    k = key("s1")
    assert store.save_sync(k, envelope("s1"), [message("u-1")], "line-1", None)
    assert not store.save_sync(k, envelope("s1"), [message("u-x")], "line-1b", None)
    results = [
        store.save_sync(k, envelope("s1", 2), [message("u-1"), message(f"a-{n}")], f"l{n}", 1)
        for n in (2, 3)
    ]
    assert results == [True, False]
    row = store.load_sync(k)
    assert row is not None and row.cursor == 2 and row.last_snapshot == "l2"
    assert [m["id"] for m in row.messages] == ["u-1", "a-2"]
    assert not store.save_sync(k, envelope("s1", 9), [], "stale", 5)  # a stale cursor loses
    assert store.load_sync(k).last_snapshot == "l2"  # type: ignore[union-attr]


def test_two_instances_racing_on_one_cursor_have_exactly_one_winner(stores: Stores) -> None:
    first, second = stores(), stores()
    k = key("race")
    assert first.save_sync(k, envelope("race"), [], "start", None)
    barrier = threading.Barrier(8)
    wins: list[bool] = []

    def write(store: Store, n: int) -> None:
        barrier.wait()
        wins.append(store.save_sync(k, envelope("race", 2), [message(f"m{n}")], f"w{n}", 1))

    threads = [
        threading.Thread(target=write, args=(first if n % 2 else second, n)) for n in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(wins) == [False] * 7 + [True]
    row = second.load_sync(k)
    assert row is not None and row.cursor == 2
    assert row.last_snapshot == f"w{row.messages[0]['id'][1:]}"  # the winner's whole write


def test_concurrent_creates_of_one_session_store_it_once(stores: Stores) -> None:
    first, second = stores(), stores()
    barrier = threading.Barrier(6)
    wins: list[bool] = []

    def create(store: Store, n: int) -> None:
        barrier.wait()
        wins.append(store.save_sync(key("new"), envelope("new"), [message(f"m{n}")], "x", None))

    threads = [
        threading.Thread(target=create, args=(first if n % 2 else second, n)) for n in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(wins) == [False] * 5 + [True]
    assert stores.count() == 1


def test_invalid_writes_raise_and_store_nothing(stores: Stores) -> None:
    store = stores()
    with pytest.raises(ValueError):
        store.save_sync(key("s1"), {**envelope("s1"), "cursor": "1"}, [], "x", None)
    with pytest.raises(ValueError, match="another session"):
        store.save_sync(key("s1"), envelope("other"), [], "x", None)
    with pytest.raises(ProtocolError):
        store.save_sync(key("s1"), envelope("s1"), [{"id": "bad"}], "x", None)
    with pytest.raises(ValueError, match="holder"):
        store.save_sync(
            key("s1"), envelope("s1", 1, ("t1", 5)), [], "x", None,
            holder="h" * (LEASE_HOLDER_MAX_CHARS + 1),
        )  # fmt: skip
    assert stores.count() == 0
    assert store.save_sync(
        key("s1"), envelope("s1", 1, ("t1", 5)), [], "x", None, holder="h" * LEASE_HOLDER_MAX_CHARS
    )


def test_another_owner_does_not_see_the_row(stores: Stores) -> None:
    store = stores()
    store_one(store, "ip:a", "shared-id")
    assert store.load_sync(key("shared-id", owner="sub:alice")) is None
    alice = key("shared-id", owner="sub:alice")
    assert store.save_sync(alice, envelope("shared-id"), [], "a", None)
    assert stores.count() == 2


# --------------------------------------------------------------------------- the lease


def test_the_lease_is_stored_with_its_holder_and_seen_by_another_instance(stores: Stores) -> None:
    first, second = stores(), stores()
    k = key("leased")
    assert first.save_sync(
        k, envelope("leased", 1, ("t-1", 1_700_000_030_000)), [], "x", None, holder="instance-a"
    )
    row = second.load_sync(k)
    assert row is not None
    assert row.lease == TurnLease("t-1", "instance-a", 1_700_000_030_000)
    assert second.save_sync(k, envelope("leased", 2), [], "done", 1, holder="instance-b")
    row = first.load_sync(k)
    assert row is not None and row.lease is None and row.holder == ""


# --------------------------------------------------------------------------- TTL and caps


def test_a_session_exactly_ttl_old_is_still_there(stores: Stores) -> None:
    store = stores(ttl_seconds=100)
    store_one(store, "ip:a", "s1")
    stores.clock.now += 100
    assert present(store, "s1") == [True]
    stores.clock.now += 0.001
    assert present(store, "s1") == [False]


def test_one_client_evicts_only_its_own_oldest_sessions(stores: Stores) -> None:
    store = stores(max_sessions_per_client=3)
    for name in ("b1", "b2", "b3"):
        stores.clock.now += 1
        store_one(store, "ip:198.51.100.9", name)
    for name in ("a1", "a2", "a3"):  # at the cap
        stores.clock.now += 1
        store_one(store, "ip:203.0.113.7", name)
    assert present(store, "a1", "a2", "a3", "b1", "b2", "b3") == [True] * 6
    stores.clock.now += 1
    store_one(store, "ip:203.0.113.7", "a4")  # one past: its own oldest goes
    assert present(store, "a1", "a2", "a3", "a4") == [False, True, True, True]
    assert present(store, "b1", "b2", "b3") == [True] * 3


def test_a_create_that_finds_the_row_evicts_nothing(stores: Stores) -> None:
    store = stores(max_sessions_per_client=2)
    for client_key, name in (("ip:a", "a1"), ("ip:b", "b1"), ("ip:b", "b2")):
        stores.clock.now += 1
        store_one(store, client_key, name)
    stores.clock.now += 1
    # Client b, at its cap, names an id that client a stored: the create loses, and b's
    # oldest must not be evicted for a session that was never stored.
    assert not store.save_sync(key("a1", "ip:b"), envelope("a1"), [], "x", None)
    assert present(store, "a1", "b1", "b2") == [True, True, True]


def test_eviction_breaks_ties_of_age_by_session_id(stores: Stores) -> None:
    store = stores(max_sessions_per_client=2)
    for name in ("z", "m", "a"):  # same clock: of the two older ones, "m" goes first by id
        store_one(store, "ip:a", name)
    assert present(store, "a", "m", "z") == [True, False, True]


def test_expired_sessions_go_before_a_live_one_is_evicted(stores: Stores) -> None:
    store = stores(ttl_seconds=100, max_sessions_per_client=3)
    store_one(store, "ip:x", "old")
    stores.clock.now += 60
    store_one(store, "ip:x", "mid")
    stores.clock.now += 1
    store_one(store, "ip:x", "new")
    stores.clock.now += 40  # "old" is 101 s old: expired; the others are live
    assert present(store, "old", "mid", "new") == [False, True, True]
    store_one(store, "ip:x", "fourth")
    assert present(store, "mid", "new", "fourth") == [True, True, True]
    assert stores.count() == 3  # "old" was deleted, not evicted


def test_a_full_store_refuses_new_sessions_instead_of_evicting_others(stores: Stores) -> None:
    store = stores(max_sessions_per_client=2, max_sessions_total=4)
    for client_key, name in (("ip:a", "a1"), ("ip:a", "a2"), ("ip:b", "b1")):
        stores.clock.now += 1
        store_one(store, client_key, name)
    store_one(store, "ip:b", "b2")  # the 4th: at the total, accepted
    with pytest.raises(StoreFull):
        store_one(store, "ip:c", "c1")  # one past: refused, nobody evicted
    assert present(store, "a1", "a2", "b1", "b2", "c1") == [True] * 4 + [False]
    stores.clock.now += 1
    store_one(store, "ip:a", "a3")  # a client at its own cap replaces its own oldest
    assert present(store, "a1", "a2", "a3", "b1", "b2") == [False, True, True, True, True]


def test_expired_sessions_make_room_in_a_full_store(stores: Stores) -> None:
    store = stores(ttl_seconds=100, max_sessions_total=2)
    store_one(store, "ip:a", "a1")
    stores.clock.now += 30
    store_one(store, "ip:b", "b1")
    stores.clock.now += 10.5
    with pytest.raises(StoreFull) as full:
        store_one(store, "ip:c", "c1")
    # Retry-After tells the truth: "a1", the oldest, expires in 100 - 40.5 s.
    assert full.value.retry_after == 60
    stores.clock.now += 60
    store_one(store, "ip:c", "c1")  # "a1" expired: room for one
    assert present(store, "a1", "b1", "c1") == [False, True, True]
    stores.clock.now += 101
    stores.clock.now += 101  # both expired: deleted before the total is counted
    store_one(store, "ip:c", "c1")
    assert stores.count() == 1


def test_a_client_holds_at_most_its_share_of_the_store(stores: Stores) -> None:
    """Issue 36: five addresses filled the store (10,000 each of 50,000)."""
    store = stores()
    assert store.max_sessions_per_client == TURN_STORE_MAX_SESSIONS_PER_CLIENT == 100
    assert TURN_STORE_MAX_SESSIONS_TOTAL // store.max_sessions_per_client >= 500


def test_caps_hold_across_instances_creating_at_once(stores: Stores) -> None:
    """Four instances, one client, 24 new sessions at once: the client keeps exactly its cap."""
    instances = [stores(max_sessions_per_client=5) for _ in range(4)]
    barrier = threading.Barrier(len(instances))

    def create(store: Store, n: int) -> None:
        barrier.wait()
        for i in range(6):
            store_one(store, "ip:a", f"s{n}-{i}")

    threads = [threading.Thread(target=create, args=(s, n)) for n, s in enumerate(instances)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert stores.count() == 5


def test_store_bounds_must_be_positive(stores: Stores) -> None:
    for options in ({"max_sessions_total": 0}, {"max_sessions_per_client": 0}, {"ttl_seconds": 0}):
        with pytest.raises(ValueError):
            stores(**options)


@pytest.mark.parametrize("messages", ["not json", "[]", '{"version": 2}'])
def test_a_corrupt_stored_session_is_a_persistence_error(stores: Stores, messages: str) -> None:
    store = stores()
    store_one(store, "ip:a", "s1")
    stores.sql(f"UPDATE turn_sessions SET messages = '{messages}'")
    with pytest.raises(PersistenceError, match="corrupt"):
        store.load_sync(key("s1"))


@pytest.mark.asyncio
async def test_the_async_facade_is_the_same_store(stores: Stores) -> None:
    store = stores()
    k = key("async")
    assert await store.save(k, envelope("async", 1, ("t", 9)), [], "a", None, holder="me")
    row = await store.load(k)
    assert row is not None and row.lease == TurnLease("t", "me", 9)


# --------------------------------------------------------------------------- PostgreSQL only


def test_an_unreachable_postgresql_is_one_persistence_error_without_the_password() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(PersistenceError) as caught:
        PostgresTurnSessionStore(f"postgresql://u:secret@127.0.0.1:{port}/db")
    assert "secret" not in str(caught.value) and "u:***@127.0.0.1" in str(caught.value)
    assert time.monotonic() - started < 10


def test_a_server_that_goes_away_fails_reads_with_persistence_error(tmp_path: Path) -> None:
    from agentskit_web.bench.local_postgres import LocalPostgres

    server = LocalPostgres().start()
    try:
        store = PostgresTurnSessionStore(server.url)
        store_one(store, "ip:a", "s1")
        assert present(store, "s1") == [True]
        server.stop()
        with pytest.raises(PersistenceError):
            store.load_sync(key("s1"))
        store.close()
    finally:
        server.stop()


Factory = Callable[..., Store]
