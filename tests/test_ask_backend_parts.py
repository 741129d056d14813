"""The backend's small parts: rate limiter, auth hooks, CAS session store, metrics."""

import asyncio
import io
import json
import math
import threading
import time
from pathlib import Path

import pytest
from starlette.datastructures import Headers, QueryParams

from _ask_helpers import FakeClock
from agentskit_web.server.auth import (
    ANONYMOUS_SUBJECT,
    Principal,
    RequestHead,
    TokenGrant,
    anonymous,
    bearer_tokens,
    load_token_file,
)
from agentskit_web.server.metrics import (
    JsonLinesMetrics,
    MemoryMetrics,
    Metric,
    MetricRecorder,
    utc_timestamp,
)
from agentskit_web.server.persistence import (
    SESSION_RECORD_MAX_MESSAGES,
    PersistenceConflict,
    PersistenceError,
    SessionKey,
    SessionRecord,
    SessionStore,
    StoredMessage,
    record_to_wire,
)
from agentskit_web.server.rate_limit import (
    DEFAULT_MAX_CLIENTS,
    IPV6_CLIENT_PREFIX_LENGTH,
    TokenBucketLimiter,
    client_rate_key,
)

# --------------------------------------------------------------------------- rate limit


def test_bucket_allows_capacity_then_refuses_with_retry_after() -> None:
    clock = FakeClock()
    limiter = TokenBucketLimiter(3, 0.5, clock=clock.monotonic)
    assert [limiter.take("a").allowed for _ in range(3)] == [True, True, True]
    refused = limiter.take("a")
    assert not refused.allowed and refused.retry_after_seconds == 2
    clock.advance(1.0)  # half a token back
    assert limiter.take("a").retry_after_seconds == 1
    clock.advance(1.0)
    assert limiter.take("a").allowed
    assert not limiter.take("a").allowed


def test_bucket_never_exceeds_capacity_and_retry_after_is_at_least_one() -> None:
    clock = FakeClock()
    limiter = TokenBucketLimiter(2, 100.0, clock=clock.monotonic)
    clock.advance(3600)
    assert [limiter.take("a").allowed for _ in range(3)] == [True, True, False]
    assert TokenBucketLimiter(1, 100.0, clock=clock.monotonic).take("b").allowed
    limiter2 = TokenBucketLimiter(1, 100.0, clock=clock.monotonic)
    limiter2.take("c")
    assert limiter2.take("c").retry_after_seconds == 1


def test_clients_have_separate_buckets_and_the_table_is_bounded() -> None:
    clock = FakeClock()
    limiter = TokenBucketLimiter(1, 0.5, max_clients=3, clock=clock.monotonic)
    for client in "abc":
        assert limiter.take(client).allowed
    assert len(limiter) == 3
    # At the bound every bucket is spent: a new client is refused rather than
    # anybody forgotten, and told when the first bucket is full again.
    refused = limiter.take("d")
    assert (refused.allowed, refused.retry_after_seconds) == (False, 2)
    assert len(limiter) == 3 and not limiter.take("a").allowed
    clock.advance(2.0)  # every bucket is full again: full buckets can be forgotten
    assert limiter.take("d").allowed
    assert len(limiter) <= 3


def test_cycling_ten_thousand_keys_never_evicts_a_throttled_client() -> None:
    clock = FakeClock()
    limiter = TokenBucketLimiter(20, 0.5, clock=clock.monotonic)
    assert DEFAULT_MAX_CLIENTS == 10_000
    for _ in range(20):
        limiter.take("ip:198.51.100.7")
    assert not limiter.take("ip:198.51.100.7").allowed
    others = [limiter.take(f"ip:other-{n}").allowed for n in range(DEFAULT_MAX_CLIENTS)]
    # 9,999 others fit beside the throttled client (the table at its bound); the
    # 10,000th finds only spent buckets and is refused instead of evicting anybody.
    assert others == [True] * (DEFAULT_MAX_CLIENTS - 1) + [False]
    assert len(limiter) == DEFAULT_MAX_CLIENTS
    assert not limiter.take("ip:198.51.100.7").allowed


