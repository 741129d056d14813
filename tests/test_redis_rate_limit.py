"""The shared limiter against a real `redis-server` on loopback (started per test).

The same token-bucket contract as the in-process limiter, atomic under
concurrent takers on separate connections, Redis's clock for refills, keys that
expire when full, the fail-open-to-local behaviour when Redis goes away, and one
client's budget over three real backend processes sharing one Redis.
"""

import asyncio
import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from _ask_helpers import ask_body
from _backend_process import BackendProcess, write_backend_files
from _delay_proxy import DelayProxy
from _redis_server import RedisServer
from agentskit_web.server.ask_serve import AskServeConfig, build_app
from agentskit_web.server.rate_limit import TokenBucketLimiter
from agentskit_web.server.redis_rate_limit import (
    REDIS_CALL_BUDGET_SECONDS,
    REDIS_KEY_PREFIX,
    REDIS_RETRY_SECONDS,
    RedisRateLimiter,
    redis_client,
)


def _limiter(
    server: RedisServer, capacity: int, refill: float, **options: float
) -> RedisRateLimiter:
    return RedisRateLimiter(redis_client(server.url), "ask", capacity, refill, **options)


def test_a_bucket_allows_its_capacity_then_refuses_with_the_wait(redis_server: RedisServer) -> None:
    limiter = _limiter(redis_server, 3, 0.25)
    decisions = [limiter.take("ip:203.0.113.1") for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert decisions[-1].retry_after_seconds == math.ceil(1 / 0.25)
    assert limiter.take("ip:203.0.113.2").allowed  # another client has its own bucket
    assert limiter.shared and limiter.failures == 0


def test_peek_spends_nothing_and_matches_take(redis_server: RedisServer) -> None:
    limiter = _limiter(redis_server, 1, 0.1)
    assert limiter.peek("ip:198.51.100.4").allowed
    assert limiter.peek("ip:198.51.100.4").allowed
    assert limiter.take("ip:198.51.100.4").allowed
    refused = limiter.peek("ip:198.51.100.4")
    assert not refused.allowed and refused.retry_after_seconds == 10


def test_the_same_budget_as_the_in_process_limiter(redis_server: RedisServer) -> None:
    shared = _limiter(redis_server, 5, 0.001)
    local = TokenBucketLimiter(5, 0.001)
    for _ in range(8):
        assert shared.take("k").allowed == local.take("k").allowed


def test_concurrent_takers_on_separate_connections_never_overspend(
    redis_server: RedisServer,
) -> None:
    capacity = 20
    limiters = [_limiter(redis_server, capacity, 0.001) for _ in range(4)]
    allowed: list[bool] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def worker(limiter: RedisRateLimiter) -> None:
        start.wait()
        for _ in range(10):
            decision = limiter.take("ip:192.0.2.77").allowed
            with lock:
                allowed.append(decision)

    threads = [threading.Thread(target=worker, args=(limiters[i % 4],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(allowed) == 80 and allowed.count(True) == capacity


def test_refill_runs_on_the_redis_clock(redis_server: RedisServer) -> None:
    limiter = _limiter(redis_server, 1, 5.0)  # one token back every 0.2 s
    assert limiter.take("k").allowed
    assert not limiter.take("k").allowed
    time.sleep(0.3)
    assert limiter.take("k").allowed


def test_a_bucket_expires_when_it_would_be_full_again(redis_server: RedisServer) -> None:
    limiter = _limiter(redis_server, 4, 2.0)
    limiter.take("ip:203.0.113.9")
    client = redis.Redis.from_url(redis_server.url)
    ttl_ms = client.pttl(f"{REDIS_KEY_PREFIX}:ask:ip:203.0.113.9")
    assert 0 < ttl_ms <= 500  # one token short, refilled at 2/s
    time.sleep(0.6)
    assert client.exists(f"{REDIS_KEY_PREFIX}:ask:ip:203.0.113.9") == 0


def test_redis_unreachable_fails_open_to_local_buckets_then_recovers(
    redis_server: RedisServer,
) -> None:
    clock = [0.0]
    limiter = _limiter(redis_server, 2, 0.001, retry_seconds=5.0, clock=lambda: clock[0])
    assert limiter.take("c").allowed and limiter.ping()
    redis_server.stop()
    # Local buckets of the same size decide meanwhile: still throttled, never unlimited.
    decisions = [limiter.take("c").allowed for _ in range(3)]
    assert decisions == [True, True, False]
    assert limiter.failures == 1 and not limiter.shared and not limiter.ping()
    redis_server.start()
    clock[0] += 5.0  # the retry period is over: back to the shared bucket
    assert limiter.shared
    assert limiter.take("c").allowed  # a fresh Redis (nothing kept), capacity 2
    assert limiter.failures == 1


def test_readiness_reports_the_limiter_without_taking_the_instance_out(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    site_file, docs = write_backend_files(tmp_path)
    app = build_app(AskServeConfig(site=site_file, docs=docs, rate_limit=redis_server.url))

    async def ready() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.get("/readyz")

    up = asyncio.run(ready())
    assert up.status_code == 200 and up.json()["checks"]["limiter"] is True
    redis_server.stop()
    down = asyncio.run(ready())
    assert down.status_code == 200
    assert down.json()["checks"]["limiter"] is False and down.json()["degraded"] == ["limiter"]


def test_failed_authentications_are_shared_between_instances(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    from agentskit_web.server.rate_limit import AUTH_FAILURE_CAPACITY

    site_file, docs = write_backend_files(tmp_path)
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("reader s3cret-token-value-0123456789\n")
    config = AskServeConfig(
        site=site_file, docs=docs, auth="bearer", tokens_file=tokens, rate_limit=redis_server.url
    )
    apps = [build_app(config), build_app(config)]

    async def guess(app: object) -> int:
        transport = httpx.ASGITransport(app=app, client=("203.0.113.50", 1234))  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            reply = await client.post(
                "/api/ask", json=ask_body(), headers={"authorization": "Bearer wrong"}
            )
            return reply.status_code

    statuses = [asyncio.run(guess(apps[i % 2])) for i in range(AUTH_FAILURE_CAPACITY + 1)]
    assert statuses == [401] * AUTH_FAILURE_CAPACITY + [429]


def test_one_clients_budget_over_three_instances_equals_one_instance(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    capacity = 6
    requests = 15
    site_file, docs = write_backend_files(tmp_path)
    budget = ("--rate-capacity", str(capacity), "--rate-refill", "0.001", "--pace", "0")
    shared = ("--rate-limit", redis_server.url, *budget)
    # Three sharing Redis, and one with the in-process default as the baseline.
    *backends, alone = BackendProcess.start_many(site_file, docs, [shared, shared, shared, budget])
    try:
        with httpx.Client(timeout=30) as client:
            spread = [
                client.post(backends[i % 3].url, json=ask_body()).status_code
                for i in range(requests)
            ]
            single = [client.post(alone.url, json=ask_body()).status_code for _ in range(requests)]
    finally:
        for backend in (*backends, alone):
            backend.kill()
    assert set(spread) <= {200, 429} and set(single) <= {200, 429}
    assert single.count(200) == capacity
    assert abs(spread.count(200) - single.count(200)) <= 1
    # Every instance refused some: the budget is shared, not N times the budget.
    assert all(429 in spread[i::3] for i in range(3))


def test_a_first_start_on_a_taken_port_tries_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from agentskit_web.bench import local_redis

    real_free_port = local_redis._free_port
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        ports = iter([taken])
        monkeypatch.setattr(local_redis, "_free_port", lambda: next(ports, 0) or real_free_port())
        server = local_redis.LocalRedis(tmp_path)
        assert server.port == taken
        server.start()
        try:
            assert server.port != taken
            assert redis.Redis.from_url(server.url).ping()
        finally:
            server.stop()


def test_a_redis_that_never_answers_costs_one_timeout_per_retry_period() -> None:
    import socket

    from agentskit_web.server.redis_rate_limit import REDIS_SOCKET_TIMEOUT_SECONDS

    with socket.socket() as silent:  # accepts connections, never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        url = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"
        limiter = RedisRateLimiter(redis_client(url), "ask", 2, 0.001)
        started = time.monotonic()
        first = limiter.take("c")
        waited = time.monotonic() - started
        started = time.monotonic()
        rest = [limiter.take("c").allowed for _ in range(20)]
        local = time.monotonic() - started
    assert first.allowed and rest[:2] == [True, False] and not any(rest[2:])
    assert REDIS_SOCKET_TIMEOUT_SECONDS * 0.8 <= waited < REDIS_SOCKET_TIMEOUT_SECONDS * 4
    assert local < 0.1  # decided locally, no more waits
    assert limiter.failures == 1


@pytest.mark.parametrize("delay", [0.2, 2.0])
def test_a_slow_redis_never_holds_the_event_loop(
    tmp_path: Path, redis_server: RedisServer, delay: float
) -> None:
    """Issue 36: with Redis 200 ms away, 20 questions froze the instance (`/healthz` 9.3 s).

    A backend process whose Redis sits behind a proxy that delays its replies.
    A stream already running and `/healthz` go on while 20 questions arrive,
    first with Redis near (the baseline: the same load), then with Redis
    `delay` away: the slowest health check and the longest gap in the stream
    gain at most 100 ms, and every question is answered.
    """
    site_file, docs = write_backend_files(tmp_path)
    with DelayProxy(redis_server.port) as proxy:
        backend = BackendProcess(
            site_file,
            docs,
            *("--rate-limit", f"redis://127.0.0.1:{proxy.port}/0", "--rate-capacity", "100"),
            *("--max-streams-per-client", "64", "--pace", "0.1"),
        )
        try:
            near = asyncio.run(_burst(backend.root, proxy, 0.0))
            time.sleep(REDIS_RETRY_SECONDS)  # a near call past its budget on a loaded machine
            far = asyncio.run(_burst(backend.root, proxy, delay))
        finally:
            backend.kill()
        replies = proxy.replies
    assert near.statuses == far.statuses == [200] * 21
    # Medians, not maxima: on a shared machine the first samples of a burst can stall
    # for a third of a second with Redis near or far (seen at a load of 18 on 2 cores).
    # A limiter on the loop delays nearly every sample (at 0.2 s: 20 questions x 2 calls);
    # the single stall a 2 s Redis cost the old limiter is the next test's to catch.
    assert _quantile(far.health, 0.5) <= _quantile(near.health, 0.5) + 0.1, (near, far)
    assert _quantile(far.gaps, 0.5) <= _quantile(near.gaps, 0.5) + 0.1, (near, far)
    assert replies > 0  # Redis was asked


def _quantile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


# Redis this far away, and a client that would wait for it: without the budget a call
# takes the whole delay, so the bounds below leave a loaded machine half a second of
# headroom and still fail by half a second or more when the budget is not kept.
SLOW_REDIS_DELAYS = [1.0, 3.0]
PATIENT_SOCKET_TIMEOUT_SECONDS = 10.0
LOADED_MACHINE_HEADROOM_SECONDS = 0.4


@pytest.mark.parametrize("delay", SLOW_REDIS_DELAYS)
def test_a_slow_redis_call_is_decided_locally_within_its_budget(
    redis_server: RedisServer, delay: float
) -> None:
    """Each waiting request gets a local decision by the budget; the loop never stalls.

    The client's own socket timeout is long here, so only the limiter's budget can end
    the wait early (with the limiter's short socket timeout the test could not tell the
    budget from the timeout).
    """
    with DelayProxy(redis_server.port, delay) as proxy:
        patient_client = redis.Redis.from_url(
            f"redis://127.0.0.1:{proxy.port}/0",
            socket_timeout=PATIENT_SOCKET_TIMEOUT_SECONDS,
            socket_connect_timeout=PATIENT_SOCKET_TIMEOUT_SECONDS,
            retry=Retry(NoBackoff(), 0),
        )
        limiter = RedisRateLimiter(patient_client, "ask", 2, 0.001)

        async def go() -> tuple[list[float], float, list[bool]]:
            lags: list[float] = []
            done = False

            async def tick() -> None:
                while not done:
                    started = time.monotonic()
                    await asyncio.sleep(0.005)
                    lags.append(time.monotonic() - started - 0.005)

            ticker = asyncio.ensure_future(tick())

            async def timed() -> tuple[float, bool]:
                started = time.monotonic()
                decision = await limiter.take_async("c")
                return time.monotonic() - started, decision.allowed

            results = await asyncio.gather(*(timed() for _ in range(5)))
            done = True
            await ticker
            return [r[0] for r in results], max(lags), [r[1] for r in results]

        waits, lag, allowed = asyncio.run(go())
    assert max(waits) <= REDIS_CALL_BUDGET_SECONDS + LOADED_MACHINE_HEADROOM_SECONDS < delay
    # A call made on the loop would stall it for the whole delay.
    assert lag < LOADED_MACHINE_HEADROOM_SECONDS < delay
    assert allowed == [True, True, False, False, False]  # local buckets of the same size
    assert limiter.failures == 1 and not limiter.shared


@dataclass
class Burst:
    health: list[float]
    """Seconds each `/healthz` took while the questions ran."""
    gaps: list[float]
    """Seconds between the chunks of a stream that was running when they came."""
    statuses: list[int]


async def _burst(root: str, proxy: DelayProxy, delay: float) -> Burst:
    """A stream admitted with Redis near; then Redis `delay` away and 20 more questions."""
    proxy.delay = 0.0
    url = root + "/api/ask"
    async with httpx.AsyncClient(timeout=60) as client:
        gaps: list[float] = []

        async def stream() -> int:
            body = ask_body("How do I install the widget and configure the theme?")
            async with client.stream("POST", url, json=body) as reply:
                last = time.monotonic()
                async for _chunk in reply.aiter_raw():
                    now = time.monotonic()
                    gaps.append(now - last)
                    last = now
                return reply.status_code

        running = asyncio.ensure_future(stream())
        while not gaps:
            await asyncio.sleep(0.005)
        proxy.delay = delay
        questions = [asyncio.ensure_future(client.post(url, json=ask_body())) for _ in range(20)]
        health = []
        while not all(q.done() for q in questions):
            started = time.monotonic()
            assert (await client.get(root + "/healthz")).status_code == 200
            health.append(time.monotonic() - started)
            await asyncio.sleep(0.01)
        statuses = [await running] + [(await q).status_code for q in questions]
    assert len(gaps) >= 3  # the stream ran during the burst
    return Burst(health, gaps[1:], statuses)
