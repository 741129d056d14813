"""Rate-limit buckets in Redis, shared by every instance (`--rate-limit redis://...`).

The same token bucket as `rate_limit.TokenBucketLimiter` (capacity, refill per
second, a question costs one token), but the bucket is a Redis hash updated by
one Lua script: read, refill, decide and spend happen atomically on the server,
so two instances taking from one client's bucket at the same moment cannot both
spend its last token. The script reads Redis's own clock (`TIME`), so instances
whose clocks differ still refill a bucket at the same rate.

A bucket expires when it would be full again: a full bucket carries no
information (a missing one reads as full), so Redis forgets idle clients by
itself and the key count stays bounded by the clients active in one refill period.

When Redis cannot be reached the limiter fails *open to local buckets*: each
instance decides with its own in-process `TokenBucketLimiter` of the same
settings (docs/deployment.md says why), and retries Redis after
`REDIS_RETRY_SECONDS`, so an outage costs at most one socket timeout per
instance per retry period, never one per request.

The endpoints call `take_async`/`peek_async` on the event loop: the Redis call
runs on one of `REDIS_WORKER_THREADS` threads and the request waits for it at
most `REDIS_CALL_BUDGET_SECONDS`; past that, that request is decided locally
and Redis counts as down for the retry period. So a slow Redis costs one
request at most the budget, and never blocks the loop (the synchronous call on
the loop held `/healthz` for 9.3 s with Redis 200 ms away; issue 36). We kept
redis-py's synchronous client in threads rather than `redis.asyncio`: its
connections belong to one event loop, and the limiter is built before the
loop runs and shared by every app and test that builds one. A call that
answers after its budget may have spent a token in Redis as well as the local
one: that request counts twice, once.
"""

import asyncio
import concurrent.futures
import math
import threading
import time
from collections.abc import Callable
from typing import Any, Final

import redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from .rate_limit import RateDecision, TokenBucketLimiter

REDIS_SOCKET_TIMEOUT_SECONDS: Final = 0.25
"""A limiter round trip on a LAN takes well under a millisecond; past this Redis counts as down."""
REDIS_RETRY_SECONDS: Final = 5.0
"""After a failure, decide locally this long before trying Redis again."""
REDIS_CALL_BUDGET_SECONDS: Final = 0.1
"""How long a request waits for the shared decision before deciding locally.

A hundred loopback or LAN round trips; well under the socket timeout, so a
slow Redis costs a question at most this, once per retry period."""
REDIS_WORKER_THREADS: Final = 4
"""Threads that run Redis calls for the event loop (per limiter)."""
REDIS_MAX_PENDING_CALLS: Final = 64
"""Calls waiting for or on a worker at most; past it a request is decided locally."""
REDIS_KEY_PREFIX: Final = "agentskit:rate"

# KEYS[1] bucket; ARGV: capacity, refill per second, cost, spend (1/0).
# Returns {allowed (1/0), retry-after whole seconds}.
_TAKE_SCRIPT: Final = """
local capacity = tonumber(ARGV[1])
local refill = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local spend = ARGV[4] == '1'
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
local tokens = tonumber(state[1])
local updated = tonumber(state[2])
if tokens == nil or updated == nil then
  tokens = capacity
  updated = now
end
local elapsed = now - updated
if elapsed < 0 then elapsed = 0 end
tokens = math.min(capacity, tokens + elapsed * refill)
if tokens >= cost then
  if spend then
    tokens = tokens - cost
    redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'updated', tostring(now))
    local full_in_ms = math.ceil((capacity - tokens) / refill * 1000)
    redis.call('PEXPIRE', KEYS[1], math.max(full_in_ms, 1))
  end
  return {1, 0}
end
local wait = math.ceil((cost - tokens) / refill)
if wait < 1 then wait = 1 end
return {0, wait}
"""


def redis_client(url: str) -> redis.Redis:
    """A client for `url` with the limiter's short timeouts (ValueError on a malformed URL).

    No retries (whatever the installed client's default): a failed call falls
    back to local buckets at once, and retrying with back-off would hold the
    event loop for seconds.
    """
    return redis.Redis.from_url(
        url,
        socket_timeout=REDIS_SOCKET_TIMEOUT_SECONDS,
        socket_connect_timeout=REDIS_SOCKET_TIMEOUT_SECONDS,
        retry=Retry(NoBackoff(), 0),
        health_check_interval=30,
    )


