"""Saved conversations are finite: a TTL, a per-subject cap with oldest-first eviction.

Real SQLite (in memory, and files for the upgrade and multi-connection cases);
a manual clock stands in for the wall clock.
"""

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from _ask_helpers import FakeClock
from agentskit_web.server.persistence import (
    SESSION_MAX_PER_SUBJECT,
    SESSION_TTL_SECONDS,
    PersistenceConflict,
    SessionKey,
    SessionStore,
    StoredMessage,
)

TURN = [StoredMessage("user", "q"), StoredMessage("assistant", "a")]


def key(session: str, subject: str = "anonymous", site: str = "site") -> SessionKey:
    return SessionKey(site, subject, session)


def store_with(clock: FakeClock, **options: Any) -> SessionStore:
    return SessionStore(clock=clock.wall, **options)


def test_defaults_are_thirty_days_and_ten_thousand_sessions() -> None:
    assert SESSION_TTL_SECONDS == 30 * 24 * 3600
    assert SESSION_MAX_PER_SUBJECT == 10_000
    store = SessionStore()
    assert (store.ttl_seconds, store.max_sessions_per_subject) == (
        SESSION_TTL_SECONDS,
        SESSION_MAX_PER_SUBJECT,
    )


def test_a_record_is_kept_for_its_ttl_and_gone_one_second_past_it() -> None:
    clock = FakeClock()
    store = store_with(clock)
    store.save_sync(key("s"), 0, TURN)
    clock.advance(SESSION_TTL_SECONDS)  # exactly the TTL since its last write: kept
    assert store.load_sync(key("s")).revision == 1
    clock.advance(1)
    assert store.load_sync(key("s")).revision == 0  # expired: a new, empty conversation
    assert store.count_sync("site", "anonymous") == 0
    assert store.save_sync(key("s"), 0, TURN) == 1  # and it can start again


def test_each_answer_restarts_the_ttl() -> None:
    clock = FakeClock()
    store = store_with(clock, ttl_seconds=100)
    store.save_sync(key("s"), 0, TURN)
    clock.advance(90)
    store.append_turn_sync(key("s"), store.load_sync(key("s")), "q2", "a2")
    clock.advance(90)
    assert store.load_sync(key("s")).revision == 2


def test_storing_a_new_session_purges_every_expired_one() -> None:
    clock = FakeClock()
    store = store_with(clock, ttl_seconds=100)
    for number in range(5):
        store.save_sync(key(f"old-{number}", subject=f"user-{number}"), 0, TURN)
    clock.advance(101)
    store.save_sync(key("new"), 0, TURN)
    assert sum(store.count_sync("site", f"user-{n}") for n in range(5)) == 0
    assert store.count_sync("site", "anonymous") == 1


def test_the_cap_keeps_that_many_sessions_and_evicts_the_oldest_past_it() -> None:
    clock = FakeClock()
    store = store_with(clock, max_sessions_per_subject=3)
    for name in ("a", "b", "c"):
        store.save_sync(key(name), 0, TURN)
        clock.advance(1)
    assert store.count_sync("site", "anonymous") == 3  # at the cap: nothing evicted
    store.append_turn_sync(key("a"), store.load_sync(key("a")), "q", "a")  # "a" written last now
    clock.advance(1)
    store.save_sync(key("d"), 0, TURN)  # one past the cap
    assert store.count_sync("site", "anonymous") == 3
    assert store.load_sync(key("b")).revision == 0  # written longest ago: evicted
    assert [store.load_sync(key(n)).revision for n in ("a", "c", "d")] == [2, 1, 1]


def test_the_cap_is_per_subject_and_site() -> None:
    clock = FakeClock()
    store = store_with(clock, max_sessions_per_subject=2)
    store.save_sync(key("mine", subject="alice"), 0, TURN)
    store.save_sync(key("other-site", site="docs-2"), 0, TURN)
    for number in range(10):  # an anonymous flood
        clock.advance(1)
        store.save_sync(key(f"flood-{number}"), 0, TURN)
    assert store.count_sync("site", "anonymous") == 2
    assert store.load_sync(key("mine", subject="alice")).revision == 1
    assert store.load_sync(key("other-site", site="docs-2")).revision == 1