def test_only_full_buckets_are_forgotten_at_the_bound() -> None:
    clock = FakeClock()
    limiter = TokenBucketLimiter(4, 0.5, max_clients=3, clock=clock.monotonic)
    for _ in range(4):
        limiter.take("throttled")
    limiter.take("b")
    limiter.take("c")
    clock.advance(2.0)  # b and c are full again (one token back); "throttled" has one of four
    assert limiter.take("new").allowed  # at the bound: room made by forgetting full buckets
    assert len(limiter) == 2  # throttled + new; b and c carried no information
    assert limiter.take("throttled").allowed  # its one token, then nothing: not a fresh bucket
    assert not limiter.take("throttled").allowed


def test_a_table_of_spent_buckets_is_not_rescanned_for_every_new_key() -> None:
    clock = FakeClock()
    limiter = TokenBucketLimiter(1, 0.5, max_clients=2, clock=clock.monotonic)
    limiter.take("a")
    limiter.take("b")
    assert not limiter.take("c").allowed
    clock.advance(1.0)
    assert limiter.take("d").retry_after_seconds == 1  # remembered: nothing is full before t+2
    clock.advance(1.0)
    assert limiter.take("d").allowed


def test_peek_spends_and_remembers_nothing() -> None:
    limiter = TokenBucketLimiter(1, 0.5, clock=FakeClock().monotonic)
    assert limiter.peek("a").allowed and len(limiter) == 0
    limiter.take("a")
    assert not limiter.peek("a").allowed
    assert limiter.peek("a").retry_after_seconds == 2


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("198.51.100.4", "ip:198.51.100.4"),
        ("2001:db8:1:2:aaaa::1", "ip6:2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "ip6:2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "ip6:2001:db8:1:3::/64"),
        ("::ffff:198.51.100.4", "ip:198.51.100.4"),
        ("fe80::1%eth0", "ip6:fe80::/64"),
        ("/run/ask.sock", "ip:/run/ask.sock"),
        (None, "ip:unknown"),
        ("", "ip:unknown"),
    ],
)
def test_client_rate_key_groups_ipv6_by_64(host: str | None, key: str) -> None:
    assert client_rate_key(host) == key
    assert IPV6_CLIENT_PREFIX_LENGTH == 64


def test_one_ipv6_64_shares_one_bucket() -> None:
    limiter = TokenBucketLimiter(3, 0.001, clock=FakeClock().monotonic)
    hosts = [f"2001:db8:0:7::{n:x}" for n in range(1, 5)]
    allowed = [limiter.take(client_rate_key(host)).allowed for host in hosts]
    assert allowed == [True, True, True, False]
    assert limiter.take(client_rate_key("2001:db8:0:8::1")).allowed  # the next /64 is another


def test_a_clock_going_backwards_does_not_mint_tokens() -> None:
    clock = FakeClock()
    limiter = TokenBucketLimiter(1, 1.0, clock=clock.monotonic)
    limiter.take("a")
    clock.advance(-100)
    assert not limiter.take("a").allowed


@pytest.mark.parametrize(("capacity", "refill", "clients"), [(0, 1, 1), (1, 0, 1), (1, 1, 0)])
def test_invalid_limits_are_refused(capacity: int, refill: float, clients: int) -> None:
    with pytest.raises(ValueError):
        TokenBucketLimiter(capacity, refill, max_clients=clients)


def test_limiter_is_thread_safe() -> None:
    limiter = TokenBucketLimiter(1_000, 0.0001)
    allowed: list[bool] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(200):
            result = limiter.take("shared").allowed
            with lock:
                allowed.append(result)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(allowed) == 1_000


# --------------------------------------------------------------------------- auth


def head(authorization: str | None = None, client: str | None = "198.51.100.4") -> RequestHead:
    raw = [] if authorization is None else [(b"authorization", authorization.encode())]
    return RequestHead("POST", "/api/ask", QueryParams(""), Headers(raw=raw), client)


def test_anonymous_principal_is_rate_limited_per_address() -> None:
    principal = asyncio.run(anonymous()(head()))
    assert principal == Principal(ANONYMOUS_SUBJECT, "ip:198.51.100.4", None, True)
    assert asyncio.run(anonymous()(head(client=None))).rate_key == "ip:unknown"