class RedisRateLimiter:
    """A `RateLimiter` whose buckets live in Redis under `agentskit:rate:<namespace>:<key>`."""

    def __init__(
        self,
        client: redis.Redis,
        namespace: str,
        capacity: int,
        refill_per_second: float,
        *,
        retry_seconds: float = REDIS_RETRY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        call_budget: float = REDIS_CALL_BUDGET_SECONDS,
    ) -> None:
        if capacity < 1 or refill_per_second <= 0 or not namespace:
            raise ValueError("Rate limit needs capacity >= 1, refill > 0 and a namespace.")
        self.capacity = capacity
        self.refill_per_second = refill_per_second
        self._client = client
        self._prefix = f"{REDIS_KEY_PREFIX}:{namespace}:"
        self._script = client.register_script(_TAKE_SCRIPT)
        self._fallback = TokenBucketLimiter(capacity, refill_per_second, clock=clock)
        self._retry_seconds = retry_seconds
        self._clock = clock
        self._down_until = -math.inf
        self._lock = threading.Lock()
        self._workers = concurrent.futures.ThreadPoolExecutor(
            REDIS_WORKER_THREADS, thread_name_prefix="agentskit-redis-limiter"
        )
        self._pending = 0
        self._budget = call_budget
        self.failures = 0
        """Redis errors and calls past their budget so far (each starts a local period)."""

    @property
    def shared(self) -> bool:
        """False while decisions are local because Redis failed recently."""
        return self._clock() >= self._down_until

    def take(self, key: str, cost: float = 1.0) -> RateDecision:
        """Blocking (up to the socket timeout): tools and tests; servers use `take_async`."""
        return self._decide(key, cost, spend=True)

    def peek(self, key: str, cost: float = 1.0) -> RateDecision:
        """Blocking, as `take`; servers use `peek_async`."""
        return self._decide(key, cost, spend=False)

    async def take_async(self, key: str, cost: float = 1.0) -> RateDecision:
        """`take` on a worker thread, waited for at most the call budget."""
        return await self._decide_async(key, cost, spend=True)

    async def peek_async(self, key: str, cost: float = 1.0) -> RateDecision:
        """`peek` on a worker thread, waited for at most the call budget."""
        return await self._decide_async(key, cost, spend=False)

    async def _decide_async(self, key: str, cost: float, *, spend: bool) -> RateDecision:
        if not self.shared:
            return self._local(key, cost, spend)
        with self._lock:
            if self._pending >= REDIS_MAX_PENDING_CALLS:
                return self._local(key, cost, spend)
            self._pending += 1
        call = self._workers.submit(self._call, key, cost, spend)
        call.add_done_callback(self._call_done)
        try:
            allowed, wait = await asyncio.wait_for(asyncio.wrap_future(call), self._budget)
        except (RedisError, TimeoutError):
            self._went_down()
            return self._local(key, cost, spend)
        return RateDecision(bool(allowed), int(wait))

    def _call_done(self, _call: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._pending -= 1

    def _call(self, key: str, cost: float, spend: bool) -> Any:
        return self._script(
            keys=[self._prefix + key],
            args=[self.capacity, repr(self.refill_per_second), repr(cost), int(spend)],
        )

    def _decide(self, key: str, cost: float, *, spend: bool) -> RateDecision:
        if not self.shared:
            return self._local(key, cost, spend)
        try:
            allowed, wait = self._call(key, cost, spend)
        except RedisError:
            self._went_down()
            return self._local(key, cost, spend)
        return RateDecision(bool(allowed), int(wait))

    def _went_down(self) -> None:
        """Decide locally for the retry period (counted once per period)."""
        with self._lock:
            if self._clock() >= self._down_until:
                self.failures += 1
            self._down_until = self._clock() + self._retry_seconds

    def _local(self, key: str, cost: float, spend: bool) -> RateDecision:
        if spend:
            return self._fallback.take(key, cost)
        return self._fallback.peek(key, cost)

    def ping(self) -> bool:
        """Does Redis answer now? (Readiness; never raises.)"""
        try:
            return bool(self._client.ping())
        except RedisError:
            return False