def test_the_default_cap_at_and_one_past_ten_thousand() -> None:
    clock = FakeClock()
    store = store_with(clock)
    rows = [
        ("site", "anonymous", f"s-{n:05d}", 1, "[]", clock.wall() + n)
        for n in range(SESSION_MAX_PER_SUBJECT - 1)
    ]
    with store._db:
        store._db.executemany("INSERT INTO ask_sessions VALUES (?, ?, ?, ?, ?, ?)", rows)
    clock.advance(SESSION_MAX_PER_SUBJECT)
    store.save_sync(key("at-the-cap"), 0, TURN)
    assert store.count_sync("site", "anonymous") == SESSION_MAX_PER_SUBJECT
    assert store.load_sync(key("s-00000")).revision == 1
    clock.advance(1)
    store.save_sync(key("one-past"), 0, TURN)
    assert store.count_sync("site", "anonymous") == SESSION_MAX_PER_SUBJECT
    assert store.load_sync(key("s-00000")).revision == 0  # the oldest went
    assert store.load_sync(key("s-00001")).revision == 1
    assert store.load_sync(key("one-past")).revision == 1


def test_an_answer_whose_session_was_evicted_meanwhile_is_a_conflict() -> None:
    clock = FakeClock()
    store = store_with(clock, max_sessions_per_subject=1)
    store.save_sync(key("reading"), 0, TURN)
    record = store.load_sync(key("reading"))
    clock.advance(1)
    store.save_sync(key("newer"), 0, TURN)  # evicts "reading" while its answer is generated
    with pytest.raises(PersistenceConflict):
        store.append_turn_sync(key("reading"), record, "q2", "a2")
    assert store.load_sync(key("reading")).revision == 0


def test_bounds_hold_across_connections_to_one_file(tmp_path: Path) -> None:
    clock = FakeClock()
    database = tmp_path / "sessions.db"
    first = SessionStore(database, max_sessions_per_subject=2, clock=clock.wall)
    second = SessionStore(database, max_sessions_per_subject=2, clock=clock.wall)
    for number, store in enumerate([first, second, first, second]):
        clock.advance(1)
        store.save_sync(key(f"s-{number}"), 0, TURN)
    assert first.count_sync("site", "anonymous") == 2
    assert [second.load_sync(key(f"s-{n}")).revision for n in range(4)] == [0, 0, 1, 1]


def test_a_file_from_before_record_ages_is_upgraded_with_a_fresh_ttl(tmp_path: Path) -> None:
    database = tmp_path / "old.db"
    with sqlite3.connect(database) as old:
        old.execute(
            "CREATE TABLE ask_sessions (site_id TEXT NOT NULL, subject TEXT NOT NULL, "
            "session_id TEXT NOT NULL, revision INTEGER NOT NULL, messages TEXT NOT NULL, "
            "PRIMARY KEY (site_id, subject, session_id)) WITHOUT ROWID"
        )
        old.execute(
            "INSERT INTO ask_sessions VALUES ('site', 'anonymous', 'kept', 4, "
            '\'[{"role": "user", "content": "q"}]\')'
        )
    old.close()
    clock = FakeClock()
    store = SessionStore(database, ttl_seconds=100, clock=clock.wall)
    assert store.load_sync(key("kept")).revision == 4
    clock.advance(101)
    assert store.load_sync(key("kept")).revision == 0


@pytest.mark.parametrize(("ttl", "cap"), [(0, 1), (-1, 1), (1, 0)])
def test_invalid_bounds_are_refused(ttl: float, cap: int) -> None:
    with pytest.raises(ValueError):
        SessionStore(ttl_seconds=ttl, max_sessions_per_subject=cap)


def test_the_wall_clock_is_the_default() -> None:
    store = SessionStore(ttl_seconds=3600)
    store.save_sync(key("now"), 0, TURN)
    (stored,) = store._db.execute("SELECT updated_at FROM ask_sessions").fetchone()
    assert abs(stored - time.time()) < 60
