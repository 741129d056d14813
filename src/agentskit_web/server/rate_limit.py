"""Per-client token-bucket rate limiting (429 ASK_RATE_LIMITED with retry-after).

Each client key owns a bucket of `capacity` tokens refilled at
`refill_per_second`; a question costs one token. The table is bounded to
`max_clients` keys so a flood of distinct addresses cannot grow memory
without limit, and it forgets only buckets that are *full*: a full bucket
carries no information (a new bucket starts full too), while forgetting a
spent one would hand a throttled client a fresh allowance. When every
remembered bucket is still refilling, a new key is refused (with the wait
until the first one is full again) instead of evicting anybody.

`RateLimiter` is the port the endpoints use: this in-process limiter is the
default, and `redis_rate_limit.RedisRateLimiter` keeps the same buckets in
Redis so several instances share one budget per client.

`client_rate_key` turns a peer address into a key: IPv4 per address, IPv6
per /64 (one subscriber usually holds a whole /64, so per-address keys would
give them 2^64 buckets).
"""

import ipaddress
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

DEFAULT_CAPACITY: Final = 20
DEFAULT_REFILL_PER_SECOND: Final = 0.5
DEFAULT_MAX_CLIENTS: Final = 10_000
IPV6_CLIENT_PREFIX_LENGTH: Final = 64
"""IPv6 clients are keyed by their /64 network."""

AUTH_FAILURE_CAPACITY: Final = 10
"""Failed authentications an address may make in a burst before it is refused (429)."""
AUTH_FAILURE_REFILL_PER_SECOND: Final = 0.1
"""One more failed authentication allowed every 10 seconds after the burst."""


@dataclass(frozen=True, slots=True)
class RateDecision:
    """`allowed`, and when refused, whole seconds until one token is back (>= 1)."""

    allowed: bool
    retry_after_seconds: int = 0


class RateLimiter(Protocol):
    """Token buckets keyed by client: what the Ask and turn endpoints need of a limiter.

    Asynchronous, because the endpoints call it on the event loop and a shared
    limiter waits on the network: the Redis limiter called synchronously froze
    the instance when Redis was slow (issue 36: Redis 200 ms away, `/healthz`
    took 9.3 s). The in-process table answers at once.
    """

    async def take_async(self, key: str, cost: float = 1.0) -> RateDecision:
        """Spend `cost` tokens from `key`'s bucket if it has them."""
        ...

    async def peek_async(self, key: str, cost: float = 1.0) -> RateDecision:
        """Would a take allow `cost` now? Spends nothing."""
        ...

    def ping(self) -> bool:
        """Is the shared state reachable (readiness)? Always True in process."""
        ...


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


def client_rate_key(host: str | None) -> str:
    """The rate-limit key of a peer address: `ip:<IPv4>` or `ip6:<IPv6 /64 network>`.

    An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, what a dual-stack socket
    reports for an IPv4 peer) is keyed as that IPv4 address; an IPv6 zone id
    (`fe80::1%eth0`) drops out with the host bits, so a link-local peer is one client on
    every interface. Anything that is not an IP address (a Unix socket, no address at
    all) keeps its text.
    """
    if not host:
        return "ip:unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return f"ip:{host}"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return f"ip:{address.ipv4_mapped}"
        network = ipaddress.IPv6Network((address, IPV6_CLIENT_PREFIX_LENGTH), strict=False)
        return f"ip6:{network}"
    return f"ip:{address}"


class TokenBucketLimiter:
    """Thread-safe token buckets keyed by client; `clock` is monotonic seconds."""

    def __init__(
        self,
        capacity: int = DEFAULT_CAPACITY,
        refill_per_second: float = DEFAULT_REFILL_PER_SECOND,
        *,
        max_clients: int = DEFAULT_MAX_CLIENTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if capacity < 1 or refill_per_second <= 0 or max_clients < 1:
            raise ValueError("Rate limit needs capacity >= 1, refill > 0 and max_clients >= 1.")
        self.capacity = capacity
        self.refill_per_second = refill_per_second
        self.max_clients = max_clients
        self._clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._lock = threading.Lock()
        # While the table is full and nothing in it can be forgotten, new keys are
        # refused without rescanning until this time (the first bucket full again).
        self._no_room_until = -math.inf

    def take(self, key: str, cost: float = 1.0) -> RateDecision:
        """Spend `cost` tokens from `key`'s bucket if it has them."""
        return self._check(key, cost, spend=True)

    def peek(self, key: str, cost: float = 1.0) -> RateDecision:
        """Would `take` allow `cost` now? Spends nothing and remembers nothing new."""
        return self._check(key, cost, spend=False)

    async def take_async(self, key: str, cost: float = 1.0) -> RateDecision:
        """`take`, for the port (it never waits)."""
        return self.take(key, cost)

    async def peek_async(self, key: str, cost: float = 1.0) -> RateDecision:
        """`peek`, for the port (it never waits)."""
        return self.peek(key, cost)

    def _check(self, key: str, cost: float, *, spend: bool) -> RateDecision:
        now = self._clock()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                if not spend:
                    return self._decide(float(self.capacity), cost)
                if len(self._buckets) >= self.max_clients and not self._make_room(now):
                    wait = max(1, math.ceil(self._no_room_until - now))
                    return RateDecision(False, wait)
                bucket = _Bucket(tokens=float(self.capacity), updated=now)
                self._buckets[key] = bucket
            elif not spend:
                return self._decide(self._tokens_at(bucket, now), cost)
            else:
                self._buckets.move_to_end(key)
            bucket.tokens = self._tokens_at(bucket, now)
            bucket.updated = max(bucket.updated, now)
            decision = self._decide(bucket.tokens, cost)
            if decision.allowed:
                bucket.tokens -= cost
            return decision

    def _decide(self, tokens: float, cost: float) -> RateDecision:
        if tokens >= cost:
            return RateDecision(True)
        missing = cost - tokens
        return RateDecision(False, max(1, math.ceil(missing / self.refill_per_second)))

    def _tokens_at(self, bucket: _Bucket, now: float) -> float:
        # A clock going backwards mints nothing.
        elapsed = max(0.0, now - bucket.updated)
        return min(float(self.capacity), bucket.tokens + elapsed * self.refill_per_second)

    def _make_room(self, now: float) -> bool:
        """Forget every bucket that is full by now; False when none is.

        One sweep is O(table), but a sweep that frees nothing is not repeated
        before the first remembered bucket can be full, so a flood of new keys
        against a table of spent buckets costs O(1) each.
        """
        if now < self._no_room_until:
            return False
        soonest = math.inf
        for name in list(self._buckets):
            bucket = self._buckets[name]
            tokens = self._tokens_at(bucket, now)
            if tokens >= self.capacity:
                del self._buckets[name]
            else:
                soonest = min(soonest, (self.capacity - tokens) / self.refill_per_second)
        if len(self._buckets) < self.max_clients:
            return True
        self._no_room_until = now + soonest
        return False

    def ping(self) -> bool:
        """The table lives in this process: always reachable."""
        return True

    def __len__(self) -> int:
        return len(self._buckets)
