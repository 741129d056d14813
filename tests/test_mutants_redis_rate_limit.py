"""The shared limiter's rules that `make mutate` showed no test guarding (issue 36 item 9).

All against a real redis-server on loopback: the constructor's limits, the asynchronous
path's local decisions (same key, cost and spend as the shared ones would use, same size and
refill, on the limiter's clock), the bound on calls waiting for Redis and its accounting,
the worker-thread bound, and the failure count once per retry period.

Redis is held still with `CLIENT PAUSE` rather than a delay, so the tests watch which
requests were decided before Redis answered (event order), never how long anything took.
"""

import asyncio
import threading

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from _redis_server import RedisServer
from agentskit_web.server.rate_limit import RateDecision
from agentskit_web.server.redis_rate_limit import (
    REDIS_MAX_PENDING_CALLS,
    REDIS_WORKER_THREADS,
    RedisRateLimiter,
    redis_client,
)

LIMITS_MESSAGE = r"^Rate limit needs capacity >= 1, refill > 0 and a namespace\.$"
WORKER_PREFIX = "agentskit-redis-limiter"
PAUSE_MILLISECONDS = 2_000
"""How long Redis stands still: far longer than the few loop steps the tests look at."""
PATIENT_SECONDS = 30.0
"""Socket timeout and call budget while Redis is paused: only the pending bound may decide."""


def test_the_smallest_limits_are_accepted(redis_server: RedisServer) -> None:
    limiter = RedisRateLimiter(redis_client(redis_server.url), "a", 1, 1e-9)
    assert limiter.take("k") == RateDecision(True)
    assert limiter.take("k").allowed is False


@pytest.mark.parametrize(
    ("capacity", "refill_per_second", "namespace"),
    [(0, 1.0, "ask"), (1, 0.0, "ask"), (1, 1.0, "")],
    ids=["capacity 0", "refill 0", "no namespace"],
)
def test_one_past_each_limit_is_refused_naming_the_limits(
    redis_server: RedisServer, capacity: int, refill_per_second: float, namespace: str
) -> None:
    with pytest.raises(ValueError, match=LIMITS_MESSAGE):
        RedisRateLimiter(redis_client(redis_server.url), namespace, capacity, refill_per_second)


def test_a_shared_refusal_through_take_async_carries_the_wait(redis_server: RedisServer) -> None:
    limiter = RedisRateLimiter(redis_client(redis_server.url), "ask", 1, 0.25)

    async def go() -> list[RateDecision]:
        return [await limiter.take_async("ip:192.0.2.5") for _ in range(2)]

    assert asyncio.run(go()) == [RateDecision(True), RateDecision(False, 4)]
    assert limiter.shared and limiter.failures == 0


def test_local_decisions_keep_each_clients_bucket_cost_spend_refill_and_clock(
    redis_server: RedisServer,
) -> None:
    """Redis down: the asynchronous calls decide on local buckets exactly as Redis would
    (3 tokens, one back every 4 s), on the limiter's clock; at the end of the retry period
    Redis is tried again, and failing again counts as a second failure."""
    clock = [0.0]
    limiter = RedisRateLimiter(
        redis_client(redis_server.url), "ask", 3, 0.25, retry_seconds=5.0, clock=lambda: clock[0]
    )
    redis_server.stop()

    async def go() -> list[RateDecision]:
        return [
            await limiter.take_async("a", 2.0),  # Redis fails: this one is decided locally
            await limiter.peek_async("a", 2.0),  # local for the period from here on
            await limiter.peek_async("b", 3.0),
            await limiter.take_async("a"),
            await limiter.take_async("a"),
            await limiter.take_async("b", 3.0),
        ]

    assert asyncio.run(go()) == [
        RateDecision(True),
        RateDecision(False, 4),
        RateDecision(True),
        RateDecision(True),
        RateDecision(False, 4),
        RateDecision(True),
    ]
    assert limiter.failures == 1 and not limiter.shared
    clock[0] = 4.0  # one token back in "a" (still inside the retry period)
    assert asyncio.run(limiter.take_async("a")) == RateDecision(True)
    clock[0] = 5.0  # the period is over to the tick: Redis is tried, fails, counted again
    assert limiter.shared
    assert asyncio.run(limiter.take_async("c")) == RateDecision(True)
    assert limiter.failures == 2 and not limiter.shared


def _workers() -> set[threading.Thread]:
    """The limiter worker threads alive now (any limiter's)."""
    return {thread for thread in threading.enumerate() if thread.name.startswith(WORKER_PREFIX)}


def test_calls_waiting_for_redis_are_bounded_and_counted_back(redis_server: RedisServer) -> None:
    """While Redis stands still, REDIS_MAX_PENDING_CALLS requests wait for it on
    REDIS_WORKER_THREADS threads; every later one is decided locally at once (one token
    each: `x` twice, then `y`). Once Redis answers, the count is back to zero, so a second
    burst is bounded at the same place."""
    patient = redis.Redis.from_url(
        redis_server.url,
        socket_timeout=PATIENT_SECONDS,
        socket_connect_timeout=PATIENT_SECONDS,
        retry=Retry(NoBackoff(), 0),
    )
    limiter = RedisRateLimiter(patient, "ask", 1, 0.001, call_budget=PATIENT_SECONDS)
    pauser = redis.Redis.from_url(redis_server.url)
    threads_before = _workers()

    async def burst(name: str) -> tuple[list[int], int, list[RateDecision]]:
        pauser.execute_command("CLIENT", "PAUSE", PAUSE_MILLISECONDS)
        keys = [f"ip:{name}-{i}" for i in range(REDIS_MAX_PENDING_CALLS)]
        keys += [f"{name}-x", f"{name}-x", f"{name}-y"]
        tasks = [asyncio.ensure_future(limiter.take_async(key)) for key in keys]
        for _ in range(3):
            await asyncio.sleep(0)
        early = [index for index, task in enumerate(tasks) if task.done()]
        workers = len(_workers() - threads_before)  # this limiter's
        return early, workers, list(await asyncio.gather(*tasks))

    for name in ("first", "second"):
        early, workers, decisions = asyncio.run(burst(name))
        local = list(range(REDIS_MAX_PENDING_CALLS, REDIS_MAX_PENDING_CALLS + 3))
        assert early == local
        assert workers == REDIS_WORKER_THREADS
        assert [decisions[i] for i in local] == [
            RateDecision(True),
            RateDecision(False, 1000),
            RateDecision(True),
        ]
        assert all(d == RateDecision(True) for d in decisions[:REDIS_MAX_PENDING_CALLS])
        assert limiter.shared and limiter.failures == 0