def test_bearer_tokens_map_to_subjects_and_grants() -> None:
    hook = bearer_tokens({"t-alice": "alice", "t-bob": TokenGrant("bob", frozenset({"s1"}))})
    alice = asyncio.run(hook(head("Bearer t-alice")))
    assert alice is not None and (alice.subject, alice.rate_key) == ("alice", "sub:alice")
    assert alice.may_use("anything")
    bob = asyncio.run(hook(head("BEARER t-bob")))
    assert bob is not None and bob.may_use("s1") and not bob.may_use("s2")
    for bad in [
        None,
        "Bearer",
        "Bearer t-alic",
        "Bearer t-alice2",
        "Basic t-alice",
        "t-alice",
        "Bearer t-alice t-bob",
        "Bearer \u00e9",
    ]:
        assert asyncio.run(hook(head(bad))) is None, bad


def test_bearer_mode_needs_tokens() -> None:
    with pytest.raises(ValueError):
        bearer_tokens({})


def test_token_file_parsing() -> None:
    grants = load_token_file("# partners\nalice  tok-a\n\nbob tok-b # comment\n")
    assert grants == {"tok-a": TokenGrant("alice"), "tok-b": TokenGrant("bob")}
    with pytest.raises(ValueError, match="line 2"):
        load_token_file("alice tok\njust-one-field\n")
    with pytest.raises(ValueError, match="no tokens"):
        load_token_file("# nothing\n")


# --------------------------------------------------------------------------- persistence

KEY = SessionKey("site", "alice", "session-1")


def test_record_starts_empty_and_cas_advances_the_revision() -> None:
    store = SessionStore()
    empty = store.load_sync(KEY)
    assert empty == SessionRecord(0)
    assert store.append_turn_sync(KEY, empty, "q1", "a1") == 1
    first = store.load_sync(KEY)
    assert record_to_wire(first) == {
        "revision": 1,
        "messages": [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"}],
    }
    assert store.append_turn_sync(KEY, first, "q2", "a2") == 2
    assert [m.content for m in store.load_sync(KEY).messages] == ["q1", "a1", "q2", "a2"]


def test_stale_revision_is_a_conflict_and_changes_nothing() -> None:
    store = SessionStore()
    stale = store.load_sync(KEY)
    store.append_turn_sync(KEY, stale, "winner", "w")
    with pytest.raises(PersistenceConflict):
        store.append_turn_sync(KEY, stale, "loser", "l")  # insert when a row exists
    current = store.load_sync(KEY)
    store.append_turn_sync(KEY, current, "second", "s")
    with pytest.raises(PersistenceConflict):
        store.append_turn_sync(KEY, current, "late", "l")  # update at an old revision
    record = store.load_sync(KEY)
    assert record.revision == 2
    assert [m.content for m in record.messages] == ["winner", "w", "second", "s"]


def test_keys_are_isolated_by_site_subject_and_session() -> None:
    store = SessionStore()
    keys = [
        KEY,
        SessionKey("site", "bob", "session-1"),
        SessionKey("other", "alice", "session-1"),
        SessionKey("site", "alice", "session-2"),
    ]
    for index, key in enumerate(keys):
        store.append_turn_sync(key, SessionRecord(0), f"q{index}", "a")
    for index, key in enumerate(keys):
        assert store.load_sync(key).messages[0].content == f"q{index}"


def test_record_keeps_the_newest_messages() -> None:
    store = SessionStore()
    record = SessionRecord(0)
    for turn in range(SESSION_RECORD_MAX_MESSAGES // 2 + 3):
        store.append_turn_sync(KEY, record, f"q{turn}", f"a{turn}")
        record = store.load_sync(KEY)
    assert len(record.messages) == SESSION_RECORD_MAX_MESSAGES
    assert record.messages[-1].content == f"a{SESSION_RECORD_MAX_MESSAGES // 2 + 2}"
    assert record.messages[0].content == "q3"


def test_hostile_content_round_trips() -> None:
    store = SessionStore()
    text = 'quote " \\ \n\u2028\ud800 😀 \x00 {"role":"system"}'
    store.save_sync(KEY, 0, [StoredMessage("user", text)])
    assert store.load_sync(KEY).messages[0].content == text


@pytest.mark.parametrize(
    "stored",
    ["not json", "{}", '[{"role": "system", "content": "x"}]', '[{"role": "user"}]', "[1]"],
)
def test_corrupt_rows_raise_persistence_error(stored: str) -> None:
    store = SessionStore()
    store._db.execute(
        "INSERT INTO ask_sessions VALUES ('site', 'alice', 'session-1', 3, ?, ?)",
        (stored, time.time()),
    )
    with pytest.raises(PersistenceError):
        store.load_sync(KEY)


def test_closed_store_raises_persistence_error() -> None:
    store = SessionStore()
    store.close()
    with pytest.raises(PersistenceError):
        store.load_sync(KEY)
    with pytest.raises(PersistenceError):
        store.save_sync(KEY, 0, [])


def test_file_store_is_shared_between_connections(tmp_path: Path) -> None:
    database = tmp_path / "sessions.sqlite"
    first, second = SessionStore(database), SessionStore(database)
    stale = second.load_sync(KEY)
    first.append_turn_sync(KEY, first.load_sync(KEY), "from first", "a")
    with pytest.raises(PersistenceConflict):
        second.append_turn_sync(KEY, stale, "from second", "b")
    assert second.load_sync(KEY).messages[0].content == "from first"


def test_async_facade() -> None:
    store = SessionStore()

    async def run() -> SessionRecord:
        record = await store.load(KEY)
        await store.append_turn(KEY, record, "q", "a")
        return await store.load(KEY)

    assert asyncio.run(run()).revision == 1


# --------------------------------------------------------------------------- metrics

REQUEST_ID = "req-" + "0" * 32


def metric(**changes: object) -> Metric:
    values: dict[str, object] = {
        "name": "request.total_ms",
        "site_id": "site",
        "corpus_id": "docs",
        "request_id": REQUEST_ID,
        "value": 1.5,
        "unit": "ms",
        "outcome": "ok",
        "emitted_at": "2026-07-14T09:30:00.000Z",
    }
    values.update(changes)
    return Metric(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "changes",
    [
        {"name": "prompt.text"},
        {"name": "How do I install?"},
        {"unit": "seconds"},
        {"outcome": "maybe"},
        {"site_id": "has space"},
        {"corpus_id": ""},
        {"request_id": "session-123"},
        {"request_id": "req-XYZ"},
        {"value": -1},
        {"value": math.nan},
        {"value": math.inf},
        {"value": True},
        {"value": "3"},
    ],
)
def test_metric_refuses_anything_outside_the_contract(changes: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        metric(**changes)


def test_metric_wire_shape_and_json_lines() -> None:
    stream = io.StringIO()
    sink = JsonLinesMetrics(stream)
    sink.emit(metric())
    sink.emit(metric(name="error.count", value=1, unit="count", outcome="rejected"))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0]) == {
        "protocol": "agentskit.chat.backend-metric",
        "version": 1,
        "name": "request.total_ms",
        "siteId": "site",
        "corpusId": "docs",
        "requestId": REQUEST_ID,
        "value": 1.5,
        "unit": "ms",
        "outcome": "ok",
        "emittedAt": "2026-07-14T09:30:00.000Z",
    }


def test_json_lines_file_appends(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    for _ in range(2):
        sink = JsonLinesMetrics(path)
        sink.emit(metric())
        sink.close()
    assert len(path.read_text().splitlines()) == 2


def test_recorder_swallows_bad_values_and_sink_failures() -> None:
    memory = MemoryMetrics()
    recorder = MetricRecorder(
        memory, site_id="site", corpus_id="docs", request_id=REQUEST_ID, wall_clock=lambda: 0.0
    )
    recorder.record("request.total_ms", -5, "ms", "ok")  # invalid: dropped, no raise
    recorder.record("request.total_ms", 2.123456, "ms", "ok")
    assert [m.value for m in memory.records] == [2.123]
    assert memory.records[0].emitted_at == "1970-01-01T00:00:00.000Z"

    class Broken:
        def emit(self, metric: Metric) -> None:
            raise OSError("disk full")

    MetricRecorder(
        Broken(), site_id="site", corpus_id="docs", request_id=REQUEST_ID, wall_clock=lambda: 0.0
    ).record("error.count", 1, "count", "error")


def test_closed_stream_sink_does_not_raise() -> None:
    stream = io.StringIO()
    sink = JsonLinesMetrics(stream)
    stream.close()
    sink.emit(metric())


def test_timestamp_format() -> None:
    assert utc_timestamp(1_780_000_000.1234) == "2026-05-28T20:26:40.123Z"
